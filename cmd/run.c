/*
 * run.c - gprof-dl run: launch a program under the collector and record.
 *
 * The launcher forks the target with the collector injected (LD_PRELOAD for
 * process and thread lifecycle, NVTX_INJECTION64_PATH for NVTX,
 * CUDA_INJECTION64_PATH for CUPTI's GPU activity), has every descendant's
 * end seen (it and its guard are subreapers of the process tree), drains
 * the rings while it runs, and exits with the target's status. It never touches
 * the target's standard streams.
 *
 * The target is forked before the output file is opened, so that -o's %p
 * can be its pid; it waits, before it executes anything, for the launcher
 * to hand it the rings' path (or to close the pipe: no trace, no run). It
 * inherits the rings' memfd itself too (made before the fork). Unless
 * --keep-target, it is started through a guard (guard.h) that ends the
 * command's whole tree if gprof-dl dies, and reaps the tree's processes
 * for gprof-dl. A
 * per-rank pattern (%p, %q{VAR}) has the collector report the variables it
 * uses (RING_VARS_ENV) and the recorder split the trace at the end.
 */
#include "cmd/cmd.h"
#include "formats/trace/trace.h"
#include "gpdl-config.h"
#include "lib/analysis/runend.h"
#include "formats/trace/capture.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/outfile.h"
#include "common/textsafe.h"
#include "lib/recorder/guard.h"
#include "lib/recorder/outname.h"
#include "lib/recorder/recorder.h"
#include "lib/recorder/split.h"
#include "lib/ring/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char run_usage[] =
	"usage: gprof-dl run [-o FILE] [--force] [options] -- CMD [ARGS...]\n"
	"\n"
	"    -o, --output FILE        write the trace to FILE (default: CMD-N.gpdl, never overwriting);\n"
	"                             %p pid, %h host, %q{VAR} environment variable, %n a number making\n"
	"                             the name new, %% a '%': with %p or %q{VAR}, one file per rank\n"
	"    -f, --force              overwrite FILE if it exists\n"
	"    -q, --quiet              no banner and no summary on stderr\n"
	"        --buffer-size SIZE   ring buffer per thread, e.g. 1M (default 1M; rounded up to a power of two)\n"
	"        --max-threads N      threads that can record at once (default 256)\n"
	"        --sample-interval MS CPU utilisation sampling period (default 100)\n"
	"        --keep-target        let the target run on if gprof-dl is killed (default: it is killed too)\n"
	"\n"
	"what to record in full detail (steps and Dataloader ranges are always recorded):\n"
	"        --steps A:B          only in steps A to B-1 (0-based; B may be left out;\n"
	"                             A-B: A to B, B included; A: step A only)\n"
	"        --delay SECONDS      only from SECONDS after the start\n"
	"        --duration SECONDS   only for SECONDS (after --delay)\n"
	"        --paused             only between gprof_dl.start() and gprof_dl.stop()\n"
	"        --capture-range=cudaProfilerApi  only between cudaProfilerStart and cudaProfilerStop\n"
	"        --capture-range=nvtx --nvtx-capture NAME[@DOMAIN]  only inside that NVTX range\n"
	"        --capture-range-end=stop|repeat  the first capture range only (default), or every one\n"
	"        --schedule wait=W,warmup=U,active=A[,repeat=R][,skip-first=S]\n"
	"                             only in the active steps of torch.profiler.schedule's cycles\n"
	"        --timer-only         steps, Dataloader and samples only, for ips at full speed\n"
	"        --record-shapes      record operators' input shapes\n"
	"        --profile-memory     record PyTorch's allocations and frees (Memory view)\n"
	"        --no-python          leave Python programs alone (no gprof_dl package)\n"
	"\n"
	"GPU activity (CUPTI, loaded when the program initialises CUDA):\n"
	"        --no-gpu             record no GPU activity (CUDA_INJECTION64_PATH is not set)\n"
	"        --cupti-lib PATH     the CUPTI library to load (default: libcupti.so.13, then .12)\n"
	"    -h, --help               show this help\n";

static volatile sig_atomic_t target_pid;

/* Signals a user sends to gprof-dl go on to the target. Signals from the
 * terminal (SI_KERNEL) already reached the whole foreground process group,
 * target included: forwarding those would deliver them twice. */
static void forward_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	int saved = errno;
	if (target_pid > 0 && info && info->si_code != SI_KERNEL)
		kill((pid_t)target_pid, sig);
	errno = saved;
}

static void wake(int sig)
{
	(void)sig;
}

static uint64_t parse_size(const char *s, const char *opt)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		usage_error("%s: '%s' is not a size", opt, s);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || v < 4096 || v > (1ull << 30))
		usage_error("%s: '%s' must be between 4K and 1G", opt, s);
	uint64_t p = 4096;
	while (p < v)
		p <<= 1;
	return p;
}

static unsigned long parse_count(const char *s, const char *opt, unsigned long lo, unsigned long hi)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		usage_error("%s: '%s' must be a number from %lu to %lu", opt, s, lo, hi);
	return v;
}

/* --delay/--duration: seconds, fractions allowed, as nanoseconds. */
static uint64_t parse_seconds(const char *s, const char *opt)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e7)
		usage_error("%s: '%s' is not a number of seconds", opt, s);
	return (uint64_t)(v * 1e9 + 0.5);
}

/* Long options without a short one. */
enum {
	OPT_CAPTURE_RANGE = 256,
	OPT_CAPTURE_END,
	OPT_NVTX_CAPTURE,
	OPT_SCHEDULE,
};

/* --schedule wait=W,warmup=U,active=A[,repeat=R][,skip-first=S], each key at
 * most once, as torch.profiler.schedule's arguments (repeat 0: until the
 * end); into "W,U,A,R,S" for GPROF_DL_SCHEDULE. */
static void parse_schedule(const char *spec, char *env, size_t envlen)
{
	static const char *const keys[] = {"wait", "warmup", "active", "repeat", "skip-first"};
	unsigned long long v[5] = {0};
	int seen[5] = {0};
	const char *s = spec;
	if (!*s)
		usage_error("--schedule: empty: give wait=W,warmup=U,active=A[,repeat=R][,skip-first=S]");
	while (*s) {
		const char *eq = strchr(s, '='), *comma = strchr(s, ',');
		if (!comma)
			comma = s + strlen(s);
		if (!eq || eq > comma)
			usage_error("--schedule: '%.*s' is not KEY=N", (int)(comma - s), s);
		size_t klen = (size_t)(eq - s);
		int k = -1;
		for (int i = 0; i < 5; i++)
			if (strlen(keys[i]) == klen && !strncmp(s, keys[i], klen))
				k = i;
		if (klen == 10 && !strncmp(s, "skip_first", 10))
			k = 4;
		if (k < 0)
			usage_error("--schedule: unknown key '%.*s' (wait, warmup, active, repeat, skip-first)",
				    (int)klen, s);
		if (seen[k])
			usage_error("--schedule: '%s' given twice", keys[k]);
		seen[k] = 1;
		const char *num = eq + 1;
		char *end;
		errno = 0;
		v[k] = strtoull(num, &end, 10);
		if (errno || end == num || end != comma || *num == '-' || *num == '+' || v[k] > 1000000000ull)
			usage_error("--schedule: %s='%.*s' is not a number from 0 to 1000000000", keys[k],
				    (int)(comma - num), num);
		s = *comma ? comma + 1 : comma;
		if (*comma && !*s)
			usage_error("--schedule: '%s' ends with a comma", spec);
	}
	if (!seen[2] || v[2] == 0)
		usage_error("--schedule: active must be at least 1 ('%s')", spec);
	snprintf(env, envlen, "%llu,%llu,%llu,%llu,%llu", v[0], v[1], v[2], v[3], v[4]);
}

/* The window options that go together, into the environment. */
static void check_window_options(const char *capture, const char *nvtx_capture, const char *capture_end,
				 int have_schedule, int gpu)
{
	if (capture && !strcmp(capture, "cudaProfilerApi") && !gpu)
		usage_error("--capture-range=cudaProfilerApi needs CUPTI's callbacks: not with --no-gpu%s",
			    GPDL_HAVE_CUPTI ? "" : " (this gprof-dl was built without CUPTI)");
	if (have_schedule && getenv("GPROF_DL_STEPS"))
		usage_error("--schedule and --steps: give one of them");
	if (nvtx_capture && (!capture || strcmp(capture, "nvtx") != 0))
		usage_error("--nvtx-capture needs --capture-range=nvtx");
	if (capture && !strcmp(capture, "nvtx") && !nvtx_capture)
		usage_error("--capture-range=nvtx needs --nvtx-capture NAME[@DOMAIN]");
	if (capture_end && !capture)
		usage_error("--capture-range-end needs --capture-range");
	if (capture) {
		setenv("GPROF_DL_CAPTURE", capture, 1);
		if (nvtx_capture)
			setenv("GPROF_DL_NVTX_CAPTURE", nvtx_capture, 1);
		if (capture_end)
			setenv("GPROF_DL_CAPTURE_END", capture_end, 1);
	}
}

/* CMD-N.gpdl for the first N not taken: a default name never overwrites. */
static char *default_output(const char *cmd)
{
	const char *base = strrchr(cmd, '/');
	base = base ? base + 1 : cmd;
	char *path = xmalloc(strlen(base) + 32);
	for (unsigned n = 1;; n++) {
		sprintf(path, "%s-%u.gpdl", base, n);
		if (access(path, F_OK) != 0)
			return path;
	}
}

static char *collector_path(void)
{
	const char *env = getenv("GPROF_DL_COLLECTOR");
	char *path;
	if (env && *env) {
		path = xstrdup(env);
	} else {
		const char *dir = gpdl_self_dir();
		path = xmalloc(strlen(dir) + strlen(GPDL_COLLECTOR_RELDIR) + strlen(GPDL_COLLECTOR_NAME) + 3);
		sprintf(path, "%s/%s/%s", dir, GPDL_COLLECTOR_RELDIR, GPDL_COLLECTOR_NAME);
	}
	char *real = realpath(path, NULL);
	if (!real)
		die_errno("cannot find the collector '%s'", path);
	free(path);
	return real;
}

/* The gprof_dl Python package beside the collector: <libdir>/gprof-dl/python
 * in the build tree and once installed. NULL when it was not built. */
static char *python_dir(const char *collector)
{
	const char *env = getenv("GPROF_DL_PYTHON_DIR");
	if (env && *env)
		return xstrdup(env);
	const char *slash = strrchr(collector, '/');
	size_t n = slash ? (size_t)(slash - collector) : 0;
	char *dir = xmalloc(n + 32);
	memcpy(dir, collector, n);
	strcpy(dir + n, "/gprof-dl/python");
	char *probe = xmalloc(strlen(dir) + 32);
	sprintf(probe, "%s/sitecustomize.py", dir);
	int ok = access(probe, R_OK) == 0;
	free(probe);
	if (!ok) {
		free(dir);
		return NULL;
	}
	return dir;
}

static void set_env_prepend(const char *name, const char *value)
{
	const char *old = getenv(name);
	if (!old || !*old) {
		setenv(name, value, 1);
		return;
	}
	char *v = xmalloc(strlen(value) + strlen(old) + 2);
	sprintf(v, "%s:%s", value, old);
	setenv(name, v, 1);
	free(v);
}

/* The child: wait for the launcher to hand over the rings' path, then
 * become CMD; nothing handed over (the trace could not be created): leave.
 * An exec failure is reported through err_fd (close-on-exec, so success
 * closes it). */
static void __attribute__((noreturn)) exec_target(char **argv, const char *collector, const char *pydir,
						  int gpu, int go_fd, int err_fd, int shm_fd)
{
	char shm[256];
	size_t n = 0;
	for (;;) {
		ssize_t k = read(go_fd, shm + n, sizeof(shm) - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(go_fd);
	if (!n)
		_exit(1);
	shm[n] = '\0';
	if (pydir)
		set_env_prepend("PYTHONPATH", pydir);
	set_env_prepend("LD_PRELOAD", collector);
	setenv("NVTX_INJECTION64_PATH", collector, 1);
	if (gpu)
		setenv("CUDA_INJECTION64_PATH", collector, 1);
	setenv(RING_ENV, shm, 1);
	/* inherited by the command, for its images that cannot open the path */
	char fdnum[16];
	snprintf(fdnum, sizeof(fdnum), "%d", shm_fd);
	if (fcntl(shm_fd, F_SETFD, 0) == 0)
		setenv(RING_FD_ENV, fdnum, 1);
	else
		unsetenv(RING_FD_ENV);
	execvp(argv[0], argv);
	int e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* What the command's process needs before it becomes the command. */
struct target_ctx {
	char **argv;
	const char *collector, *pydir;
	int gpu, go[2], err[2], shm_fd;
};

static void run_target(void *ctx)
{
	struct target_ctx *t = ctx;
	close(t->go[1]);
	close(t->err[0]);
	exec_target(t->argv, t->collector, t->pydir, t->gpu, t->go[0], t->err[1], t->shm_fd);
}

/* The status of the command's process pid, once it ended (the others that
 * end meanwhile are not recorded: nothing ran yet). */
static int wait_target(struct guard *g, pid_t pid)
{
	pid_t p;
	int status = 0;
	struct rusage ru;
	for (;;) {
		int k = guard_reaped(g, &p, &status, &ru, 100);
		if (k < 0)
			return W_EXITCODE(1, 0);
		if (k > 0 && p == pid && !WIFSTOPPED(status) && !WIFCONTINUED(status))
			return status;
	}
}

static int path_exists(const char *path, void *ctx)
{
	(void)ctx;
	return access(path, F_OK) == 0;
}

/* The recorded file: -o's pattern in gprof-dl's own environment, for the
 * root process pid. */
static const char *getenv_ctx(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

/* A copy of gprof-dl that mpirun or srun started (its own environment names
 * a rank of several) with an -o that is not per rank: every copy writes the
 * same name, and all but the first fail. Say so, and how to name each rank's
 * file, before the copies collide. */
static void warn_shared_output(const char *out, const struct outname *pattern)
{
	int32_t rank, local_rank, world_size;
	unsigned source = ring_rank_from_env(getenv_ctx, NULL, &rank, &local_rank, &world_size);
	const char *var = ring_rank_var(source);
	if (!out || !var || world_size < 2 || outname_per_rank(pattern))
		return;
	const char *dot = strrchr(out, '.');
	if (dot && strchr(dot, '/'))
		dot = NULL;
	int stem = dot ? (int)(dot - out) : (int)strlen(out);
	warning("this is rank %d of %d (%s): every rank writes '%s'; give each its own file with "
		"-o '%.*s-%%q{%s}%s'",
		rank, world_size, var, out, stem, out, var, dot ? dot : "");
}

/* The path components of path (split at '/'), for check_own_name(). */
static unsigned components(const char *path, const char **part, size_t *len, unsigned max)
{
	unsigned n = 0;
	for (const char *s = path; *s;) {
		const char *e = strchr(s, '/');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		if (n < max) {
			part[n] = s;
			len[n] = l;
		}
		n++;
		s += l;
		if (*s)
			s++;
	}
	return n;
}

/* -o's pattern in gprof-dl's own environment, which names the recorded
 * file: each %q{VAR} must hold a safe value (outname_check()), except that
 * a rank variable of a launcher (RANK, OMPI_COMM_WORLD_RANK, ...) may be
 * unset: gprof-dl then launches a job whose ranks name their own files, and
 * its own file takes "" for it, provided that leaves it the same path
 * components ('%q{RANK}/t.gpdl' would be '/t.gpdl'). A usage error else. */
static void check_own_name(const struct outname *o)
{
	const char *values[RING_VARS_MAX], *filled[RING_VARS_MAX];
	char err[512];
	for (unsigned i = 0; i < outname_nvars(o); i++) {
		values[i] = getenv(outname_var(o, i));
		filled[i] = values[i] ? values[i] : "x";
	}
	if (outname_check(o, values, ring_is_rank_var, err, sizeof(err)) != 0)
		usage_error("-o '%s': %s, in gprof-dl's environment (the rules: gprof-dl-run(1))",
			    outname_pattern(o), err);
	char *got = outname_expand(o, 1, "h", values, NULL, NULL);
	char *want = outname_expand(o, 1, "h", filled, NULL, NULL);
	const char *gp[64], *wp[64];
	size_t gl[64], wl[64];
	unsigned gn = components(got, gp, gl, 64), wn = components(want, wp, wl, 64), bad = gn != wn;
	for (unsigned i = 0; !bad && i < gn && i < 64; i++)
		bad = (!gl[i]) != (!wl[i]) || (gl[i] == 1 && gp[i][0] == '.') != (wl[i] == 1 && wp[i][0] == '.') ||
		      (gl[i] == 2 && !strncmp(gp[i], "..", 2)) != (wl[i] == 2 && !strncmp(wp[i], "..", 2));
	if (bad) {
		for (unsigned i = 0; i < outname_nvars(o); i++)
			if (!values[i])
				usage_error("-o '%s': %%q{%s} is unset in gprof-dl's environment, and its own file "
					    "would then be '%s' (the rules: gprof-dl-run(1))",
					    outname_pattern(o), outname_var(o, i), got);
	}
	free(got);
	free(want);
}

static char *output_path(const struct outname *o, pid_t pid)
{
	char host[256] = "";
	const char *values[RING_VARS_MAX];
	gethostname(host, sizeof(host) - 1);
	for (unsigned i = 0; i < outname_nvars(o); i++)
		values[i] = getenv(outname_var(o, i));
	char *path = outname_expand(o, (uint32_t)pid, host, values, path_exists, NULL);
	if (!*path) {
		free(path);
		path = xstrdup("gprof-dl.gpdl"); /* a pattern of unset variables only */
	}
	return path;
}

/* Whether the pattern has a %n (not a %%n). */
static int pattern_numbered(const struct outname *o)
{
	for (const char *p = outname_pattern(o); *p; p++)
		if (*p == '%' && *++p == 'n')
			return 1;
	return 0;
}

/* --schedule with -o naming %n: the recorded trace at path split into a
 * trace per cycle, each named by the pattern in turn (t-1.gpdl, t-2.gpdl,
 * ...; the whole one is removed). The first one's name in *first (path when
 * there was no cycle: the one trace stays). 0, or 1 after a message. */
static int split_cycles(const char *path, const struct outname *pattern, pid_t pid, int quiet, int force,
			char **first)
{
	char err[1024];
	struct capture c;
	capture_init(&c);
	*first = NULL;
	struct trace_reader *r = capture_read(&c, path, err, sizeof(err)) == 0
					 ? trace_reader_open(path, err, sizeof(err))
					 : NULL;
	if (!r || !c.nspans) {
		if (r)
			warning("--schedule: no active step was reached: one trace, '%s'", path);
		else
			error("%s", err);
		trace_reader_close(r);
		capture_free(&c);
		return r ? 0 : 1;
	}
	const struct trace_header *h = trace_reader_header(r);
	uint32_t n = (uint32_t)c.nspans;
	struct split_out *outs = xcalloc(n, sizeof(*outs));
	uint64_t *spans = xcalloc(2 * (size_t)n, sizeof(*spans));
	char **tmp = xcalloc(n, sizeof(*tmp));
	for (uint32_t i = 0; i < n; i++) {
		tmp[i] = xmalloc(strlen(path) + 32);
		sprintf(tmp[i], "%s.cycle%u.tmp", path, i);
		spans[2 * i] = c.spans[i].start;
		spans[2 * i + 1] = c.spans[i].end;
		outs[i].path = tmp[i];
		outs[i].h = *h;
		outs[i].h.start_ns = c.spans[i].start;
		outs[i].end_ns = c.spans[i].end != UINT64_MAX ? c.spans[i].end : h->end_ns;
	}
	int rc = split_by_time(path, outs, n, spans, err, sizeof(err));
	trace_reader_close(r);
	if (rc != 0) {
		error("%s", err);
	} else {
		unlink(path);
		for (uint32_t i = 0; i < n; i++) {
			char *name = output_path(pattern, pid);
			/* never over an existing file without --force (common/outfile.h) */
			if (outfile_install(tmp[i], name, force) != 0) {
				error("cannot rename '%s' to '%s': %s", tmp[i], name, strerror(errno));
				rc = -1;
			} else if (!quiet) {
				fprintf(stderr, "==%d== cycle %u (ProfilerCycle#%u): ", (int)pid, i, c.spans[i].n);
				text_fputs(name, stderr);
				fputc('\n', stderr);
			}
			if (!*first)
				*first = name;
			else
				free(name);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		free(tmp[i]);
	free(tmp);
	free(spans);
	free(outs);
	capture_free(&c);
	return rc != 0;
}

/* How a rank or the launcher ended, in the report's words: "exit N" (a
 * launcher that exits with 137 exited), "killed by signal N" only when a
 * signal killed it, "killed" when it died without exiting and the signal
 * is not known, "still running". */
static const char *exit_words(char *buf, size_t size, int32_t status, int32_t signal)
{
	if (signal > 0)
		snprintf(buf, size, "killed by signal %d", (int)signal);
	else if (status == TRACE_EXIT_KILLED)
		snprintf(buf, size, "killed");
	else if (status < 0)
		snprintf(buf, size, "still running");
	else
		snprintf(buf, size, "exit %d", (int)status);
	return buf;
}

/* The ranks' lines of the report, from the recorder's, then the launcher's
 * (the root process's, when it is no rank root) file; none for the
 * launcher when every process was a rank's:
 *
 *   ==4242== Rank 0 of 2: pid 4243, exit 0, t-0.gpdl
 *   ==4242== Rank 1 of 2: pid 4244, killed by signal 9, t-1.gpdl
 *   ==4242== Launcher: pid 4242, exit 137, t-.gpdl */
static void report_ranks(const struct recorder_stats *st, unsigned pid, pid_t root)
{
	char words[48], of[32], safe[TEXT_CLEAN_SIZE];
	int root_is_rank = 0;
	for (uint32_t i = 0; i < st->nranks; i++) {
		const struct recorder_rank *k = &st->ranks[i];
		of[0] = '\0';
		if (k->world_size > 0)
			snprintf(of, sizeof(of), " of %d", (int)k->world_size);
		fprintf(stderr, "==%u== Rank %d%s: pid %u, %s, %s\n", pid, (int)k->rank, of, k->pid,
			exit_words(words, sizeof(words), k->exit_status, k->exit_signal),
			text_clean(safe, sizeof(safe), k->path ? k->path : "?"));
		root_is_rank |= k->pid == (uint32_t)root;
	}
	if (st->launcher_path && !root_is_rank)
		fprintf(stderr, "==%u== Launcher: pid %u, %s, %s\n", pid, (unsigned)root,
			exit_words(words, sizeof(words), st->root_exit_status, st->root_exit_signal),
			text_clean(safe, sizeof(safe), st->launcher_path));
	fflush(stderr);
}

static int status_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static void install_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake; /* interrupts the poll sleep when a child ends */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
}

/* Drains until the root process has ended; every descendant that ends on
 * the way is reaped, by the guard or by gprof-dl (--keep-target). */
static int supervise(struct recorder *rec, pid_t root, struct guard *g)
{
	int root_status = -1;
	while (root_status < 0) {
		uint64_t drained = recorder_poll(rec);
		for (;;) {
			int status;
			struct rusage ru;
			pid_t p;
			int k = guard_reaped(g, &p, &status, &ru, 0);
			if (k < 0 && root_status < 0)
				root_status = W_EXITCODE(0, SIGKILL); /* none left, the root not told */
			if (k <= 0)
				break;
			if (WIFSTOPPED(status) || WIFCONTINUED(status))
				continue;
			recorder_process_reaped(rec, p, status, &ru);
			if (p == root)
				root_status = status;
		}
		/* A busy target fills a 1 MiB ring in about 2 ms: while records
		 * flow, poll again at once or soon; sleep longer only when idle. */
		if (root_status < 0 && drained < 64 * 1024) {
			struct timespec ts = {0, (drained ? 200 : 2000) * 1000};
			nanosleep(&ts, NULL);
		}
	}
	return root_status;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"force", no_argument, NULL, 'f'},
		{"quiet", no_argument, NULL, 'q'},
		{"buffer-size", required_argument, NULL, 'b'},
		{"max-threads", required_argument, NULL, 't'},
		{"sample-interval", required_argument, NULL, 's'},
		{"steps", required_argument, NULL, 'S'},
		{"delay", required_argument, NULL, 'D'},
		{"duration", required_argument, NULL, 'U'},
		{"paused", no_argument, NULL, 'P'},
		{"capture-range", required_argument, NULL, OPT_CAPTURE_RANGE},
		{"capture-range-end", required_argument, NULL, OPT_CAPTURE_END},
		{"nvtx-capture", required_argument, NULL, OPT_NVTX_CAPTURE},
		{"schedule", required_argument, NULL, OPT_SCHEDULE},
		{"timer-only", no_argument, NULL, 'T'},
		{"record-shapes", no_argument, NULL, 'R'},
		{"profile-memory", no_argument, NULL, 'M'},
		{"no-python", no_argument, NULL, 'N'},
		{"no-gpu", no_argument, NULL, 'G'},
		{"cupti-lib", required_argument, NULL, 'C'},
		{"keep-target", no_argument, NULL, 'K'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct recorder_opts ro = {
		.nslots = RING_DEFAULT_SLOTS,
		.ring_bytes = RING_DEFAULT_BYTES,
		.sample_interval_ns = 100 * 1000 * 1000ull,
	};
	const char *out = NULL;
	struct outname *pattern = NULL;
	char errbuf[512];
	int quiet = 0, c, no_python = 0, gpu = GPDL_HAVE_CUPTI, keep_target = 0, have_schedule = 0;
	const char *capture = NULL, *nvtx_capture = NULL, *capture_end = NULL;
	char envbuf[64];

	/* Only this run's options reach the target, not those of an outer run. */
	static const char *const window_env[] = {"GPROF_DL_STEPS", "GPROF_DL_DELAY_NS", "GPROF_DL_DURATION_NS",
						 "GPROF_DL_PAUSED", "GPROF_DL_TIMER_ONLY",
						 "GPROF_DL_RECORD_SHAPES", "GPROF_DL_NO_PYTHON", "GPROF_DL_NO_GPU",
						 "GPROF_DL_SCHEDULE", "GPROF_DL_CAPTURE", "GPROF_DL_NVTX_CAPTURE",
						 "GPROF_DL_CAPTURE_END",
						 "GPROF_DL_PROFILE_MEMORY"};
	for (size_t i = 0; i < sizeof(window_env) / sizeof(window_env[0]); i++)
		unsetenv(window_env[i]);

	opterr = 0;
	while ((c = cmd_getopt_long(argc, argv, "+o:fqh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			outname_free(pattern);
			if (!(pattern = outname_parse(out, errbuf, sizeof(errbuf))))
				usage_error("-o: %s", errbuf);
			break;
		case 'f': ro.force = 1; break;
		case 'q': quiet = 1; break;
		case 'b': ro.ring_bytes = parse_size(optarg, "--buffer-size"); break;
		case 't': ro.nslots = (uint32_t)parse_count(optarg, "--max-threads", 1, 65536); break;
		case 's':
			ro.sample_interval_ns = parse_count(optarg, "--sample-interval", 1, 3600000) * 1000000ull;
			break;
		case 'S': {
			unsigned long long a, b;
			cmd_parse_steps(optarg, &a, &b);
			snprintf(envbuf, sizeof(envbuf), b ? "%llu:%llu" : "%llu:", a, b);
			setenv("GPROF_DL_STEPS", envbuf, 1);
			break;
		}
		case 'D':
			snprintf(envbuf, sizeof(envbuf), "%llu",
				 (unsigned long long)parse_seconds(optarg, "--delay"));
			setenv("GPROF_DL_DELAY_NS", envbuf, 1);
			break;
		case 'U':
			snprintf(envbuf, sizeof(envbuf), "%llu",
				 (unsigned long long)parse_seconds(optarg, "--duration"));
			setenv("GPROF_DL_DURATION_NS", envbuf, 1);
			break;
		case 'P': setenv("GPROF_DL_PAUSED", "1", 1); break;
		case OPT_CAPTURE_RANGE:
			if (strcmp(optarg, "cudaProfilerApi") != 0 && strcmp(optarg, "nvtx") != 0)
				usage_error("--capture-range: '%s' is not cudaProfilerApi or nvtx", optarg);
			if (capture && strcmp(capture, optarg) != 0)
				usage_error("--capture-range: one capture range at a time ('%s' and '%s')", capture,
					    optarg);
			capture = optarg;
			break;
		case OPT_CAPTURE_END:
			if (strcmp(optarg, "stop") != 0 && strcmp(optarg, "repeat") != 0)
				usage_error("--capture-range-end: '%s' is not stop or repeat", optarg);
			capture_end = optarg;
			break;
		case OPT_NVTX_CAPTURE:
			if (!*optarg || *optarg == '@' || optarg[strlen(optarg) - 1] == '@')
				usage_error("--nvtx-capture: '%s' is not NAME[@DOMAIN]", optarg);
			nvtx_capture = optarg;
			break;
		case OPT_SCHEDULE:
			parse_schedule(optarg, envbuf, sizeof(envbuf));
			setenv("GPROF_DL_SCHEDULE", envbuf, 1);
			have_schedule = 1;
			break;
		case 'T': setenv("GPROF_DL_TIMER_ONLY", "1", 1); break;
		case 'R': setenv("GPROF_DL_RECORD_SHAPES", "1", 1); break;
		case 'M': setenv("GPROF_DL_PROFILE_MEMORY", "1", 1); break;
		case 'N': no_python = 1; setenv("GPROF_DL_NO_PYTHON", "1", 1); break;
		case 'G': gpu = 0; setenv("GPROF_DL_NO_GPU", "1", 1); break;
		case 'C':
			if (!*optarg)
				usage_error("--cupti-lib: empty path");
			setenv("GPROF_DL_CUPTI_PATH", optarg, 1);
			break;
		case 'K': keep_target = 1; break;
		case 'h': fputs(run_usage, stdout); return 0;
		default:
			if (optopt)
				usage_error("unknown option '-%c'", optopt);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	check_window_options(capture, nvtx_capture, capture_end, have_schedule, gpu);
	if (pattern)
		check_own_name(pattern);
	if (optind >= argc)
		usage_error("no command to run: gprof-dl run [options] -- CMD [ARGS...]");
	char **target = argv + optind;
	int target_argc = argc - optind;

	char *collector = collector_path();
	char *pydir = no_python ? NULL : python_dir(collector);
	/* One injection library per process: the driver loads only the one the
	 * variable names, so another tool's (nsys's, say) would take CUPTI. */
	const char *other = getenv("CUDA_INJECTION64_PATH");
	if (gpu && other && *other && strcmp(other, collector) != 0 && !quiet)
		warning("CUDA_INJECTION64_PATH was '%s': replaced by gprof-dl's collector (use --no-gpu to keep it)",
			other);
	/* The window's origin: the same for every process of the run. */
	snprintf(envbuf, sizeof(envbuf), "%llu", (unsigned long long)clock_now_ns());
	setenv("GPROF_DL_T0_NS", envbuf, 1);
	/* The variables the pattern names each rank's file by, reported by
	 * every process; an outer run's list is not this run's. */
	int per_rank = pattern && outname_per_rank(pattern);
	if (!quiet)
		warn_shared_output(out, pattern);
	if (per_rank && outname_nvars(pattern))
		setenv(RING_VARS_ENV, outname_var_list(pattern), 1);
	else
		unsetenv(RING_VARS_ENV);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		warning("cannot become the subreaper of the target's processes: %s", strerror(errno));

	int go[2], err[2];
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
		die_errno("cannot create a pipe");
	/* before the fork, so that the command inherits it */
	int shm_fd = recorder_shm_create();
	if (shm_fd < 0)
		die_errno("cannot create the shared memory for the collector");
	struct target_ctx tc = {target, collector, pydir, gpu, {go[0], go[1]}, {err[0], err[1]}, shm_fd};
	struct guard *guard = NULL;
	pid_t pid;
	if (keep_target) { /* gprof-dl's own child, left running if gprof-dl dies */
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			die_errno("cannot fork");
		if (pid == 0)
			run_target(&tc);
	} else if (!(guard = guard_start(run_target, &tc, &pid))) { /* ends the tree with gprof-dl */
		die_errno("cannot start the command");
	}
	close(go[0]);
	close(err[1]);

	char *path = pattern ? output_path(pattern, pid) : default_output(target[0]);
	ro.out_path = path;
	ro.pattern = per_rank ? pattern : NULL;
	ro.shm_fd = shm_fd;
	struct recorder *rec = recorder_create(&ro);
	if (!rec) {
		close(go[1]); /* the child leaves without running anything */
		close(err[0]);
		wait_target(guard, pid);
		guard_release(guard);
		free(path);
		free(collector);
		free(pydir);
		outname_free(pattern);
		return 1;
	}
	target_pid = pid;
	install_handlers();

	uint32_t sources = (GPDL_HAVE_NVTX ? TRACE_SRC_NVTX : 0) | (pydir ? TRACE_SRC_PYTHON : 0) |
			   (gpu ? TRACE_SRC_CUPTI : 0);
	if (recorder_begin(rec, pid, target_argc, target, sources) != 0)
		warning("cannot write the trace header to '%s': %s", path, strerror(errno));
	if (!quiet) {
		fprintf(stderr, "==%d== gprof-dl %s is profiling process %d, command:", (int)pid, GPDL_VERSION,
			(int)pid);
		for (int i = 0; i < target_argc; i++) {
			fputc(' ', stderr);
			text_fputs(target[i], stderr);
		}
		fputc('\n', stderr);
	}
	const char *shm = recorder_shm_env(rec);
	if (write(go[1], shm, strlen(shm)) != (ssize_t)strlen(shm))
		die_errno("cannot start the target");
	close(go[1]);

	int exec_errno = 0;
	ssize_t n;
	while ((n = read(err[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(err[0]);
	if (n == (ssize_t)sizeof(exec_errno)) {
		wait_target(guard, pid);
		guard_release(guard);
		recorder_abort(rec);
		error("cannot run '%s': %s", target[0],
		      exec_errno == ENOENT ? "command not found" : strerror(exec_errno));
		free(path);
		free(collector);
		free(pydir);
		outname_free(pattern);
		return exec_errno == ENOENT ? 127 : 126;
	}

	int status = supervise(rec, pid, guard);
	struct recorder_stats stats = {0};
	int rc = recorder_finish(rec, &stats);
	char *cycle_first = NULL;
	if (rc == 0 && have_schedule && pattern && !per_rank && pattern_numbered(pattern) &&
	    split_cycles(path, pattern, pid, quiet, ro.force, &cycle_first) != 0)
		rc = -1;
	if (!quiet) {
		if (WIFSIGNALED(status))
			fprintf(stderr, "==%d== target killed by signal %d (%s)\n", (int)pid, WTERMSIG(status),
				strsignal(WTERMSIG(status)));
		/* the tables of the lowest rank's file when each rank has its own */
		const char *shown = stats.launcher_path ? stats.launcher_path : cycle_first ? cycle_first : path;
		if (stats.nranks && stats.ranks[0].path && strcmp(stats.ranks[0].path, shown) != 0)
			shown = stats.ranks[0].path;
		/* a job's throughput is the job's, from the files of its ranks */
		char **job_files = xcalloc(stats.nranks ? stats.nranks : 1, sizeof(*job_files));
		size_t njob = 0;
		for (uint32_t i = 0; stats.nranks >= 2 && i < stats.nranks; i++) {
			const char *f = stats.ranks[i].path;
			int seen = !f;
			for (size_t k = 0; k < njob && !seen; k++)
				seen = !strcmp(job_files[k], f);
			if (!seen)
				job_files[njob++] = (char *)f;
		}
		runend_job_summary(shown, job_files, njob, stderr, (unsigned)pid);
		free(job_files);
		if (stats.no_slot_threads)
			fprintf(stderr,
				"==%d== Warning: %llu threads found every ring slot taken (--max-threads %u): "
				"their %llu events were dropped\n",
				(int)pid, (unsigned long long)stats.no_slot_threads, (unsigned)ro.nslots,
				(unsigned long long)stats.no_slot_events);
		if (stats.nranks)
			report_ranks(&stats, (unsigned)pid, pid);
	}
	recorder_destroy(rec);
	guard_release(guard); /* what the command left running runs on */
	free(cycle_first);
	free(path);
	free(collector);
	free(pydir);
	outname_free(pattern);
	if (rc != 0)
		return status_code(status) ? status_code(status) : 1;
	return status_code(status);
}
