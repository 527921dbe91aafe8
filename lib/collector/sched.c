/*
 * sched.c - a step thread's CPU and run-queue time from schedstat (sched.h).
 */
#include "lib/collector/sched.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct sched_sample {
	uint64_t ts, cpu, runq;
};

struct sched_state {
	int fd;          /* 0: not opened; -1: cannot be */
	uint32_t tid;    /* whose schedstat fd reads */
	uint32_t n, next;
	int boundary; /* the last sample is a recorded step's end, taken for it */
	struct sched_sample s[COLL_SCHED_SAMPLES];
};

static __thread struct sched_state sched __attribute__((tls_model("initial-exec")));

int coll_sched_parse(const char *buf, uint64_t *cpu_ns, uint64_t *runq_ns)
{
	uint64_t v[2] = {0, 0};
	const char *p = buf;
	for (int i = 0; i < 2; i++) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++)
			v[i] = v[i] * 10 + (uint64_t)(*p - '0');
	}
	*cpu_ns = v[0];
	*runq_ns = v[1];
	return 0;
}

/* The thread's descriptor, opened at its first sample; -1 none (cannot
 * be). No gettid for the others: a fork child resets it
 * (coll_sched_forked()), a thread's end closes it. */
static int sched_fd(void)
{
	if (sched.fd != 0)
		return sched.fd;
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%u/schedstat", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	sched.tid = tid;
	sched.fd = fd > 0 ? fd : -1;
	if (fd == 0) /* never keep descriptor 0: "not opened" */
		close(fd);
	return sched.fd;
}

void coll_sched_sample(uint64_t now)
{
	sched.boundary = 0;
	int fd = sched_fd();
	if (fd < 0)
		return;
	char buf[96];
	ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		return;
	buf[len] = '\0';
	struct sched_sample s = {now, 0, 0};
	uint64_t stale_cpu;
	struct timespec ts;
	if (coll_sched_parse(buf, &stale_cpu, &s.runq) != 0 ||
	    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return;
	s.cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	sched.s[sched.next] = s;
	sched.next = (sched.next + 1) % COLL_SCHED_SAMPLES;
	if (sched.n < COLL_SCHED_SAMPLES)
		sched.n++;
}

/* How near a sample must lie to an end of the step [start, end). */
static uint64_t near_of(uint64_t start, uint64_t end)
{
	uint64_t near = end > start ? (end - start) / 50 : 0;
	return near < COLL_SCHED_NEAR ? COLL_SCHED_NEAR : near;
}

/* The sample nearest t, within near, of those taken after `after`; NULL
 * none. */
static const struct sched_sample *nearest(uint64_t t, uint64_t near, uint64_t after)
{
	const struct sched_sample *best = NULL;
	uint64_t best_d = 0;
	for (uint32_t i = 0; i < sched.n; i++) {
		const struct sched_sample *s = &sched.s[i];
		uint64_t d = s->ts > t ? s->ts - t : t - s->ts;
		if (s->ts > after && d <= near && (!best || d < best_d)) {
			best = s;
			best_d = d;
		}
	}
	return best;
}

void coll_sched_sample_for(uint64_t now, uint64_t start, uint64_t end)
{
	/* a sample in the step's second half serves its end, not its start
	 * (a step shorter than the tolerance has its start's near its end) */
	uint64_t near = near_of(start, end);
	uint64_t d = now > end ? now - end : end - now;
	uint64_t mid = end > start ? start + (end - start) / 2 : start;
	if (d <= near && !nearest(end, near, mid)) {
		coll_sched_sample(now);
		sched.boundary = 1;
	}
}

void coll_sched_step(uint64_t now)
{
	if (sched.boundary && sched.n) {
		const struct sched_sample *last = &sched.s[(sched.next + COLL_SCHED_SAMPLES - 1) % COLL_SCHED_SAMPLES];
		sched.boundary = 0;
		if (now >= last->ts && now - last->ts <= COLL_SCHED_NEAR)
			return;
	}
	coll_sched_sample(now);
}

int coll_sched_span(uint64_t start, uint64_t end, uint64_t *cpu_ns, uint64_t *runq_ns)
{
	uint64_t near = near_of(start, end);
	const struct sched_sample *a = nearest(start, near, 0);
	const struct sched_sample *b = a ? nearest(end, near, a->ts) : NULL;
	if (!a || !b || b->ts <= a->ts || b->cpu < a->cpu || b->runq < a->runq || b->cpu == a->cpu)
		return 0;
	*cpu_ns = b->cpu - a->cpu;
	*runq_ns = b->runq - a->runq;
	return 1;
}

void coll_sched_thread_end(void)
{
	if (sched.fd > 0)
		close(sched.fd);
	sched.fd = 0;
	sched.n = sched.next = 0;
	sched.boundary = 0;
}

void coll_sched_forked(void)
{
	coll_sched_thread_end();
}
