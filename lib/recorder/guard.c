/* guard.c - the guard process that ends the command's whole tree when gprof-dl dies (guard.h). */
#include "lib/recorder/guard.h"

#include "common/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What the guard tells gprof-dl: the command's pid first (status
 * MSG_STARTED; pid -errno when its fork failed), then each process reaped. */
#define MSG_STARTED INT32_MIN
struct msg {
	int32_t pid;
	int32_t status;
	struct rusage usage;
};

struct guard {
	pid_t pid;
	int ctl; /* write end: only gprof-dl holds it */
	int rep; /* read end of the guard's messages, non-blocking */
	int gone;
};

/* ---- the guard process ------------------------------------------------------------------------ */

static void on_child(int sig)
{
	(void)sig; /* wakes ppoll */
}

static void tell(int rep, pid_t pid, int status, const struct rusage *usage)
{
	struct msg m;
	memset(&m, 0, sizeof(m));
	m.pid = (int32_t)pid;
	m.status = status;
	if (usage)
		m.usage = *usage;
	/* one write of less than PIPE_BUF: whole or not at all; gprof-dl gone
	 * (EPIPE, SIGPIPE ignored): its pipe's end of file says so next */
	while (write(rep, &m, sizeof(m)) < 0 && errno == EINTR)
		;
}

/* Every descriptor but keep_a and keep_b closed; 0, 1, 2 on /dev/null. */
static void close_others(int keep_a, int keep_b)
{
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		int self = dirfd(d), *fds = NULL;
		size_t n = 0, cap = 0;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			char *end;
			long fd = strtol(e->d_name, &end, 10);
			if (*end || end == e->d_name || fd == self || fd == keep_a || fd == keep_b)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				int *more = realloc(fds, cap * sizeof(*fds));
				if (!more)
					break;
				fds = more;
			}
			fds[n++] = (int)fd;
		}
		closedir(d);
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		free(fds);
	}
	int null = open("/dev/null", O_RDWR);
	for (int fd = 0; fd <= 2 && null >= 0; fd++)
		if (fd != null && fd != keep_a && fd != keep_b)
			dup2(null, fd);
	if (null > 2)
		close(null);
}

struct proc {
	pid_t pid, ppid;
	unsigned long long start; /* clock ticks after boot: with pid, one process */
	char state;
	char mine;
};

/* pid's parent, state and start time from /proc/PID/stat; -1 when gone. */
static int read_stat(pid_t pid, struct proc *p)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *s = strrchr(buf, ')'); /* the command name may hold anything */
	int ppid;
	unsigned long long start;
	char state;
	/* fields 3 (state), 4 (ppid) and 22 (start time) */
	if (!s || sscanf(s + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &state, &ppid, &start) != 3)
		return -1;
	p->pid = pid;
	p->ppid = ppid;
	p->state = state;
	p->start = start;
	return 0;
}

/* SIGKILL to the process p names, unless its pid now names another. */
static void kill_one(const struct proc *p)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
	long fd = syscall(SYS_pidfd_open, p->pid, 0);
	if (fd >= 0) {
		struct proc now;
		if (read_stat(p->pid, &now) == 0 && now.start == p->start)
			syscall(SYS_pidfd_send_signal, (int)fd, SIGKILL, NULL, 0);
		close((int)fd);
		return;
	}
	if (errno != ENOSYS)
		return; /* gone */
#endif
	kill(p->pid, SIGKILL);
}

static void reap_all(int rep)
{
	int status;
	struct rusage usage;
	pid_t p;
	while ((p = wait4(-1, &status, WNOHANG, &usage)) > 0)
		tell(rep, p, status, &usage);
}

/* SIGKILL to every descendant of the guard, until none is left (those that
 * lose their parent on the way become the guard's children). */
static void end_tree(int rep)
{
	pid_t self = getpid();
	struct proc *ps = NULL;
	size_t cap = 0;
	for (int round = 0; round < 1000; round++) {
		size_t n = 0;
		DIR *d = opendir("/proc");
		if (!d)
			return;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			char *end;
			long pid = strtol(e->d_name, &end, 10);
			if (*end || end == e->d_name || pid <= 0 || pid == self)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				struct proc *more = realloc(ps, cap * sizeof(*ps));
				if (!more)
					break;
				ps = more;
			}
			if (read_stat((pid_t)pid, &ps[n]) == 0) {
				ps[n].mine = ps[n].ppid == self;
				n++;
			}
		}
		closedir(d);
		/* the descendants: children of the marked, until no more */
		for (int more = 1; more;) {
			more = 0;
			for (size_t i = 0; i < n; i++) {
				if (ps[i].mine)
					continue;
				for (size_t k = 0; k < n && !ps[i].mine; k++)
					if (ps[k].mine && ps[k].pid == ps[i].ppid)
						ps[i].mine = more = 1;
			}
		}
		size_t live = 0;
		for (size_t i = 0; i < n; i++)
			if (ps[i].mine && ps[i].state != 'Z' && ps[i].state != 'X') {
				kill_one(&ps[i]);
				live++;
			}
		reap_all(rep);
		if (!live)
			break;
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
		reap_all(rep);
	}
	free(ps);
}

static void __attribute__((noreturn)) guard_main(int ctl, int rep, void (*child)(void *ctx), void *ctx)
{
	pid_t self = getpid();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid_t pid = fork();
	if (pid < 0) {
		tell(rep, -errno, MSG_STARTED, NULL);
		_exit(1);
	}
	if (pid == 0) {
		close(ctl);
		close(rep);
		/* dies with the guard, should the guard be killed alone */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != self)
			_exit(1);
		child(ctx);
		_exit(127);
	}
	/* the command has gprof-dl's dispositions and mask; now the guard's own */
	close_others(ctl, rep);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++) {
		switch (sig) {
		case SIGKILL: case SIGSTOP: case SIGCHLD: case SIGCONT: case SIGTSTP: case SIGTTIN:
		case SIGTTOU: case SIGSEGV: case SIGBUS: case SIGFPE: case SIGILL: case SIGABRT:
		case SIGTRAP: case SIGSYS:
			continue;
		}
		sa.sa_handler = SIG_IGN;
		sigaction(sig, &sa, NULL);
	}
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t block, wait_mask;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	sigdelset(&wait_mask, SIGCHLD);
	tell(rep, pid, MSG_STARTED, NULL);
	for (;;) {
		reap_all(rep);
		struct pollfd fd = {ctl, POLLIN, 0};
		if (ppoll(&fd, 1, NULL, &wait_mask) <= 0)
			continue; /* SIGCHLD */
		char c;
		ssize_t k = read(ctl, &c, 1);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k == 0)
			end_tree(rep); /* gprof-dl is gone without a word */
		_exit(0);
	}
}

/* ---- gprof-dl's side -------------------------------------------------------------------------- */

struct guard *guard_start(void (*child)(void *ctx), void *ctx, pid_t *pid)
{
	int ctl[2], rep[2];
	if (pipe2(ctl, O_CLOEXEC) != 0)
		return NULL;
	if (pipe2(rep, O_CLOEXEC) != 0) {
		int e = errno;
		close(ctl[0]);
		close(ctl[1]);
		errno = e;
		return NULL;
	}
	fflush(NULL);
	pid_t g = fork();
	if (g < 0) {
		int e = errno;
		close(ctl[0]);
		close(ctl[1]);
		close(rep[0]);
		close(rep[1]);
		errno = e;
		return NULL;
	}
	if (g == 0) {
		close(ctl[1]);
		close(rep[0]);
		guard_main(ctl[0], rep[1], child, ctx);
	}
	close(ctl[0]);
	close(rep[1]);
	struct msg m;
	ssize_t n;
	while ((n = read(rep[0], &m, sizeof(m))) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(m) || m.status != MSG_STARTED || m.pid <= 0) {
		int e = n == (ssize_t)sizeof(m) && m.pid < 0 ? -m.pid : EAGAIN;
		close(ctl[1]);
		close(rep[0]);
		while (waitpid(g, NULL, 0) < 0 && errno == EINTR)
			;
		errno = e;
		return NULL;
	}
	fcntl(rep[0], F_SETFL, fcntl(rep[0], F_GETFL) | O_NONBLOCK);
	struct guard *gd = xcalloc(1, sizeof(*gd));
	gd->pid = g;
	gd->ctl = ctl[1];
	gd->rep = rep[0];
	*pid = (pid_t)m.pid;
	return gd;
}

pid_t guard_pid(const struct guard *g)
{
	return g->pid;
}

int guard_reaped(struct guard *g, pid_t *pid, int *status, struct rusage *usage, int wait_ms)
{
	for (;;) {
		if (g && g->rep >= 0) {
			struct msg m;
			ssize_t n = read(g->rep, &m, sizeof(m));
			if (n == (ssize_t)sizeof(m)) {
				*pid = m.pid;
				*status = m.status;
				*usage = m.usage;
				return 1;
			}
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				close(g->rep); /* the guard is gone: what it had to say is said */
				g->rep = -1;
			}
		}
		/* gprof-dl's own children: the guard, or without one (or after its
		 * death) the tree's processes */
		pid_t p = wait4(-1, status, WNOHANG, usage);
		if (p > 0 && g && p == g->pid) {
			g->gone = 1;
			continue;
		}
		if (p > 0) {
			*pid = p;
			return 1;
		}
		if (g && g->gone && g->rep < 0 && p < 0 && errno == ECHILD)
			return -1;
		if (!g && p < 0 && errno == ECHILD)
			return -1;
		if (wait_ms <= 0)
			return 0;
		if (g && g->rep >= 0) {
			struct pollfd fd = {g->rep, POLLIN, 0};
			poll(&fd, 1, wait_ms < 5 ? wait_ms : 5);
		} else {
			struct timespec ts = {0, 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		wait_ms -= 5;
	}
}

void guard_release(struct guard *g)
{
	if (!g)
		return;
	char c = 'r';
	while (write(g->ctl, &c, 1) < 0 && errno == EINTR)
		;
	close(g->ctl);
	/* what it still says (processes that ended since) is of no use now */
	if (g->rep >= 0) {
		fcntl(g->rep, F_SETFL, fcntl(g->rep, F_GETFL) & ~O_NONBLOCK);
		struct msg m;
		ssize_t n;
		while ((n = read(g->rep, &m, sizeof(m))) > 0 || (n < 0 && errno == EINTR))
			;
		close(g->rep);
	}
	if (!g->gone)
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
	free(g);
}
