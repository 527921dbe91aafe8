/* runend.c - the end-of-run tables `gprof-dl run` prints in nvprof's layout (runend.h). */
#include "lib/analysis/runend.h"
#include "lib/analysis/advise/advise.h"

#include "lib/analysis/bench/benchstat.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/dist/jobperf.h"
#include "lib/analysis/store/analysis.h"
#include "lib/analysis/views/nvprof.h"
#include "lib/analysis/views/perf.h"
#include "lib/analysis/store/store_iter.h"
#include "lib/analysis/views/view.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <stdlib.h>
#include <string.h>

struct runend_row {
	uint32_t name;
	struct time_stats cpu;
	struct ivl_union open;
};

void runend_format_time(char *buf, size_t size, double ns)
{
	static const struct {
		double ns;
		const char *unit;
	} units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}};
	for (unsigned i = 0; i < 3; i++) {
		if (ns >= units[i].ns) {
			double v = ns / units[i].ns;
			int decimals = v < 10 ? 4 : v < 100 ? 3 : 2;
			snprintf(buf, size, "%.*f%s", decimals, v, units[i].unit);
			return;
		}
	}
	snprintf(buf, size, "%.0fns", ns);
}

static int runend_row_cmp(const void *x, const void *y)
{
	const struct runend_row *a = x, *b = y;
	if (a->cpu.total != b->cpu.total)
		return a->cpu.total > b->cpu.total ? -1 : 1;
	return (a->name > b->name) - (a->name < b->name);
}

/* The row of every training step: steps are named one by one
 * ("ProfileStep#12"), and a row each would push the program's ranges out of
 * the top ones. */
#define REPORT_STEPS_ROW UINT32_MAX

static const char *runend_row_name(const struct analysis *a, const struct runend_row *r)
{
	return r->name == REPORT_STEPS_ROW ? "ProfileStep" : store_name(&a->store, r->name);
}

/* Host ranges by name (the steps in one row), in one merged pass for the
 * union of each name. */
static struct runend_row *runend_rows(const struct analysis *a, size_t *nrows)
{
	const struct store *s = &a->store;
	uint32_t nnames = s->names.count;
	struct runend_row *rows = xcalloc((size_t)nnames + 1, sizeof(*rows));
	for (uint32_t i = 0; i <= nnames; i++) {
		rows[i].name = i < nnames ? i : REPORT_STEPS_ROW;
		ivl_union_init(&rows[i].open, &a->window);
	}
	struct analysis_walk w;
	for (analysis_walk_init(&w, a); analysis_walk_next(&w);) {
		const struct store_track *t = w.t;
		if (t->kind != STORE_TRACK_HOST || store_ev_is_instant(t, w.i) ||
		    w.type == TRACE_EV_CUDA_RUNTIME || w.type == TRACE_EV_MEMORY)
			continue; /* API calls have their own table */
		struct runend_row *r = w.type == TRACE_EV_PROFILE_STEP
					       ? &rows[nnames]
					       : &rows[s->descs[store_ev_desc(t, w.i)].name];
		time_stats_add(&r->cpu, w.clipped);
		ivl_union_add(&r->open, t->start[w.i], store_ev_end(t, w.i));
	}
	analysis_walk_free(&w);
	size_t n = 0;
	for (uint32_t k = 0; k <= nnames; k++)
		if (rows[k].cpu.calls)
			rows[n++] = rows[k];
	qsort(rows, n, sizeof(*rows), runend_row_cmp);
	*nrows = n;
	return rows;
}

static void runend_header(FILE *out)
{
	fprintf(out, "%7s  %9s  %8s  %9s  %9s  %9s  %s\n", "Time(%)", "Time", "Calls", "Avg", "Min",
		"Max", "Name");
}

static void runend_line(FILE *out, const char *pct, const struct time_stats *t, const char *name)
{
	char tot[32], avg[32], min[32], max[32];
	runend_format_time(tot, sizeof(tot), (double)t->total);
	runend_format_time(avg, sizeof(avg), (double)t->total / (double)t->calls);
	runend_format_time(min, sizeof(min), (double)t->min);
	runend_format_time(max, sizeof(max), (double)t->max);
	fprintf(out, "%7s  %9s  %8llu  %9s  %9s  %9s  ", pct, tot, (unsigned long long)t->calls, avg,
		min, max);
	text_fputs(name, out);
	fputc('\n', out);
}

void runend_percent(const uint64_t *part, size_t n, uint64_t whole, unsigned *hundredths)
{
	if (!whole) {
		memset(hundredths, 0, n * sizeof(*hundredths));
		return;
	}
	/* Largest remainder: each share rounded down to 0.01%, then the
	 * hundredths still missing from 100.00% go to the largest remainders,
	 * so that the printed column adds up to 100.00 exactly. */
	unsigned sum = 0;
	double *rem = xmalloc((n ? n : 1) * sizeof(*rem));
	for (size_t i = 0; i < n; i++) {
		double exact = 10000.0 * (double)part[i] / (double)whole;
		hundredths[i] = (unsigned)exact;
		rem[i] = exact - hundredths[i];
		sum += hundredths[i];
	}
	while (sum < 10000) {
		size_t best = n;
		for (size_t i = 0; i < n; i++)
			if (rem[i] >= 0 && (best == n || rem[i] > rem[best]))
				best = i;
		if (best == n)
			break;
		hundredths[best]++;
		rem[best] = -1;
		sum++;
	}
	free(rem);
}

/* "12.34%" */
static const char *pct_text(char *buf, size_t size, unsigned hundredths)
{
	snprintf(buf, size, "%u.%02u%%", hundredths / 100, hundredths % 100);
	return buf;
}

/* The Time(%) of the first top of n rows and of the others together (the
 * last slot), against the sum of all n: the printed column adds up to 100. */
static unsigned *runend_shares(const struct time_stats *const *rows, size_t n, size_t top)
{
	size_t shown = n < top ? n : top;
	uint64_t *part = xcalloc(shown + 1, sizeof(*part));
	uint64_t whole = 0;
	for (size_t i = 0; i < n; i++) {
		part[i < shown ? i : shown] += rows[i]->total;
		whole += rows[i]->total;
	}
	unsigned *h = xmalloc((shown + 1) * sizeof(*h));
	runend_percent(part, shown + 1, whole, h);
	free(part);
	return h;
}

/* nvprof's "GPU activities" or "API calls" table, after its heading line. */
static void runend_nvprof(FILE *out, unsigned pid, const char *heading,
			  const struct nvprof_table *nv, const char *none, const char *of)
{
	if (!nv->n) {
		fprintf(out, "==%u== %s %s\n", pid, heading, none);
		return;
	}
	fprintf(out, "==%u== %s\n", pid, heading);
	runend_header(out);
	const struct time_stats **rows = xmalloc(nv->n * sizeof(*rows));
	for (size_t i = 0; i < nv->n; i++)
		rows[i] = &nv->rows[i].t;
	unsigned *h = runend_shares(rows, nv->n, RUNEND_TOP_GPU);
	char p[16];
	for (size_t i = 0; i < nv->n && i < RUNEND_TOP_GPU; i++)
		runend_line(out, pct_text(p, sizeof(p), h[i]), &nv->rows[i].t,
			    names_get(&nv->names, nv->rows[i].name));
	if (nv->n > RUNEND_TOP_GPU)
		fprintf(out, "==%u== ... and %zu more names: %s\n", pid, nv->n - RUNEND_TOP_GPU,
			pct_text(p, sizeof(p), h[RUNEND_TOP_GPU]));
	fprintf(out, "==%u== Time(%%) is of all %s time: every name's Time summed.\n", pid, of);
	free(h);
	free(rows);
}

/* With GPU work or API calls: nvprof's two tables. 0 when there is neither. */
static int runend_gpu(const struct analysis *a, FILE *out, unsigned pid)
{
	struct nvprof_table gpu, api;
	nvprof_gpu_activities(a, &gpu);
	nvprof_api_calls(a, &api);
	int any = gpu.n || api.n;
	if (any) {
		runend_nvprof(out, pid, "Profiling result (GPU activities):", &gpu,
			      "no GPU activities in the window.", "GPU activity");
		fputc('\n', out);
		runend_nvprof(out, pid, "API calls:", &api, "none in the window.", "API call");
		fputc('\n', out);
	}
	nvprof_table_free(&gpu);
	nvprof_table_free(&api);
	return any;
}

static void runend_table(const struct analysis *a, FILE *out, unsigned pid)
{
	size_t n;
	int gpu = runend_gpu(a, out, pid);
	const char *heading = gpu ? "NVTX ranges:" : "Profiling result:";
	struct runend_row *rows = runend_rows(a, &n);
	if (!n) {
		fprintf(out, "==%u== %s no NVTX ranges were recorded.\n", pid, heading);
		free(rows);
		return;
	}
	fprintf(out, "==%u== %s\n", pid, heading);
	runend_header(out);
	/* nsys's NVTX summary: a name's share of all range time, so that the
	 * column adds up to 100 (a share of the window would not: ranges nest) */
	const struct time_stats **st = xmalloc(n * sizeof(*st));
	for (size_t i = 0; i < n; i++)
		st[i] = &rows[i].cpu;
	unsigned *h = runend_shares(st, n, RUNEND_TOP_RANGES);
	char p[16];
	for (size_t i = 0; i < n && i < RUNEND_TOP_RANGES; i++)
		runend_line(out, pct_text(p, sizeof(p), h[i]), &rows[i].cpu,
			    runend_row_name(a, &rows[i]));
	if (n > RUNEND_TOP_RANGES)
		fprintf(out, "==%u== ... and %zu more range names: %s\n", pid, n - RUNEND_TOP_RANGES,
			pct_text(p, sizeof(p), h[RUNEND_TOP_RANGES]));
	fprintf(out,
		"==%u== Time(%%) is of all range time: every name's Time summed (a range inside "
		"another counts in both).\n",
		pid);
	free(h);
	free(st);
	free(rows);
}

static void runend_facts(const struct analysis *a, const char *path, FILE *out, unsigned pid)
{
	char safe[TEXT_CLEAN_SIZE];
	fprintf(out, "==%u== Events: %llu (%llu marks), %llu dropped\n", pid,
		(unsigned long long)a->events, (unsigned long long)a->marks,
		(unsigned long long)a->dropped);
	/* drops of another reason (no ring slot) are the caller's to say */
	uint64_t other = store_drops_not_ring(&a->store);
	if (a->dropped > other)
		fprintf(out, "==%u== Warning: %llu events were dropped (full ring or CUPTI buffers): the figures "
			     "above are missing them\n",
			pid, (unsigned long long)(a->dropped - other));
	if (a->open_at_exit)
		fprintf(out, "==%u== Warning: %llu ranges were still open at exit\n", pid,
			(unsigned long long)a->open_at_exit);
	if (a->unbalanced_pops)
		fprintf(out, "==%u== Warning: %llu pops had no matching push\n", pid,
			(unsigned long long)a->unbalanced_pops);
	for (uint32_t i = 0; i < a->store.nfiles; i++) {
		const struct store_file *f = &a->store.files[i];
		if (f->damage)
			fprintf(out, "==%u== Warning: the trace is damaged at offset %llu: %s; summarised "
				     "up to there\n",
				pid, (unsigned long long)f->damage_offset,
				text_clean(safe, sizeof(safe), f->damage));
	}
	text_clean(safe, sizeof(safe), path);
	fprintf(out, "==%u== Trace: %s (every table: gprof-dl summary %s)\n", pid, safe, safe);
}

/* A training run's throughput in one line, as `gprof-dl bench` counts it. */
static void runend_perf(const struct analysis *a, FILE *out, unsigned pid)
{
	if (!a->steps)
		return;
	struct perf p;
	perf_compute(&p, a, PERF_SKIP_DEFAULT);
	if (p.counted) {
		char batch[32], reader[32];
		runend_format_time(batch, sizeof(batch), p.batch_ns.avg);
		runend_format_time(reader, sizeof(reader), p.reader_ns.avg);
		fprintf(out,
			"==%u== Steps: %llu, first %llu skipped: ips %.2f %s (max %.2f, min %.2f), "
			"batch_cost %s, reader_cost %s, Reader Ratio %.2f%% (gprof-dl bench)\n",
			pid, (unsigned long long)p.steps, (unsigned long long)p.skipped, p.ips.avg,
			perf_ips_unit(&p), p.ips.max, p.ips.min, batch, reader, p.reader_ratio);
	}
	perf_free(&p);
}

/* The job's throughput, as `gprof-dl bench FILES` measures it (its
 * jobperf), with each rank's beside it; 0, or -1 (nothing written) when it
 * cannot be measured (a rank without training steps: no DL job). */
static int runend_job_perf(char *const *files, size_t nfiles, FILE *out, unsigned pid)
{
	struct job j;
	struct jobperf jp;
	char err[1024];
	memset(&jp, 0, sizeof(jp));
	if (job_open(&j, (int)nfiles, (char **)files, 0, err, sizeof(err)) != 0)
		return -1;
	int rc = -1;
	if (j.nranks >= 2 && jobperf_measure(&jp, &j, PERF_SKIP_DEFAULT, "measured", err, sizeof(err)) == 0 &&
	    jp.perf.counted) {
		const struct perf *p = &jp.perf;
		int dec = bs_ips_decimals(p->ips.avg);
		char batch[32], reader[32], safe[TEXT_CLEAN_SIZE / 4];
		runend_format_time(batch, sizeof(batch), p->batch_ns.avg);
		runend_format_time(reader, sizeof(reader), p->reader_ns.avg);
		fprintf(out, "==%u== Job of %u ranks: ips %.*f %s over %zu job steps from step %llu (", pid,
			(unsigned)jp.nranks, dec, p->ips.avg, perf_ips_unit(p), p->counted,
			(unsigned long long)jp.first_step);
		for (uint32_t i = 0; i < jp.nranks; i++) {
			if (i == RUNEND_JOB_RANKS_SHOWN) {
				fprintf(out, ", %u more ranks", (unsigned)(jp.nranks - i));
				break;
			}
			fprintf(out, "%srank %d %.*f", i ? ", " : "", (int)jp.ranks[i].rank, dec,
				jp.ranks[i].perf.ips.avg);
		}
		fprintf(out, "), batch_cost %s, reader_cost %s, Reader Ratio %.2f%% (gprof-dl bench", batch, reader,
			p->reader_ratio);
		for (size_t i = 0; i < nfiles; i++) {
			if (i == 4) {
				fprintf(out, " and %zu more", nfiles - i);
				break;
			}
			fprintf(out, " %s", text_clean(safe, sizeof(safe), files[i]));
		}
		fputs(")\n", out);
		rc = 0;
	}
	jobperf_free(&jp);
	job_free(&j);
	return rc;
}

/* gprof-dl advise's three largest findings, a line each. */
static void runend_advice(const struct analysis *a, const char *path, FILE *out, unsigned pid)
{
	struct adv_input in;
	struct adv_list l = {0};
	char safe[TEXT_CLEAN_SIZE], saving[32], file[TEXT_CLEAN_SIZE / 4];
	adv_input_init(&in, a, NULL, &path, 1, PERF_SKIP_DEFAULT);
	adv_run(&in, &l);
	for (size_t i = 0; i < l.n && i < 3; i++) {
		const struct adv_finding *f = &l.v[i];
		runend_format_time(saving, sizeof(saving), f->saving_ns);
		fprintf(out, "==%u== Advice: [%s] %s: %s", pid, adv_severity_name(f->severity),
			f->rule->id, text_clean(safe, sizeof(safe), f->what));
		if (f->saving_ns > 0)
			fprintf(out, " (saving %s per step, an estimate)", saving);
		fputc('\n', out);
	}
	if (l.n)
		fprintf(out, "==%u== Advice: %zu finding%s, evidence and what to try: gprof-dl advise %s\n",
			pid, l.n, l.n == 1 ? "" : "s", text_clean(file, sizeof(file), path));
	adv_list_free(&l);
}

static int run_summary(const char *trace_path, char *const *job_files, size_t njob, FILE *out, unsigned pid)
{
	struct analysis a;
	char err[1024];
	analysis_init(&a);
	if (analysis_load(&a, trace_path, err, sizeof(err)) != 0) {
		char safe[TEXT_CLEAN_SIZE];
		fprintf(out, "==%u== cannot summarise the trace: %s\n", pid,
			text_clean(safe, sizeof(safe), err));
		analysis_free(&a);
		return -1;
	}
	analysis_prepare(&a);
	runend_table(&a, out, pid);
	if (!njob || runend_job_perf(job_files, njob, out, pid) != 0)
		runend_perf(&a, out, pid);
	runend_advice(&a, trace_path, out, pid);
	runend_facts(&a, trace_path, out, pid);
	analysis_free(&a);
	fflush(out);
	return 0;
}

int runend_summary(const char *trace_path, FILE *out, unsigned pid)
{
	return run_summary(trace_path, NULL, 0, out, pid);
}

int runend_job_summary(const char *trace_path, char *const *job_files, size_t njob, FILE *out,
			   unsigned pid)
{
	return run_summary(trace_path, job_files, njob, out, pid);
}

const char *runend_exit_status(char *buf, size_t size, int32_t status, int32_t signal)
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

void runend_rank_lines(FILE *out, unsigned pid, const struct runend_rank *ranks, size_t n,
		       const struct runend_rank *launcher)
{
	char st[48], of[32], safe[TEXT_CLEAN_SIZE];
	int is_rank = 0;
	for (size_t i = 0; i < n; i++) {
		const struct runend_rank *k = &ranks[i];
		of[0] = '\0';
		if (k->world_size > 0)
			snprintf(of, sizeof(of), " of %d", (int)k->world_size);
		fprintf(out, "==%u== Rank %d%s: pid %u, %s, %s\n", pid, (int)k->rank, of, k->pid,
			runend_exit_status(st, sizeof(st), k->exit_status, k->exit_signal),
			text_clean(safe, sizeof(safe), k->path ? k->path : "?"));
		is_rank |= launcher && k->pid == launcher->pid;
	}
	if (launcher && launcher->path && !is_rank)
		fprintf(out, "==%u== Launcher: pid %u, %s, %s\n", pid, launcher->pid,
			runend_exit_status(st, sizeof(st), launcher->exit_status, launcher->exit_signal),
			text_clean(safe, sizeof(safe), launcher->path));
	fflush(out);
}

void runend_ranks(FILE *out, unsigned pid, const struct runend_rank *ranks, size_t n,
		      const char *launcher_path, unsigned launcher_pid, int32_t launcher_status)
{
	struct runend_rank l = {.pid = launcher_pid, .exit_status = launcher_status, .path = launcher_path};
	runend_rank_lines(out, pid, ranks, n, launcher_path ? &l : NULL);
}
