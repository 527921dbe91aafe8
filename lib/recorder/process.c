/*
 * process.c - the process table: every process image the run had (an exec
 * makes a new image of the same pid), from the launcher's guess or the
 * collector's PROCESS_START to its end, which is seen by waitpid (the
 * launcher's children), by a pidfd watch, or by /proc (the others, a rank
 * that torchrun forked). A pid the system reused is told apart by its
 * start time in /proc. Also the CPU and memory counters sampled from the
 * live processes, per rank when there are ranks.
 *
 * Ending a process drains its rings first (its PROCESS_START, an exec,
 * its PROCESS_EXIT may still be there), which may add images: so processes
 * are held by index across a drain.
 */
#include "lib/recorder/recorder_int.h"

#include "common/clock.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The live image of pid, or (alive_only 0) its latest: the one that started
 * last, which need not be the last added (a start drained late). */
struct rec_process *rec_process_find(struct recorder *r, uint32_t pid, int alive_only)
{
	struct rec_process *found = NULL;
	for (uint32_t i = r->nprocs; i-- > 0;) {
		struct rec_process *p = &r->procs[i];
		if (p->p.pid != pid || (alive_only && !p->alive))
			continue;
		if (alive_only)
			return p;
		if (!found || p->p.start_ns > found->p.start_ns)
			found = p;
	}
	return found;
}

/* The image of pid that started first after ts, NULL when none did. */
static struct rec_process *image_after(struct recorder *r, uint32_t pid, uint64_t ts)
{
	struct rec_process *found = NULL;
	for (uint32_t i = 0; i < r->nprocs; i++) {
		struct rec_process *p = &r->procs[i];
		if (p->p.pid == pid && p->p.start_ns > ts && (!found || p->p.start_ns < found->p.start_ns))
			found = p;
	}
	return found;
}

/* The identity an exec keeps (rank, job, variables), from image o to p. */
static void image_inherit(struct rec_process *p, const struct rec_process *o)
{
	p->rank_source = o->rank_source;
	p->rank = o->rank;
	p->local_rank = o->local_rank;
	p->world_size = o->world_size;
	p->backend = o->backend;
	p->job = o->job;
	for (unsigned i = 0; i < RING_VARS_MAX; i++)
		p->vars[i] = o->vars[i] ? xstrdup(o->vars[i]) : NULL;
	p->vars_own = o->vars_own;
}

static void exec_seen(struct recorder *r, uint32_t pid, uint64_t ts)
{
	if (r->nexecs == r->execs_cap) {
		r->execs_cap = r->execs_cap ? r->execs_cap * 2 : 8;
		r->execs = xrealloc(r->execs, r->execs_cap * sizeof(*r->execs));
	}
	r->execs[r->nexecs++] = (struct exec_end){pid, ts};
}

/* A descriptor that becomes readable when process pid ends (pidfd_open,
 * Linux 5.3), so that the end of a process the launcher does not reap (a
 * rank is torchrun's child, not gprof-dl's) is seen within a millisecond,
 * not at the next /proc scan: its end time, which says which rank of a job
 * ended first, and its status while it is still a zombie. -1 where the
 * kernel has none: the /proc scan then sees it. */
static int process_watch(uint32_t pid)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, (pid_t)pid, 0); /* close-on-exec by default */
	return fd >= 0 ? (int)fd : -1;
#else
	(void)pid;
	return -1;
#endif
}

/* What /proc/PID/stat says of the process pid names now: its state (field
 * 3), start time in clock ticks after boot (22) and, for a zombie, its exit
 * status in waitpid's form (52; -1 when not a zombie or not given). -1 when
 * there is no such process, -2 when it cannot be told (out of descriptors). */
static int proc_stat(uint32_t pid, char *state, uint64_t *start_ticks, long *wstatus)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -1 : -2;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	p += 2; /* fields from 3 (the state) on, separated by single spaces */
	*state = *p;
	*start_ticks = 0;
	*wstatus = -1;
	for (int field = 3; field < 52 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
		if (p && field + 1 == 22)
			*start_ticks = strtoull(p, NULL, 10);
	}
	if (p && (*state == 'Z' || *state == 'X')) {
		char *end;
		long code = strtol(p, &end, 10);
		if (end != p && code >= 0)
			*wstatus = code;
	}
	return 0;
}

/* Whether a process that started at start_ticks (after boot) started after
 * ts on the trace's clock: then it is not the one that wrote a record at
 * ts, but a later process given the same pid. */
static int started_after(uint64_t start_ticks, uint64_t ts)
{
	static long hz;
	struct timespec b, m;
	if (!hz)
		hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		return 0;
	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_MONOTONIC, &m);
	int64_t boot_minus_mono = ((int64_t)b.tv_sec - (int64_t)m.tv_sec) * 1000000000 +
				  ((int64_t)b.tv_nsec - (int64_t)m.tv_nsec);
	/* /proc's start time is cut down to a tick, so never later than the
	 * true start; the margin covers the two clocks' reading */
	uint64_t start_ns = start_ticks / (uint64_t)hz * 1000000000u +
			    start_ticks % (uint64_t)hz * (1000000000u / (uint64_t)hz);
	return (int64_t)start_ns > (int64_t)ts + boot_minus_mono + 1000000;
}

/* PIDFD_GET_INFO (Linux 6.15), as <linux/pidfd.h> declares it there (this
 * build's headers may be older): a pidfd opened while the process lived
 * says how it ended even after its parent reaped it, which /proc no longer
 * can. The first 64 bytes of struct pidfd_info (PIDFD_INFO_SIZE_VER0). */
struct rec_pidfd_info {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code; /* waitpid's form */
};
#define REC_PIDFD_GET_INFO _IOWR(0xFF, 11, struct rec_pidfd_info)
#define REC_PIDFD_INFO_EXIT (1ull << 3)

/* How the process behind pidfd ended, in waitpid's form, once it has been
 * reaped; -1 before, or where the kernel cannot say (before 6.15). */
static int pidfd_exit_status(int pidfd)
{
	struct rec_pidfd_info info;
	if (pidfd < 0)
		return -1;
	memset(&info, 0, sizeof(info));
	info.mask = REC_PIDFD_INFO_EXIT;
	if (ioctl(pidfd, REC_PIDFD_GET_INFO, &info) != 0 || !(info.mask & REC_PIDFD_INFO_EXIT))
		return -1;
	return info.exit_code >= 0 ? info.exit_code : -1;
}

/* A process's end from waitpid's status: the code, or 128 + N and signal
 * N (trace_process.exit_signal tells the two apart). */
static void process_set_status(struct trace_process *p, int status)
{
	if (WIFEXITED(status)) {
		p->exit_status = WEXITSTATUS(status);
		p->exit_signal = 0;
	} else if (WIFSIGNALED(status)) {
		p->exit_status = 128 + WTERMSIG(status);
		p->exit_signal = WTERMSIG(status);
	}
}

void rec_process_unwatch(struct rec_process *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
}

struct rec_process *rec_process_add(struct recorder *r, uint32_t pid, uint32_t ppid, uint64_t ts)
{
	if (r->nprocs == r->procs_cap) {
		r->procs_cap = r->procs_cap ? r->procs_cap * 2 : 16;
		r->procs = xrealloc(r->procs, r->procs_cap * sizeof(*r->procs));
	}
	struct rec_process *p = &r->procs[r->nprocs++];
	memset(p, 0, sizeof(*p));
	p->p.pid = pid;
	p->p.ppid = ppid;
	p->p.start_ns = ts;
	p->p.exit_status = TRACE_EXIT_UNKNOWN;
	p->p.rank = p->p.local_rank = p->p.world_size = -1;
	p->rank = p->local_rank = p->world_size = -1;
	p->exit_code = p->zombie_status = -1;
	p->root = -1;
	p->alive = 1;
	p->pidfd = process_watch(pid);
	/* Which process the pid names: the one that wrote at ts started before
	 * ts. One that started later took the pid of ours, which ended before
	 * the launcher learnt of it: neither its pidfd nor /proc is ours. */
	char state;
	long wstatus;
	int known = proc_stat(pid, &state, &p->start_ticks, &wstatus); /* -2: the next look decides */
	if (known == -1 || (known == 0 && started_after(p->start_ticks, ts))) {
		rec_process_unwatch(p);
		p->start_ticks = UINT64_MAX; /* the next look finds it gone */
	}
	r->procs_dirty = 1;
	return p;
}

void rec_process_started(struct recorder *r, const struct ring_process *x)
{
	struct rec_process *p = rec_process_find(r, x->pid, 1);
	uint32_t cmd = string_file_id(r, x->cmdline_str);
	if (!p) { /* the launcher's guess of one it reaped before this start was drained */
		struct rec_process *last = rec_process_find(r, x->pid, 0);
		if (last && !last->seen_start && last->p.end_ns && x->ts_ns <= last->p.end_ns)
			p = last;
	}
	if (p && !p->seen_start) { /* the launcher's own guess, now confirmed */
		p->p.ppid = x->ppid;
		if (cmd)
			p->p.cmdline_str = cmd;
		p->seen_start = 1;
		return;
	}
	struct rec_process *next = image_after(r, x->pid, x->ts_ns);
	if (next && next->seen_start) {
		/* An older image's start drained after its exec's: each image
		 * writes its start in a ring of its own (a fork child's, then the
		 * program it exec'd), and the launcher may drain them in either
		 * order. The older image ended at the exec, its threads with it. */
		uint64_t exec_ns = next->p.start_ns;
		int32_t n = (int32_t)(next - r->procs); /* rec_process_add() moves procs */
		p = rec_process_add(r, x->pid, x->ppid, x->ts_ns);
		rec_process_unwatch(p); /* the live image watches the pid */
		p->alive = 0;
		p->p.end_ns = exec_ns;
		p->p.cmdline_str = cmd;
		p->seen_start = 1;
		image_inherit(p, &r->procs[n]);
		exec_seen(r, x->pid, exec_ns);
		return;
	}
	if (p) { /* exec: the old image ends here, its threads with it */
		p->p.end_ns = x->ts_ns;
		p->alive = 0;
		rec_process_unwatch(p); /* the new image watches the pid */
		exec_seen(r, x->pid, x->ts_ns);
	}
	int32_t old = p ? (int32_t)(p - r->procs) : -1; /* rec_process_add() moves procs */
	p = rec_process_add(r, x->pid, x->ppid, x->ts_ns);
	p->p.cmdline_str = cmd;
	p->seen_start = 1;
	if (old >= 0) /* an exec keeps the process: its rank and variables */
		image_inherit(p, &r->procs[old]);
}

/* The live image of the process of image i once its slots are drained (an
 * exec drained there makes a new one), by index: draining may move procs.
 * -1 when none is alive. */
static int32_t process_drained(struct recorder *r, uint32_t i)
{
	uint32_t pid = r->procs[i].p.pid;
	rec_drain_pending(r);
	const struct rec_process *p = rec_process_find(r, pid, 1);
	return p ? (int32_t)(p - r->procs) : -1;
}

/* The process of image i is gone: what its slots still hold is drained
 * first (its PROCESS_START, its PROCESS_EXIT among it), then its threads
 * end. By index: draining may add images. Returns the image that ended
 * (the latest, after an exec drained here). */
uint32_t rec_process_ended(struct recorder *r, uint32_t i, uint64_t end_ns)
{
	int32_t live = process_drained(r, i);
	if (live >= 0)
		i = (uint32_t)live;
	uint32_t pid = r->procs[i].p.pid;
	struct rec_process *p = &r->procs[i];
	p->alive = 0;
	rec_process_unwatch(p);
	r->procs_dirty = 1;
	if (!p->p.end_ns)
		p->p.end_ns = end_ns;
	rec_finish_process_slots(r, pid, p->p.end_ns);
	return i;
}

/* The exit status of a process the launcher did not reap, once it is
 * gone: as /proc showed it as a zombie (or its pidfd, once reaped), else as
 * it reported it (exit, _exit, main's return), else it died without
 * exiting: killed, by a signal not known. */
static void process_unreaped_status(struct rec_process *p)
{
	if (p->reaped)
		return;
	p->p.exit_signal = 0;
	if (p->zombie_status >= 0)
		process_set_status(&p->p, p->zombie_status);
	else if (p->exit_reported)
		p->p.exit_status = p->exit_code >= 0 ? p->exit_code : TRACE_EXIT_UNKNOWN;
	else
		p->p.exit_status = TRACE_EXIT_KILLED;
}

void recorder_process_reaped(struct recorder *r, pid_t pid, int status, const struct rusage *usage)
{
	uint64_t now = clock_now_ns();
	if (usage)
		cpu_sampler_reaped(&r->cpu, usage);
	/* first what it wrote: its PROCESS_START, when the launcher was too
	 * busy to drain it while it ran */
	rec_drain_pending(r);
	struct rec_process *p = rec_process_find(r, (uint32_t)pid, 1);
	if (!p) { /* seen dead (a zombie) before it was reaped: the same process */
		p = rec_process_find(r, (uint32_t)pid, 0);
		if (p && p->reaped)
			p = NULL;
	}
	if (!p)
		p = rec_process_add(r, (uint32_t)pid, 0, now); /* never loaded the collector */
	p->reaped = 1;
	process_set_status(&p->p, status);
	r->procs_dirty = 1;
	if (p->alive)
		rec_process_ended(r, (uint32_t)(p - r->procs), now);
}

/* A process the launcher does not reap (its parent does) is dead once /proc
 * says so: gone, a zombie, or its pid names a process that started later
 * (start_ticks, when known, differs: the pid was reused). A zombie's exit
 * status goes to *status in waitpid's form; -1 otherwise. */
static int process_is_dead(uint32_t pid, uint64_t start_ticks, int32_t *status)
{
	char state;
	uint64_t ticks;
	long code;
	*status = -1;
	int known = proc_stat(pid, &state, &ticks, &code);
	if (known == -2)
		return 0; /* cannot tell now (out of descriptors): the next look will */
	if (known != 0 || (start_ticks && ticks != start_ticks))
		return 1;
	if (state != 'Z' && state != 'X')
		return 0;
	if (code >= 0 && code <= INT32_MAX && (WIFEXITED((int)code) || WIFSIGNALED((int)code)))
		*status = (int32_t)code;
	return 1;
}

/* Process i, which the launcher does not reap, is gone or a zombie (whose
 * status, or -1): it ended at now, with the status it can be given: the
 * zombie's, else what its pidfd says once its parent reaped it (a rank
 * that a shell started and reaped at once: how it died is still known).
 * The status goes to the image that ended (an exec may be drained first). */
static void process_found_dead(struct recorder *r, uint32_t i, int32_t status, uint64_t now)
{
	if (status < 0)
		status = pidfd_exit_status(r->procs[i].pidfd);
	i = rec_process_ended(r, i, now);
	r->procs[i].zombie_status = status;
	process_unreaped_status(&r->procs[i]);
}

/* The processes whose watch (process_watch()) says they ended: ended now,
 * with the status a zombie shows. A readable pidfd is proof enough: by the
 * time /proc is read the zombie may be reaped and its pid taken. Indices,
 * not pointers: ending a process drains its rings, which may add
 * processes. */
void rec_check_watches(struct recorder *r, uint64_t now)
{
	size_t n = 0;
	for (uint32_t i = 0; i < r->nprocs; i++) {
		if (!r->procs[i].alive || r->procs[i].pidfd < 0)
			continue;
		if (n == r->watch_cap) {
			r->watch_cap = r->watch_cap ? 2 * r->watch_cap : 16;
			r->watch_fds = xrealloc(r->watch_fds, r->watch_cap * sizeof(*r->watch_fds));
			r->watch_procs = xrealloc(r->watch_procs, r->watch_cap * sizeof(*r->watch_procs));
		}
		r->watch_fds[n] = (struct pollfd){.fd = r->procs[i].pidfd, .events = POLLIN};
		r->watch_procs[n++] = i;
	}
	if (!n || poll(r->watch_fds, n, 0) <= 0)
		return;
	for (size_t k = 0; k < n; k++) {
		uint32_t i = r->watch_procs[k];
		int32_t status;
		if (!(r->watch_fds[k].revents & (POLLIN | POLLHUP)) || !r->procs[i].alive)
			continue;
		process_is_dead(r->procs[i].p.pid, r->procs[i].start_ticks, &status);
		process_found_dead(r, i, status, now);
	}
}

void rec_check_liveness(struct recorder *r, uint64_t now)
{
	for (uint32_t i = 0; i < r->nprocs; i++) {
		int32_t status;
		if (r->procs[i].alive && process_is_dead(r->procs[i].p.pid, r->procs[i].start_ticks, &status))
			process_found_dead(r, i, status, now);
	}
}

/* With ranks, each rank's processes get series of their own, under the
 * rank root's pid, so that a rank's file has its own CPU and memory: from
 * each live process's own CPU time (not its reaped children's, which its
 * own samples counted already) since the last sample. The root's series
 * then keep what the ranks leave of the whole (the launcher's share), so
 * that the series of one file still add up to the target's total; when
 * the root is itself a rank there is no such share. */
static void sample_rank_counters(struct recorder *r, uint64_t now, const struct cpu_sample *total)
{
	rec_resolve_ranks(r);
	uint32_t n = r->nprocs;
	uint64_t *ticks = xcalloc(n ? n : 1, sizeof(*ticks)), *rss = xcalloc(n ? n : 1, sizeof(*rss));
	for (uint32_t i = 0; i < n; i++) {
		const struct rec_process *p = &r->procs[i];
		uint64_t t, pages;
		if (!p->alive || cpu_sample_pid((pid_t)p->p.pid, &t, &pages) != 0)
			continue;
		uint64_t *prev = hmap_get(&r->pid_ticks, p->p.pid, p->p.start_ns);
		uint64_t d = prev && *prev <= t ? t - *prev : prev ? 0 : t;
		hmap_put(&r->pid_ticks, p->p.pid, p->p.start_ns, t);
		if (p->root >= 0) {
			ticks[p->root] += d;
			rss[p->root] += pages;
		}
	}
	double wall_s = r->rank_sampled ? (double)(now - r->rank_last_ts) / 1e9 : 0.0;
	double ranks_pct = 0.0, ranks_rss = 0.0;
	const struct rec_process *root = rec_process_find(r, (uint32_t)r->root, 0);
	for (uint32_t i = 0; i < n && wall_s > 0.0; i++) {
		if (r->procs[i].root != (int32_t)i)
			continue;
		double pct = (double)ticks[i] / (double)r->cpu.ticks_per_sec / wall_s * 100.0;
		double bytes = (double)rss[i] * (double)r->cpu.page_size;
		struct trace_counter c[2] = {
			{now, TRACE_CTR_CPU_PROCESS, r->procs[i].p.pid, pct},
			{now, TRACE_CTR_RSS_BYTES, r->procs[i].p.pid, bytes},
		};
		for (int k = 0; k < 2; k++)
			if (trace_writer_counter(r->w, &c[k]) != 0)
				write_failed(r);
		ranks_pct += pct;
		ranks_rss += bytes;
	}
	r->launcher_share = !root || root->root < 0;
	if (total) {
		r->launcher_pct = total->process_pct > ranks_pct ? total->process_pct - ranks_pct : 0.0;
		r->launcher_rss = (double)total->rss_bytes > ranks_rss ? (double)total->rss_bytes - ranks_rss : 0.0;
	}
	r->rank_sampled = 1;
	r->rank_last_ts = now;
	free(ticks);
	free(rss);
}

void rec_sample_counters(struct recorder *r, uint64_t now)
{
	pid_t pids[256];
	unsigned n = 0;
	for (uint32_t i = 0; i < r->nprocs && n < 256; i++)
		if (r->procs[i].alive)
			pids[n++] = (pid_t)r->procs[i].p.pid;
	struct cpu_sample s;
	int have = cpu_sampler_sample(&r->cpu, pids, n, now, &s);
	if (r->has_ranks || r->rank_sampled)
		sample_rank_counters(r, now, have ? &s : NULL);
	if (!have)
		return;
	struct trace_counter c[3] = {
		{now, TRACE_CTR_CPU_PROCESS, (uint32_t)r->root, s.process_pct},
		{now, TRACE_CTR_CPU_SYSTEM, 0, s.system_pct},
		{now, TRACE_CTR_RSS_BYTES, (uint32_t)r->root, (double)s.rss_bytes},
	};
	for (int i = 0; i < 3; i++) {
		if (i != 1 && r->rank_sampled && !r->launcher_share)
			continue; /* the ranks' series say it all */
		if (i == 0 && r->rank_sampled)
			c[i].value = r->launcher_pct;
		if (i == 2 && r->rank_sampled)
			c[i].value = r->launcher_rss;
		if (trace_writer_counter(r->w, &c[i]) != 0)
			write_failed(r);
	}
}
