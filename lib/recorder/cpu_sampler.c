/* cpu_sampler.c - sampling the target's and the system's CPU time from /proc (cpu_sampler.h). */
#include "lib/recorder/cpu_sampler.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cpu_sampler_init(struct cpu_sampler *s)
{
	memset(s, 0, sizeof(*s));
	s->ticks_per_sec = sysconf(_SC_CLK_TCK);
	if (s->ticks_per_sec <= 0)
		s->ticks_per_sec = 100;
	s->page_size = sysconf(_SC_PAGESIZE);
	if (s->page_size <= 0)
		s->page_size = 4096;
}

static uint64_t timeval_ticks(const struct timeval *tv, long hz)
{
	return (uint64_t)tv->tv_sec * (uint64_t)hz + (uint64_t)tv->tv_usec * (uint64_t)hz / 1000000u;
}

void cpu_sampler_reaped(struct cpu_sampler *s, const struct rusage *usage)
{
	s->reaped_ticks += timeval_ticks(&usage->ru_utime, s->ticks_per_sec) +
			   timeval_ticks(&usage->ru_stime, s->ticks_per_sec);
}

int cpu_parse_proc_stat_line(const char *line, uint64_t *busy, uint64_t *total)
{
	uint64_t v[10] = {0};
	if (strncmp(line, "cpu ", 4) != 0)
		return -1;
	int n = sscanf(line + 4, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			       " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
		       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
	if (n < 4)
		return -1;
	/* user nice system idle iowait irq softirq steal (guest is inside user) */
	uint64_t idle = v[3] + v[4];
	*busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	*total = *busy + idle;
	return 0;
}

/* Fields 4 to 25 of a /proc/PID/stat line into f[0..21]. */
static int parse_stat_fields(const char *buf, uint64_t f[22])
{
	/* The command name is in parentheses and may hold spaces and ')'. */
	const char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	p++;
	char *end;
	/* fields from 3 (state) on; state is a letter, skip it */
	while (*p == ' ')
		p++;
	if (!*p)
		return -1;
	p++;
	for (int i = 0; i < 22; i++) {
		f[i] = strtoull(p, &end, 10);
		if (end == p)
			return -1;
		p = end;
	}
	return 0;
}

int cpu_parse_pid_stat(const char *buf, uint64_t *ticks, uint64_t *rss_pages)
{
	uint64_t f[22];
	if (parse_stat_fields(buf, f) != 0)
		return -1;
	/* f[0] is field 4 (ppid); utime..cstime are fields 14..17, rss is 24 */
	*ticks = f[10] + f[11] + f[12] + f[13];
	*rss_pages = f[20];
	return 0;
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

int cpu_sampler_sample(struct cpu_sampler *s, const pid_t *pids, unsigned npids, uint64_t now_ns,
		       struct cpu_sample *out)
{
	char buf[4096], path[64];
	uint64_t proc_ticks = s->reaped_ticks, rss_pages = 0, busy = 0, total = 0;

	/* CPU time comes in clock ticks (10 ms): over a shorter interval one
	 * tick more or less is hundreds of percent (a sample taken as a process
	 * ends, just after the periodic one, read 53,287 %). Such an interval
	 * is no sample; the next one covers it. */
	if (s->primed && now_ns - s->last_ts < CPU_SAMPLER_MIN_TICKS * 1000000000ull / (uint64_t)s->ticks_per_sec)
		return 0;
	for (unsigned i = 0; i < npids; i++) {
		uint64_t t, rss;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pids[i]);
		if (read_small(path, buf, sizeof(buf)) == 0 && cpu_parse_pid_stat(buf, &t, &rss) == 0) {
			proc_ticks += t;
			rss_pages += rss;
		}
	}
	if (read_small("/proc/stat", buf, sizeof(buf)) != 0 || cpu_parse_proc_stat_line(buf, &busy, &total) != 0)
		busy = total = 0;

	int have = s->primed && now_ns > s->last_ts;
	if (have) {
		double wall_s = (double)(now_ns - s->last_ts) / 1e9;
		double dproc = proc_ticks >= s->last_proc_ticks ? (double)(proc_ticks - s->last_proc_ticks) : 0;
		out->ts_ns = now_ns;
		out->process_pct = dproc / (double)s->ticks_per_sec / wall_s * 100.0;
		out->system_pct = total > s->last_sys_total
					  ? (double)(busy - s->last_sys_busy) * 100.0 / (double)(total - s->last_sys_total)
					  : 0.0;
		out->rss_bytes = rss_pages * (uint64_t)s->page_size;
	}
	s->last_ts = now_ns;
	s->last_proc_ticks = proc_ticks;
	s->last_sys_busy = busy;
	s->last_sys_total = total;
	s->primed = 1;
	return have;
}

int cpu_sample_pid(pid_t pid, uint64_t *own_ticks, uint64_t *rss_pages)
{
	char buf[4096], path[64];
	uint64_t f[22];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof(buf)) != 0 || parse_stat_fields(buf, f) != 0)
		return -1;
	*own_ticks = f[10] + f[11]; /* utime, stime: not its reaped children's */
	*rss_pages = f[20];
	return 0;
}
