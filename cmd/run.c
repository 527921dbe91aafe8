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
#include "lib/recorder/launch.h"
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

/* Long options without a short one. */
enum {
	OPT_CAPTURE_RANGE = 256,
	OPT_CAPTURE_END,
	OPT_NVTX_CAPTURE,
	OPT_SCHEDULE,
};

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

/* The ranks' lines of the end-of-run tables (runend_rank_lines()), from
 * the recorder's; the launcher's is the root process's. */
static void report_ranks(const struct recorder_stats *st, unsigned pid, pid_t root)
{
	struct runend_rank *k = xcalloc(st->nranks ? st->nranks : 1, sizeof(*k));
	for (uint32_t i = 0; i < st->nranks; i++)
		k[i] = (struct runend_rank){.rank = st->ranks[i].rank, .world_size = st->ranks[i].world_size,
					    .pid = st->ranks[i].pid, .exit_status = st->ranks[i].exit_status,
					    .exit_signal = st->ranks[i].exit_signal, .path = st->ranks[i].path};
	struct runend_rank l = {.pid = (unsigned)root, .exit_status = st->root_exit_status,
				.exit_signal = st->root_exit_signal, .path = st->launcher_path};
	runend_rank_lines(stderr, pid, k, st->nranks, st->launcher_path ? &l : NULL);
	free(k);
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

/* What the command line says: the recorder's options, the output pattern,
 * the command; the window options went into the environment already. */
struct run_args {
	struct recorder_opts ro;
	const char *out;
	struct outname *pattern;
	int quiet, no_python, gpu, keep_target, have_schedule;
	char **target;
	int target_argc;
};

/* The command started: the collector it runs with, the trace's path, the
 * command's process, its guard (NULL with --keep-target) and the recorder. */
struct run_state {
	char *collector, *pydir, *path;
	int per_rank;
	pid_t pid;
	struct guard *guard;
	struct recorder *rec;
};

/* Parses the options into a; 1 after --help (printed), 0 otherwise; a
 * usage error exits. */
static int run_parse(int argc, char **argv, struct run_args *a)
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
	struct recorder_opts *ro = &a->ro;
	*ro = (struct recorder_opts){
		.nslots = RING_DEFAULT_SLOTS,
		.ring_bytes = RING_DEFAULT_BYTES,
		.sample_interval_ns = 100 * 1000 * 1000ull,
	};
	a->gpu = GPDL_HAVE_CUPTI;
	char errbuf[512];
	int c;
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
			a->out = optarg;
			outname_free(a->pattern);
			if (!(a->pattern = outname_parse(a->out, errbuf, sizeof(errbuf))))
				usage_error("-o: %s", errbuf);
			break;
		case 'f': ro->force = 1; break;
		case 'q': a->quiet = 1; break;
		case 'b': ro->ring_bytes = cmd_parse_size(optarg, "--buffer-size"); break;
		case 't': ro->nslots = (uint32_t)cmd_parse_range(optarg, "--max-threads", 1, 65536); break;
		case 's':
			ro->sample_interval_ns = cmd_parse_range(optarg, "--sample-interval", 1, 3600000) * 1000000ull;
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
				 (unsigned long long)cmd_parse_seconds(optarg, "--delay"));
			setenv("GPROF_DL_DELAY_NS", envbuf, 1);
			break;
		case 'U':
			snprintf(envbuf, sizeof(envbuf), "%llu",
				 (unsigned long long)cmd_parse_seconds(optarg, "--duration"));
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
			cmd_parse_schedule(optarg, envbuf, sizeof(envbuf));
			setenv("GPROF_DL_SCHEDULE", envbuf, 1);
			a->have_schedule = 1;
			break;
		case 'T': setenv("GPROF_DL_TIMER_ONLY", "1", 1); break;
		case 'R': setenv("GPROF_DL_RECORD_SHAPES", "1", 1); break;
		case 'M': setenv("GPROF_DL_PROFILE_MEMORY", "1", 1); break;
		case 'N': a->no_python = 1; setenv("GPROF_DL_NO_PYTHON", "1", 1); break;
		case 'G': a->gpu = 0; setenv("GPROF_DL_NO_GPU", "1", 1); break;
		case 'C':
			if (!*optarg)
				usage_error("--cupti-lib: empty path");
			setenv("GPROF_DL_CUPTI_PATH", optarg, 1);
			break;
		case 'K': a->keep_target = 1; break;
		case 'h': fputs(run_usage, stdout); return 1;
		default:
			if (optopt)
				usage_error("unknown option '-%c'", optopt);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	check_window_options(capture, nvtx_capture, capture_end, a->have_schedule, a->gpu);
	if (a->pattern)
		check_own_name(a->pattern);
	if (optind >= argc)
		usage_error("no command to run: gprof-dl run [options] -- CMD [ARGS...]");
	a->target = argv + optind;
	a->target_argc = argc - optind;
	return 0;

}

/* Starts the command under the collector and the recorder on its rings:
 * 0, or the command's exit code when it could not start (the trace not
 * created: 1; no such command: 127; not runnable: 126). */
static int run_launch(struct run_args *a, struct run_state *l)
{
	char envbuf[64];
	l->collector = launch_collector_path(gpdl_self_dir());
	l->pydir = a->no_python ? NULL : launch_python_dir(l->collector);
	/* One injection library per process: the driver loads only the one the
	 * variable names, so another tool's (nsys's, say) would take CUPTI. */
	const char *other = getenv("CUDA_INJECTION64_PATH");
	if (a->gpu && other && *other && strcmp(other, l->collector) != 0 && !a->quiet)
		warning("CUDA_INJECTION64_PATH was '%s': replaced by gprof-dl's collector (use --no-gpu to keep it)",
			other);
	/* The window's origin: the same for every process of the run. */
	snprintf(envbuf, sizeof(envbuf), "%llu", (unsigned long long)clock_now_ns());
	setenv("GPROF_DL_T0_NS", envbuf, 1);
	/* The variables the pattern names each rank's file by, reported by
	 * every process; an outer run's list is not this run's. */
	l->per_rank = a->pattern && outname_per_rank(a->pattern);
	if (!a->quiet)
		warn_shared_output(a->out, a->pattern);
	if (l->per_rank && outname_nvars(a->pattern))
		setenv(RING_VARS_ENV, outname_var_list(a->pattern), 1);
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
	struct launch_ctx tc = {a->target, l->collector, l->pydir, a->gpu, {go[0], go[1]}, {err[0], err[1]},
				shm_fd};
	if (a->keep_target) { /* gprof-dl's own child, left running if gprof-dl dies */
		fflush(NULL);
		l->pid = fork();
		if (l->pid < 0)
			die_errno("cannot fork");
		if (l->pid == 0)
			launch_target(&tc);
	} else if (!(l->guard = guard_start(launch_target, &tc, &l->pid))) { /* ends the tree with gprof-dl */
		die_errno("cannot start the command");
	}
	close(go[0]);
	close(err[1]);

	l->path = a->pattern ? outname_path(a->pattern, (uint32_t)l->pid) : outname_default(a->target[0]);
	a->ro.out_path = l->path;
	a->ro.pattern = l->per_rank ? a->pattern : NULL;
	a->ro.shm_fd = shm_fd;
	l->rec = recorder_create(&a->ro);
	if (!l->rec) {
		close(go[1]); /* the child leaves without running anything */
		close(err[0]);
		launch_wait(l->guard, l->pid);
		guard_release(l->guard);
		return 1;
	}
	target_pid = l->pid;
	install_handlers();

	uint32_t sources = (GPDL_HAVE_NVTX ? TRACE_SRC_NVTX : 0) | (l->pydir ? TRACE_SRC_PYTHON : 0) |
			   (a->gpu ? TRACE_SRC_CUPTI : 0);
	if (recorder_begin(l->rec, l->pid, a->target_argc, a->target, sources) != 0)
		warning("cannot write the trace header to '%s': %s", l->path, strerror(errno));
	if (!a->quiet) {
		fprintf(stderr, "==%d== gprof-dl %s is profiling process %d, command:", (int)l->pid, GPDL_VERSION,
			(int)l->pid);
		for (int i = 0; i < a->target_argc; i++) {
			fputc(' ', stderr);
			text_fputs(a->target[i], stderr);
		}
		fputc('\n', stderr);
	}
	const char *shm = recorder_shm_env(l->rec);
	if (write(go[1], shm, strlen(shm)) != (ssize_t)strlen(shm))
		die_errno("cannot start the target");
	close(go[1]);

	int exec_errno = 0;
	ssize_t n;
	while ((n = read(err[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(err[0]);
	if (n == (ssize_t)sizeof(exec_errno)) {
		launch_wait(l->guard, l->pid);
		guard_release(l->guard);
		recorder_abort(l->rec);
		error("cannot run '%s': %s", a->target[0],
		      exec_errno == ENOENT ? "command not found" : strerror(exec_errno));
		return exec_errno == ENOENT ? 127 : 126;
	}
	return 0;
}

/* The files of a job's ranks, each once, for its throughput; none for one
 * process. */
static size_t job_files_of(const struct recorder_stats *stats, char **job_files)
{
	size_t njob = 0;
	for (uint32_t i = 0; stats->nranks >= 2 && i < stats->nranks; i++) {
		const char *f = stats->ranks[i].path;
		int seen = !f;
		for (size_t k = 0; k < njob && !seen; k++)
			seen = !strcmp(job_files[k], f);
		if (!seen)
			job_files[njob++] = (char *)f;
	}
	return njob;
}

/* Drains until the command ends, finishes the trace (a file per cycle with
 * --schedule and %n), prints the end-of-run tables: the command's exit
 * code, or 1 when the trace failed and the command did not. */
static int run_finish(const struct run_args *a, struct run_state *l)
{
	pid_t pid = l->pid;
	int status = launch_supervise(l->rec, pid, l->guard);
	struct recorder_stats stats = {0};
	int rc = recorder_finish(l->rec, &stats);
	char *cycle_first = NULL;
	if (rc == 0 && a->have_schedule && a->pattern && !l->per_rank && outname_numbered(a->pattern) &&
	    split_cycles(l->path, a->pattern, (uint32_t)pid, a->quiet, a->ro.force, &cycle_first) != 0)
		rc = -1;
	if (!a->quiet) {
		if (WIFSIGNALED(status))
			fprintf(stderr, "==%d== target killed by signal %d (%s)\n", (int)pid, WTERMSIG(status),
				strsignal(WTERMSIG(status)));
		/* the tables of the lowest rank's file when each rank has its own */
		const char *shown = stats.launcher_path ? stats.launcher_path : cycle_first ? cycle_first : l->path;
		if (stats.nranks && stats.ranks[0].path && strcmp(stats.ranks[0].path, shown) != 0)
			shown = stats.ranks[0].path;
		/* a job's throughput is the job's, from the files of its ranks */
		char **job_files = xcalloc(stats.nranks ? stats.nranks : 1, sizeof(*job_files));
		size_t njob = job_files_of(&stats, job_files);
		runend_job_summary(shown, job_files, njob, stderr, (unsigned)pid);
		free(job_files);
		if (stats.no_slot_threads)
			fprintf(stderr,
				"==%d== Warning: %llu threads found every ring slot taken (--max-threads %u): "
				"their %llu events were dropped\n",
				(int)pid, (unsigned long long)stats.no_slot_threads, (unsigned)a->ro.nslots,
				(unsigned long long)stats.no_slot_events);
		if (stats.spilled_bytes)
			fprintf(stderr,
				"==%d== Spilled: %.1f MB of records while the rings backed up (peak %.1f MB, "
				"%.1f MB through the file), converted in %.2f s\n",
				(int)pid, stats.spilled_bytes / 1e6, stats.spill_peak_bytes / 1e6,
				stats.spill_file_bytes / 1e6, stats.spill_convert_ns / 1e9);
		if (stats.nranks)
			report_ranks(&stats, (unsigned)pid, pid);
	}
	recorder_destroy(l->rec);
	guard_release(l->guard); /* what the command left running runs on */
	free(cycle_first);
	if (rc != 0)
		return status_code(status) ? status_code(status) : 1;
	return status_code(status);
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = {0};
	struct run_state l = {0};
	if (run_parse(argc, argv, &a) != 0)
		return 0;
	int rc = run_launch(&a, &l);
	if (rc == 0)
		rc = run_finish(&a, &l);
	free(l.path);
	free(l.collector);
	free(l.pydir);
	outname_free(a.pattern);
	return rc;
}
