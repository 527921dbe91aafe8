/*
 * process.c - a process's life as the collector sees it: attach, fork, exec,
 * exit.
 *
 *  - start: the constructor (or the first entry point to run, whichever comes
 *    first) maps the launcher's ring from GPROF_DL_SHM (or, where that path
 *    may no longer be opened, after a setuid, from the inherited descriptor
 *    GPROF_DL_SHM_FD names) and writes PROCESS_START
 *    (pid, ppid, command line) and the calling thread's THREAD_START. Without a
 *    valid ring the collector stays inert.
 *  - fork: the child's thread keeps its state (its cache: ids are global; its
 *    push stack, so that levels and pops match: the ranges on it stay the
 *    parent's, the child neither mirrors nor writes them), claims a slot of
 *    its own and writes PROCESS_START with its pid and parent.
 *  - exec: the new image loads the collector again and its constructor writes
 *    PROCESS_START again, same pid; the launcher ends the old image there.
 *  - exit: exit() and returning from main run the destructor, _exit and _Exit
 *    are interposed: CUPTI's pending activity (cupti.c), the calling thread's
 *    name and end, then PROCESS_EXIT, then its slot is released. PROCESS_EXIT's
 *    aux is the code given to exit, _exit or _Exit, or returned by main
 *    (__libc_start_main is interposed to wrap main: libc passes main's value
 *    to exit internally), flagged RING_EXIT_KNOWN; the launcher needs it for
 *    the processes it does not reap (a launcher's children). Threads still
 *    running are ended by the launcher when the process is gone.
 *  - rank: at the start, and in a fork child (whose environment may differ
 *    from its parent's start), PROCESS_RANK from the launchers' environment
 *    variables (ring_rank_from_env, and the job they name: ring_job_from_env)
 *    and PROCESS_VAR for the variables the output file name uses.
 */
#include "gpdl-config.h"
#include "lib/collector/collector-test.h"
#include "lib/collector/collector.h"
#include "lib/collector/cupti.h"
#include "lib/collector/sched.h"
#include "common/clock.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct collector coll;

static _Atomic int init_state; /* 0: not run, 1: running, 2: done */

/* Maps the ring behind fd: 0, or -1 when it is none this collector
 * understands. */
static int attach_fd(int fd, const char *what)
{
	struct stat st;
	void *p = MAP_FAILED;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(struct ring_shm))
		p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		coll_log("cannot map '%s': inert", what);
		return -1;
	}
	if (ring_shm_check(p, (size_t)st.st_size) != 0) {
		coll_log("'%s' is not a gprof-dl ring this collector understands: inert", what);
		munmap(p, (size_t)st.st_size);
		return -1;
	}
	coll.shm = p;
	coll.shm_len = (size_t)st.st_size;
	coll.shm_mapped = 1;
	return 0;
}

/* The launcher's memfd as this process inherited it (RING_FD_ENV), for an
 * image that may not open the launcher's /proc/<pid>/fd any more: one
 * exec'd after a setuid to another user. It is the run's only if its
 * header names the launcher the path names. The descriptor stays open,
 * for the images this one execs. */
static void attach_inherited(const char *path, int why)
{
	const char *v = getenv(RING_FD_ENV);
	char *end = NULL;
	unsigned long launcher = strncmp(path, "/proc/", 6) ? 0 : strtoul(path + 6, &end, 10);
	if (!v || !*v || !launcher || strncmp(end, "/fd/", 4) != 0) {
		coll_log("cannot open '%s' (errno %d): inert", path, why);
		return;
	}
	long fd = strtol(v, &end, 10);
	if (*end || fd < 0 || fd > INT32_MAX || attach_fd((int)fd, v) != 0)
		return;
	if (coll.shm->launcher_pid != launcher) {
		coll_log("descriptor %s is another run's ring: inert", v);
		munmap(coll.shm, coll.shm_len);
		coll.shm = NULL;
		return;
	}
	coll_log("'%s' cannot be opened (errno %d): attached through descriptor %s", path, why, v);
}

static void attach_from_env(void)
{
	const char *path = getenv(RING_ENV);
	if (!path || !*path) {
		coll_log("%s is not set: inert", RING_ENV);
		return;
	}
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		attach_inherited(path, errno);
		return;
	}
	attach_fd(fd, path);
	close(fd);
}

/* /proc/self/cmdline, arguments joined by single spaces. */
static void read_cmdline(void)
{
	char buf[RING_NAME_MAX + 2];
	size_t n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (n < sizeof(buf) - 1) {
			ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		close(fd);
	}
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	uint32_t flags = 0;
	n = coll_ascii_len(buf, &flags);
	memcpy(coll.cmdline, buf, n);
	coll.cmdline[n] = '\0';
	coll.cmdline_len = (uint32_t)n;
}

static const char *env_get(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

/* The rank and the job the launchers' variables give this process, if
 * any: one record, with the job alone (source 0) when there is no rank. */
static void write_env_rank(struct coll_thread *t)
{
	int32_t rank, local_rank, world_size;
	char job[RING_NAME_MAX + 1];
	unsigned source = ring_rank_from_env(env_get, NULL, &rank, &local_rank, &world_size);
	size_t job_len = ring_job_from_env(env_get, NULL, job, sizeof(job));
	if (!source && !job_len)
		return;
	struct ring_process_rank r = {
		.h = {RING_REC_PROCESS_RANK, sizeof(r), source},
		.pid = coll.pid,
		.rank = source ? rank : -1,
		.local_rank = source ? local_rank : -1,
		.world_size = source ? world_size : -1,
		.job_str = job_len ? coll_intern(t, job, (uint32_t)job_len) : 0,
	};
	coll_emit(t, &r);
}

/* The values of the variables `gprof-dl run -o` names its files by
 * (RING_VARS_ENV, "RANK,LOCAL_RANK"), one record each; forked: written by
 * a fork child at the fork (RING_VAR_FORKED). */
static void write_output_vars(struct coll_thread *t, int forked)
{
	const char *list = getenv(RING_VARS_ENV);
	_Alignas(8) unsigned char buf[sizeof(struct ring_process_var) + RING_NAME_MAX + 8];
	char name[256];
	for (uint32_t i = 0; list && *list && i < RING_VARS_MAX; i++) {
		const char *comma = strchr(list, ',');
		size_t n = comma ? (size_t)(comma - list) : strlen(list);
		const char *value = NULL;
		if (n < sizeof(name)) {
			memcpy(name, list, n);
			name[n] = '\0';
			value = getenv(name);
		}
		size_t len = value ? coll_cut_len(value, strlen(value)) : 0;
		struct ring_process_var *v = (struct ring_process_var *)buf;
		v->h.kind = RING_REC_PROCESS_VAR;
		v->h.size = (uint16_t)ring_rec_align(sizeof(*v) + len + 1);
		v->h.aux = i | (value ? RING_VAR_SET : 0) | (forked ? RING_VAR_FORKED : 0);
		v->pid = coll.pid;
		v->len = (uint32_t)len;
		memcpy(buf + sizeof(*v), value ? value : "", len);
		memset(buf + sizeof(*v) + len, 0, v->h.size - sizeof(*v) - len);
		coll_emit(t, v);
		list = comma ? comma + 1 : list + n;
	}
}

/* PROCESS_START, the process's rank and output variables, then the
 * thread's THREAD_START; forked: in a fork child, at the fork. */
static void process_started(struct coll_thread *t, int forked)
{
	if (!t->slot)
		return;
	coll_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	struct ring_process p = {
		.h = {RING_REC_PROCESS_START, sizeof(p), 0},
		.pid = coll.pid,
		.ppid = (uint32_t)getppid(),
		.cmdline_str = coll_intern(t, coll.cmdline, coll.cmdline_len),
	};
	p.ts_ns = coll_clock_now();
	coll_emit(t, &p);
	write_env_rank(t);
	write_output_vars(t, forked);
	coll_thread_started(t);
	atomic_signal_fence(memory_order_seq_cst);
	coll_busy = 0;
	coll_log("recording: pid %u, slot %p, cmdline '%s'", coll.pid, (void *)t->slot, coll.cmdline);
}

static void atfork_child(void)
{
	if (!coll.shm)
		return;
	int saved = errno;
	coll.pid = (uint32_t)getpid();
	coll_sched_forked(); /* its schedstat descriptor was the parent thread's */
	atomic_store(&coll.exited, 0);
	atomic_store(&coll.exit_code_known, 0);
	struct coll_thread *t = coll_tls;
	coll_busy = 1;
	if ((uintptr_t)t > 1)
		coll_thread_forked(t);
	else
		t = coll_thread_setup();
	coll_busy = 0;
	if (t)
		process_started(t, 1);
	errno = saved;
}

static void process_begin(void)
{
	static int atfork_done;
	coll.pid = (uint32_t)getpid();
	coll_window_init();
	read_cmdline();
	coll_thread_init();
	if (!atfork_done)
		atfork_done = pthread_atfork(NULL, NULL, atfork_child) == 0;
	coll_busy = 1;
	struct coll_thread *t = coll_thread_setup();
	coll_busy = 0;
	if (t) {
		process_started(t, 0);
		coll_window_describe(); /* a capture or schedule: the trace says which */
	}
}

/* The real functions are looked up at init, not when first needed: in a fork
 * child, dlsym could wait for a loader lock a thread of the parent held. */
typedef void (*exit_fn)(int);
static exit_fn real_exit, real__exit, real__Exit;

static void resolve_real(void)
{
	coll_resolve_pthread();
	if (!real_exit)
		real_exit = (exit_fn)dlsym(RTLD_NEXT, "exit");
	if (!real__exit)
		real__exit = (exit_fn)dlsym(RTLD_NEXT, "_exit");
	if (!real__Exit)
		real__Exit = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
}

void coll_init(void)
{
	if (atomic_load_explicit(&init_state, memory_order_acquire) == 2)
		return;
	int expect = 0;
	if (!atomic_compare_exchange_strong(&init_state, &expect, 1)) {
		if (coll_busy) /* a signal handler interrupted our own init */
			return;
		while (atomic_load_explicit(&init_state, memory_order_acquire) != 2)
			sched_yield();
		return;
	}
	int saved = errno;
	coll_busy = 1;
	const char *dbg = getenv("GPROF_DL_DEBUG");
	coll.debug = dbg && !strcmp(dbg, "1");
	resolve_real();
	coll_clock_init();
	attach_from_env();
	coll_busy = 0;
	if (coll.shm)
		process_begin();
	atomic_store_explicit(&init_state, 2, memory_order_release);
	errno = saved;
}

void coll_process_exit(void)
{
	if (!coll.shm || (uint32_t)getpid() != coll.pid)
		return; /* inert, or a vfork child: this memory is its parent's */
	int expect = 0;
	if (!atomic_compare_exchange_strong(&coll.exited, &expect, 1))
		return;
	int saved = errno;
#if GPDL_HAVE_CUPTI
	/* CUPTI's last buffers, converted here while this thread has its slot. */
	coll_cupti_flush();
#endif
	struct coll_thread *t = coll_tls;
	if ((uintptr_t)t <= 1 && !coll_busy) {
		coll_busy = 1;
		t = coll_thread_setup();
		if (t)
			coll_thread_started(t);
		coll_busy = 0;
	}
	if ((uintptr_t)t > 1) {
		struct ring_process p = {
			.h = {RING_REC_PROCESS_EXIT, sizeof(p),
			      atomic_load(&coll.exit_code_known)
				      ? ((uint32_t)coll.exit_code & 0xffu) | RING_EXIT_KNOWN
				      : 0},
			.pid = coll.pid,
			.ppid = (uint32_t)getppid(),
		};
		coll_thread_finish(t, &p);
	} else {
		coll_drop_nothread();
	}
	coll_log("process exit written");
	errno = saved;
}

__attribute__((constructor)) static void collector_constructor(void)
{
	coll_init();
}

__attribute__((destructor)) static void collector_destructor(void)
{
	coll_process_exit();
}

static void note_exit_code(int code)
{
	if (coll.shm && (uint32_t)getpid() == coll.pid) {
		coll.exit_code = code;
		atomic_store(&coll.exit_code_known, 1);
	}
}

static __attribute__((noreturn)) void exit_now(exit_fn fn, int code)
{
	if (fn)
		fn(code);
	for (;;)
		syscall(SYS_exit_group, code);
}

COLL_EXPORT void exit(int code)
{
	note_exit_code(code);
	if (!real_exit)
		resolve_real();
	exit_now(real_exit, code); /* runs the destructor, which writes the exit */
}

COLL_EXPORT void _exit(int code)
{
	note_exit_code(code);
	coll_process_exit();
	if (!real__exit)
		resolve_real();
	exit_now(real__exit, code);
}

COLL_EXPORT void _Exit(int code)
{
	note_exit_code(code);
	coll_process_exit();
	if (!real__Exit)
		resolve_real();
	exit_now(real__Exit, code);
}

/* main's return value is the process's exit code, but libc passes it to
 * exit internally, past the interposed exit(): the program's main is
 * wrapped to learn it. Nothing else changes (the value is returned as is). */
typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
			     void *);
static main_fn program_main;

static int main_returns(int argc, char **argv, char **envp)
{
	int code = program_main(argc, argv, envp);
	note_exit_code(code);
	return code;
}

COLL_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
				  void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	start_main_fn real = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
	if (!real) /* cannot happen in a dynamically linked program */
		for (;;)
			syscall(SYS_exit_group, 127);
	program_main = main;
	int wrap = main && coll_active(); /* inert: a plain pass-through */
	return real(wrap ? main_returns : main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* ---- test hooks ----------------------------------------------------------- */

int collector_test_attach(struct ring_shm *shm, size_t len)
{
	coll_init();
	if (coll.shm)
		collector_test_detach();
	if (ring_shm_check(shm, len) != 0)
		return -1;
	coll.shm = shm;
	coll.shm_len = len;
	coll.shm_mapped = 0;
	atomic_store(&coll.exited, 0);
	atomic_store(&coll.exit_code_known, 0);
	coll_tls = NULL;
	coll_registry_forget();
	process_begin();
	return 0;
}

void collector_test_detach(void)
{
	coll_process_exit();
	coll_tls = NULL;
	if (coll.shm_mapped)
		munmap(coll.shm, coll.shm_len);
	coll.shm = NULL;
	coll.shm_mapped = 0;
}
