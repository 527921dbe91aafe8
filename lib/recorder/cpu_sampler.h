/*
 * cpu_sampler.h - CPU utilisation of the target's processes and of the whole
 * system, sampled by the launcher from /proc (never inside the target), for
 * the Device Summary.
 *
 * Process CPU time is the sum over the target's live processes of utime +
 * stime + cutime + cstime, plus the final rusage of those the launcher reaped:
 * a process that ends moves its time into its reaper's counters, so the total
 * stays continuous and nothing is counted twice.
 */
#ifndef GPDL_CPU_SAMPLER_H
#define GPDL_CPU_SAMPLER_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct cpu_sample {
	uint64_t ts_ns;
	double process_pct; /* % of one core: can exceed 100 on several cores */
	double system_pct;  /* % busy of all cores */
	uint64_t rss_bytes;
};

struct cpu_sampler {
	uint64_t last_ts;
	uint64_t last_proc_ticks;
	uint64_t last_sys_busy, last_sys_total;
	uint64_t reaped_ticks; /* from wait4 of processes that are gone */
	long ticks_per_sec;
	long page_size;
	int primed;
};

void cpu_sampler_init(struct cpu_sampler *s);
/* The process has ended and was reaped with this usage. */
void cpu_sampler_reaped(struct cpu_sampler *s, const struct rusage *usage);
/* The shortest interval a sample is taken over, in clock ticks. */
#define CPU_SAMPLER_MIN_TICKS 5
/* Takes a sample over the live pids. Returns 1 and fills out when a previous
 * sample exists to take the difference from, at least CPU_SAMPLER_MIN_TICKS
 * ago; 0 for the first call, and for one too soon after the last (which
 * leaves the sampler as it was: the next sample covers the interval). */
int cpu_sampler_sample(struct cpu_sampler *s, const pid_t *pids, unsigned npids, uint64_t now_ns,
		       struct cpu_sample *out);

/* One process's own CPU time (utime + stime, without its children's) and
 * resident pages, from /proc: for per-rank figures. 0, or -1 when gone. */
int cpu_sample_pid(pid_t pid, uint64_t *own_ticks, uint64_t *rss_pages);

/* Parsers, exposed for the unit tests: 0 on success. */
int cpu_parse_proc_stat_line(const char *line, uint64_t *busy, uint64_t *total);
int cpu_parse_pid_stat(const char *buf, uint64_t *ticks, uint64_t *rss_pages);

#endif
