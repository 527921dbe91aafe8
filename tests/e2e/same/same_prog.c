/*
 * same_prog.c - one program, many behaviours, for the "same program" matrix
 * (same.py): each mode is run bare and under `gprof-dl run`, and everything
 * the program shows the world (stdout, stderr, exit status, the signal that
 * killed it) must be the same. Output is deterministic: threads and children
 * report through their parent, which prints in a fixed order.
 *
 *   same_prog MODE [ARGS...]    (modes: see the table at the end)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>
#if SAME_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#define RANGE_PUSH(name) nvtxRangePushA(name)
#define RANGE_POP() nvtxRangePop()
#else
#define RANGE_PUSH(name) ((void)(name))
#define RANGE_POP() ((void)0)
#endif

extern char **environ;

static const char *self;

/* Runs this program in MODE with one argument, replacing the process. */
static void exec_self(const char *mode, const char *arg)
{
	char *const argv[] = {(char *)self, (char *)mode, (char *)arg, NULL};
	execv("/proc/self/exe", argv);
	perror("execv");
	_exit(126);
}

static void print_status(const char *what, int status)
{
	if (WIFEXITED(status))
		printf("%s exited %d\n", what, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("%s killed by signal %d\n", what, WTERMSIG(status));
	else
		printf("%s status %#x\n", what, status);
}

static int mode_exit(int argc, char **argv)
{
	int code = argc > 2 ? atoi(argv[2]) : 0;
	RANGE_PUSH("exit");
	printf("exit %d\n", code);
	fprintf(stderr, "to stderr before exit %d\n", code);
	RANGE_POP();
	return code;
}

struct job {
	int id;
	long sum;
};

static void *sum_job(void *arg)
{
	struct job *j = arg;
	RANGE_PUSH("sum");
	for (long i = 0; i <= 1000L * (j->id + 1); i++)
		j->sum += i;
	RANGE_POP();
	return NULL;
}

static int mode_threads(int argc, char **argv)
{
	(void)argc, (void)argv;
	pthread_t t[8];
	struct job j[8];
	for (int i = 0; i < 8; i++) {
		j[i] = (struct job){.id = i};
		if (pthread_create(&t[i], NULL, sum_job, &j[i]) != 0)
			return 1;
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		printf("thread %d sum %ld\n", i, j[i].sum);
	}
	return 0;
}

static void *fork_in_thread(void *arg)
{
	(void)arg;
	pid_t pid = fork();
	if (pid == 0) {
		RANGE_PUSH("child of a thread");
		RANGE_POP();
		_exit(9);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return (void *)(intptr_t)status;
}

static int mode_fork(int argc, char **argv)
{
	(void)argc, (void)argv;
	RANGE_PUSH("around fork");
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		printf("child says hello\n");
		fflush(stdout);
		_exit(3);
	}
	int status;
	waitpid(pid, &status, 0);
	RANGE_POP();
	print_status("child", status);
	pthread_t t;
	void *ret;
	if (pthread_create(&t, NULL, fork_in_thread, NULL) != 0)
		return 1;
	pthread_join(t, &ret);
	print_status("child of a thread", (int)(intptr_t)ret);
	return 0;
}

static int mode_exec(int argc, char **argv)
{
	if (argc > 2) {
		printf("after exec: %s\n", argv[2]);
		return 5;
	}
	RANGE_PUSH("open across exec");
	printf("before exec\n");
	fflush(stdout);
	exec_self("exec", "second image");
	return 1;
}

/* Root drops to nobody, then starts a thread and a child, as a daemon
 * would after binding its port. */
static int mode_setuid_drop(int argc, char **argv)
{
	(void)argc, (void)argv;
	if (setgid(65534) != 0 || setuid(65534) != 0) {
		perror("setuid");
		return 1;
	}
	printf("uid %d euid %d\n", (int)getuid(), (int)geteuid());
	fflush(stdout);
	int rc = mode_threads(argc, argv);
	return rc ? rc : mode_fork(argc, argv);
}

/* What a set-user-ID program sees of itself. */
static int mode_ids(int argc, char **argv)
{
	(void)argc, (void)argv;
	printf("uid %d euid %d secure %lu\n", (int)getuid(), (int)geteuid(), getauxval(AT_SECURE));
	return mode_threads(argc, argv);
}

static volatile sig_atomic_t usr1_count, chld_count;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

static void on_chld(int sig)
{
	(void)sig;
	chld_count++;
}

static int mode_handler(int argc, char **argv)
{
	(void)argc, (void)argv;
	struct sigaction sa = {.sa_handler = on_usr1};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_chld;
	sigaction(SIGCHLD, &sa, NULL);
	for (int i = 0; i < 3; i++)
		raise(SIGUSR1);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	printf("SIGUSR1 handled %d times, SIGCHLD %d\n", (int)usr1_count, (int)chld_count);
	return 0;
}

static volatile sig_atomic_t got[65];

static void on_signal(int sig)
{
	got[sig]++;
}

/* Says "ready", waits for SIGINT, SIGTERM or SIGHUP, then another 300 ms for
 * a second delivery (a signal forwarded as well as received), and reports. */
static int mode_wait_signal(int argc, char **argv)
{
	(void)argc, (void)argv;
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	sigset_t block, old;
	sigemptyset(&block);
	for (size_t i = 0; i < 3; i++) {
		struct sigaction sa = {.sa_handler = on_signal};
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &block, &old);
	printf("ready\n");
	fflush(stdout);
	while (!got[SIGINT] && !got[SIGTERM] && !got[SIGHUP])
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	usleep(300000);
	int first = 0;
	for (size_t i = 0; i < 3; i++) {
		if (got[sigs[i]])
			printf("%s received %d time(s)\n", strsignal(sigs[i]), (int)got[sigs[i]]);
		if (got[sigs[i]] && !first)
			first = sigs[i];
	}
	return 40 + first;
}

/* Says "ready" and waits, every signal at its default action. */
static int mode_wait_default(int argc, char **argv)
{
	(void)argc, (void)argv;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
	return 1;
}

static int mode_die(int argc, char **argv)
{
	int sig = argc > 2 ? atoi(argv[2]) : SIGTERM;
	RANGE_PUSH("doomed");
	printf("dying of signal %d\n", sig);
	fflush(stdout);
	signal(sig, SIG_DFL);
	raise(sig);
	return 1;
}

static int mode_segv(int argc, char **argv)
{
	(void)argc, (void)argv;
	printf("about to touch address 0\n");
	fflush(stdout);
	volatile int *p = NULL;
	*p = 1;
	return 1;
}

static int mode_abort(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "aborting\n");
	abort();
	return 1;
}

static char *alt_lo, *alt_hi;

static void on_overflow(int sig)
{
	char here;
	(void)sig;
	const char *msg = &here >= alt_lo && &here < alt_hi ? "overflow caught on the alternate stack\n"
							      : "overflow caught OFF the alternate stack\n";
	if (write(1, msg, strlen(msg)) < 0)
		_exit(8);
	_exit(7);
}

/* A bound the compiler cannot see through, never reached: no stack is that deep. */
static volatile long depth_limit = 1L << 40;

static __attribute__((noinline)) long recurse(volatile char *prev, long depth)
{
	volatile char frame[512];
	if (depth >= depth_limit)
		return 0;
	frame[0] = (char)depth;
	frame[511] = prev ? prev[0] : 0;
	return recurse(frame, depth + 1) + frame[511];
}

static void *overflow_thread(void *arg)
{
	(void)arg;
	size_t size = 1 << 16;
	stack_t ss = {.ss_sp = malloc(size), .ss_size = size};
	alt_lo = ss.ss_sp;
	alt_hi = alt_lo + size;
	if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0) {
		perror("sigaltstack");
		_exit(1);
	}
	struct sigaction sa = {.sa_handler = on_overflow, .sa_flags = SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	printf("overflowing the stack of %s\n", arg ? "a thread" : "main");
	fflush(stdout);
	recurse(NULL, 0);
	return NULL;
}

/* A stack overflow, caught by a SIGSEGV handler on an alternate stack: in
 * main ("main") or in a thread with a small stack ("thread"). */
static int mode_sigaltstack(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[2], "thread") == 0) {
		pthread_attr_t a;
		pthread_t t;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 256 << 10);
		if (pthread_create(&t, &a, overflow_thread, (void *)1) != 0)
			return 1;
		pthread_join(t, NULL);
		return 1;
	}
	overflow_thread(NULL);
	return 1;
}

static int mode_vfork(int argc, char **argv)
{
	(void)argc, (void)argv;
	fflush(stdout);
	pid_t pid = vfork();
	if (pid == 0)
		exec_self("exit", "4");
	int status;
	waitpid(pid, &status, 0);
	print_status("vfork child", status);
	pid = vfork();
	if (pid == 0)
		_exit(6);
	waitpid(pid, &status, 0);
	print_status("vfork child without exec", status);
	return 0;
}

static int mode_spawn(int argc, char **argv)
{
	(void)argc, (void)argv;
	char *const args[] = {(char *)self, "exit", "6", NULL};
	pid_t pid;
	fflush(stdout);
	int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ);
	if (rc != 0) {
		printf("posix_spawn: %s\n", strerror(rc));
		return 1;
	}
	int status;
	waitpid(pid, &status, 0);
	print_status("spawned child", status);
	char *const sh[] = {"sh", "-c", "exit 2", NULL};
	rc = posix_spawnp(&pid, "sh", NULL, NULL, sh, environ);
	if (rc != 0)
		return 1;
	waitpid(pid, &status, 0);
	print_status("spawned sh", status);
	return 0;
}

/* Run with some of fds 0, 1, 2 closed: reports to the file argv[2] which are
 * open, which fd a new file gets, and what writing to stdout gives. */
static int mode_closed_stdio(int argc, char **argv)
{
	char open_before[3];
	for (int fd = 0; fd < 3; fd++)
		open_before[fd] = fcntl(fd, F_GETFD) == -1 ? 'c' : 'o';
	ssize_t w = write(1, "", 0);
	int werr = w < 0 ? errno : 0;
	int nfd = open("/dev/null", O_RDONLY);
	if (argc < 3)
		return 2;
	FILE *f = fopen(argv[2], "w");
	if (!f)
		return 3;
	fprintf(f, "fds 0-2 at start: %.3s\nwrite(1): %s\nnew file: fd %d\n", open_before,
		werr ? strerror(werr) : "ok", nfd);
	RANGE_PUSH("closed stdio");
	RANGE_POP();
	return fclose(f) == 0 ? 0 : 4;
}

/* Prints how many arguments came, their total length and a hash of them. */
static int mode_args(int argc, char **argv)
{
	uint64_t h = 1469598103934665603ull, total = 0;
	for (int i = 2; i < argc; i++) {
		for (const char *p = argv[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
		h = (h ^ 0xff) * 1099511628211ull;
		total += strlen(argv[i]) + 1;
	}
	printf("%d arguments, %llu bytes, hash %016llx\n", argc - 2, (unsigned long long)total,
	       (unsigned long long)h);
	return 0;
}

static pthread_barrier_t burst_barrier;

static void *burst_thread(void *arg)
{
	RANGE_PUSH("burst");
	pthread_barrier_wait(&burst_barrier); /* every thread alive at once */
	RANGE_POP();
	return arg;
}

/* N threads (argv[2], default 1000) started at once, all alive together. */
static int mode_burst(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 << 10);
	pthread_barrier_init(&burst_barrier, NULL, (unsigned)n + 1);
	int started = 0;
	for (int i = 0; i < n; i++) {
		int rc = pthread_create(&t[i], &a, burst_thread, (void *)(intptr_t)i);
		if (rc != 0) {
			printf("pthread_create %d: %s\n", i, strerror(rc));
			_exit(1);
		}
		started++;
	}
	pthread_barrier_wait(&burst_barrier);
	long sum = 0;
	for (int i = 0; i < n; i++) {
		void *ret;
		pthread_join(t[i], &ret);
		sum += (long)(intptr_t)ret;
	}
	printf("%d threads started, all alive at once, joined (sum of ids %ld)\n", started, sum);
	free(t);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} modes[] = {
	{"abort", mode_abort},
	{"args", mode_args},
	{"burst", mode_burst},
	{"closed_stdio", mode_closed_stdio},
	{"die", mode_die},
	{"exec", mode_exec},
	{"exit", mode_exit},
	{"fork", mode_fork},
	{"handler", mode_handler},
	{"ids", mode_ids},
	{"segv", mode_segv},
	{"setuid_drop", mode_setuid_drop},
	{"sigaltstack", mode_sigaltstack},
	{"spawn", mode_spawn},
	{"threads", mode_threads},
	{"vfork", mode_vfork},
	{"wait_default", mode_wait_default},
	{"wait_signal", mode_wait_signal},
};

int main(int argc, char **argv)
{
	self = argv[0];
	for (size_t i = 0; argc > 1 && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(argv[1], modes[i].name) == 0)
			return modes[i].fn(argc, argv);
	fprintf(stderr, "usage: same_prog MODE [ARGS...]\n");
	return 2;
}
