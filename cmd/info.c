/*
 * info.c - gprof-dl info: what is in a trace file, in plain text.
 *
 *   gprof-dl info FILE...
 *
 * Header, processes, ranks (when the file holds several), threads, record
 * counts, counters, drops and damage, for a person checking a recording
 * before they analyse it. One read of the file; memory grows with the number
 * of threads and processes, never with the number of events. Times of
 * processes and threads are seconds from the trace's start.
 *
 * Exit status: 0 when every file was a trace (a damaged one included: saying
 * where the damage is is this command's job), 1 when any was not, 2 usage.
 */
#include "cmd/cmd.h"
#include "formats/trace/trace_open.h"
#include "formats/trace/trace.h"
#include "formats/trace/trace_ranks.h"
#include "formats/trace/capture.h"
#include "common/error.h"
#include "common/hmap.h"
#include "common/textsafe.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char info_usage[] = "usage: gprof-dl info FILE...\n"
				 "\n"
				 "    -h, --help     show this help\n";

#define INFO_OTHER_TYPE TRACE_EV_TYPE_COUNT /* types this build cannot name */
#define INFO_MAX_COUNTER 16                 /* ids above are counted as one */

struct counter_stats {
	uint64_t n;
	double min, max, sum;
};

struct thread_stats {
	uint64_t events, drops;
};

/* A rank of the file (1.3): its processes are those whose PROC record names
 * it; its root is trace_rank_root()'s (torchrun's child, not a DataLoader
 * worker; the program a launcher's shell exec'd, not the shell). */
struct rank_stats {
	int32_t rank, local_rank, world_size;
	uint32_t backend_str;
	uint32_t procs;
	const struct trace_process *root;
	uint64_t events;
};

struct info {
	struct trace_reader *r;
	uint64_t events, ranges, marks, open_at_exit, unbalanced, start_end, truncated;
	uint64_t by_type[TRACE_EV_TYPE_COUNT + 1];
	struct counter_stats counters[INFO_MAX_COUNTER + 1];
	struct thread_stats *threads; /* by thread index */
	uint32_t nthreads;
	struct rank_stats *ranks; /* by rank, after the read */
	uint32_t nranks;
	struct capture capture; /* the window recorded in full detail (capture.h) */
};

static struct thread_stats *thread_stats(struct info *in, uint32_t index)
{
	in->threads = xgrow_zeroed(in->threads, &in->nthreads, index, sizeof(*in->threads));
	return &in->threads[index];
}

static int on_event(void *ctx, const struct trace_event *e)
{
	struct info *in = ctx;
	const struct trace_desc *d = trace_reader_desc(in->r, e->desc);
	unsigned type = d && d->type < TRACE_EV_TYPE_COUNT ? d->type : INFO_OTHER_TYPE;
	in->events++;
	in->by_type[type]++;
	if (e->flags & TRACE_EVF_UNBALANCED_POP)
		in->unbalanced++;
	else if (e->flags & TRACE_EVF_MARK)
		in->marks++;
	else
		in->ranges++;
	in->open_at_exit += (e->flags & TRACE_EVF_OPEN_AT_EXIT) != 0;
	in->start_end += (e->flags & TRACE_EVF_START_END) && !(e->flags & TRACE_EVF_MARK);
	in->truncated += (e->flags & TRACE_EVF_NAME_TRUNCATED) != 0;
	thread_stats(in, e->thread)->events++;
	capture_reader_event(&in->capture, in->r, e);
	return 0;
}

static int on_counter(void *ctx, const struct trace_counter *c)
{
	struct info *in = ctx;
	struct counter_stats *s = &in->counters[c->id < INFO_MAX_COUNTER ? c->id : INFO_MAX_COUNTER];
	if (isnan(c->value))
		return 0;
	if (s->n == 0 || c->value < s->min)
		s->min = c->value;
	if (s->n == 0 || c->value > s->max)
		s->max = c->value;
	s->sum += c->value;
	s->n++;
	return 0;
}

static int on_drops(void *ctx, uint32_t thread, uint64_t dropped)
{
	thread_stats(ctx, thread)->drops += dropped;
	return 0;
}

/* ---- printing ------------------------------------------------------------ */

/* Strings from a file go to a terminal in their terminal form
 * (common/textsafe.h): a name cannot move the cursor or change colours.
 * Long ones are cut with "...". */
#define CLEAN_MAX 4096
static const char *clean(const char *str, char *buf)
{
	return text_clean(buf, CLEAN_MAX, str ? str : "");
}

static void print_field(const char *name, const char *fmt, ...) GPDL_PRINTF(2, 3);
static void print_field(const char *name, const char *fmt, ...)
{
	va_list ap;
	printf("  %-18s ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Seconds from the trace's start, or "-" for a time never recorded. */
static const char *rel_seconds(char *buf, size_t len, const struct trace_header *h, uint64_t ns)
{
	if (!ns)
		return "-";
	snprintf(buf, len, "%.6f", (double)(int64_t)(ns - h->start_ns) / 1e9);
	return buf;
}

static void print_wall_time(const struct trace_header *h)
{
	int64_t wall = (int64_t)h->start_ns + h->wall_offset_ns;
	time_t s = (time_t)(wall >= 0 ? wall / 1000000000 : (wall - 999999999) / 1000000000);
	long ns = (long)(wall - (int64_t)s * 1000000000);
	struct tm tm;
	char date[64] = "?", zone[16] = "";
	if (localtime_r(&s, &tm)) {
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
		strftime(zone, sizeof(zone), "%z", &tm);
	}
	print_field("start", "%s.%09ld %s (clock %.9f s)", date, ns, zone,
		    (double)h->start_ns / 1e9);
}

/* The job the file is of (2.1): its header's; for a file of several ranks
 * recorded whole, whose header could not know it, the job its ranks'
 * processes name when they name one; "" unknown. */
static const char *header_job(const struct info *in, const struct trace_header *h)
{
	const char *job = NULL;
	if (h->job_id && *h->job_id)
		return h->job_id;
	for (uint32_t i = 0; i < trace_reader_process_count(in->r); i++) {
		const struct trace_process *p = trace_reader_process(in->r, i);
		if (p->rank < 0)
			continue;
		const char *j = trace_reader_string(in->r, p->job_str);
		if (!*j || (job && strcmp(job, j) != 0))
			return "";
		job = j;
	}
	return job ? job : "";
}

/* The rank fields of the header: a rank's own file says which rank it is;
 * a file of several ranks says so, and the ranks table lists them. */
static void print_header_rank(const struct info *in, const struct trace_header *h)
{
	char buf[CLEAN_MAX];

	if (h->rank >= 0)
		print_field("rank", "%" PRId32, h->rank);
	else if (in->nranks > 1)
		print_field("rank", "none (%" PRIu32 " ranks in this file: see ranks)", in->nranks);
	else
		print_field("rank", "none (not a distributed run)");
	if (h->rank >= 0 && h->local_rank >= 0)
		print_field("local rank", "%" PRId32, h->local_rank);
	else if (h->rank >= 0)
		print_field("local rank", "unknown");
	if (h->world_size > 0)
		print_field("world size", "%" PRId32, h->world_size);
	if (h->dist_backend && *h->dist_backend)
		print_field("backend", "%s", clean(h->dist_backend, buf));
	const char *job = header_job(in, h);
	if (*job)
		print_field("job", "%s", clean(job, buf));
	else if (in->nranks > 0 && h->version_major * 100 + h->version_minor >= 201)
		print_field("job", "unknown");
}

static void print_header(const struct info *in, const struct trace_header *h)
{
	const struct trace_reader *r = in->r;

	print_field("format version", "%u.%u", h->version_major, h->version_minor);
	char buf[CLEAN_MAX];
	print_field("recorded by", "%s", clean(h->gprof_version, buf));
	print_field("file size", "%" PRIu64 " bytes", trace_reader_file_size(r));
	print_field("host", "%s", clean(h->hostname, buf));
	print_field("pid", "%" PRIu32, h->pid);
	print_header_rank(in, h);
	print_field("command line", "%s", clean(h->cmdline, buf));
	print_field("clock domain", "%s, wall offset %+.9f s", clean(h->clock_domain, buf),
		    (double)h->wall_offset_ns / 1e9);
	print_wall_time(h);
	if (h->end_ns >= h->start_ns && h->end_ns)
		print_field("duration", "%.6f s", (double)(h->end_ns - h->start_ns) / 1e9);
	else
		print_field("duration", "unknown (no end recorded)");
	print_field("cpus", "%" PRIu32, h->ncpus);
	char sources[64];
	snprintf(sources, sizeof(sources), "%s%s%s%s", h->sources & TRACE_SRC_NVTX ? " nvtx" : "",
		 h->sources & TRACE_SRC_CUPTI ? " cupti" : "",
		 h->sources & TRACE_SRC_PYTHON ? " python" : "", h->sources ? "" : " none");
	print_field("sources", "%s", sources + 1);
	char window[1024];
	if (capture_describe(&in->capture, window, sizeof(window)))
		print_field("recorded", "%s", window);
}

/* An exit status as a column shows it: the code; "killed:N" when signal N
 * killed it (2.1: a file before 2.1 does not say, and shows 128+N, which
 * may be either); "killed" for a process that died without exiting, its
 * signal unknown; "?" unknown. */
static const char *exit_text(char *buf, size_t len, int32_t status, int32_t signal)
{
	if (signal > 0)
		snprintf(buf, len, "killed:%" PRId32, signal);
	else if (status >= 0)
		snprintf(buf, len, "%" PRId32, status);
	else
		snprintf(buf, len, "%s", status == TRACE_EXIT_KILLED ? "killed" : "?");
	return buf;
}

/* A rank, or "-" for a process that is no rank's. */
static const char *rank_text(char *buf, size_t len, int32_t rank)
{
	if (rank < 0)
		return "-";
	snprintf(buf, len, "%" PRId32, rank);
	return buf;
}

static void print_processes(const struct trace_reader *r, const struct trace_header *h)
{
	uint32_t n = trace_reader_process_count(r);
	char a[32], b[32], e[24], k[16], buf[CLEAN_MAX];
	printf("\nprocesses: %" PRIu32 "\n", n);
	if (!n)
		return;
	printf("  %8s %8s %5s %12s %12s %8s  %s\n", "PID", "PPID", "RANK", "START(s)", "END(s)",
	       "EXIT", "COMMAND");
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_process *p = trace_reader_process(r, i);
		if (!p)
			continue;
		printf("  %8" PRIu32 " %8" PRIu32 " %5s %12s %12s %8s  %s\n", p->pid, p->ppid,
		       rank_text(k, sizeof(k), p->rank), rel_seconds(a, sizeof(a), h, p->start_ns),
		       rel_seconds(b, sizeof(b), h, p->end_ns),
		       exit_text(e, sizeof(e), p->exit_status, p->exit_signal),
		       clean(trace_reader_string(r, p->cmdline_str), buf));
	}
}

/* ---- ranks (1.3) ---------------------------------------------------------- */

/* The process a pid names at time t: the latest of that pid started by then
 * (pids are reused), or NULL. by_pid maps a pid to its last process. */
static const struct trace_process *process_at(const struct trace_reader *r,
					      const struct hmap *by_pid, uint32_t pid, uint64_t t)
{
	const uint64_t *last = hmap_get(by_pid, pid, 0);

	if (!last)
		return NULL;
	for (uint32_t i = (uint32_t)*last + 1; i-- > 0;) {
		const struct trace_process *p = trace_reader_process(r, i);
		if (p->pid == pid && p->start_ns <= t)
			return p;
	}
	return NULL;
}

static const struct trace_process *reader_process_at(const void *ctx, uint32_t i)
{
	return trace_reader_process(ctx, i);
}

static struct rank_stats *rank_of(struct info *in, int32_t rank)
{
	for (uint32_t i = 0; i < in->nranks; i++)
		if (in->ranks[i].rank == rank)
			return &in->ranks[i];
	return NULL;
}

static int rank_cmp(const void *a, const void *b)
{
	const struct rank_stats *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Groups the processes by the rank their PROC record names, after the read:
 * each rank's processes, root and events (those of its processes' threads). */
static void collect_ranks(struct info *in)
{
	uint32_t n = trace_reader_process_count(in->r);
	struct hmap by_pid;

	hmap_init(&by_pid);
	in->ranks = xcalloc(n ? n : 1, sizeof(*in->ranks));
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_process *p = trace_reader_process(in->r, i);
		struct rank_stats *s;
		hmap_put(&by_pid, p->pid, 0, i);
		if (trace_process_rank(p) < 0)
			continue;
		if (!(s = rank_of(in, p->rank))) {
			s = &in->ranks[in->nranks++];
			*s = (struct rank_stats){ p->rank, p->local_rank, p->world_size,
						  p->backend_str, 0, NULL, 0 };
		}
		s->procs++;
	}
	for (uint32_t k = 0; k < in->nranks; k++) { /* the one rule (trace_ranks.h) */
		int64_t i = trace_rank_root(reader_process_at, in->r, n, in->ranks[k].rank);
		in->ranks[k].root = i >= 0 ? trace_reader_process(in->r, (uint32_t)i) : NULL;
	}
	for (uint32_t i = 0; i < trace_reader_thread_count(in->r); i++) {
		const struct trace_thread *t = trace_reader_thread(in->r, i);
		const struct trace_process *p = process_at(in->r, &by_pid, t->pid, t->start_ns);
		struct rank_stats *s = p && trace_process_rank(p) >= 0 ? rank_of(in, p->rank) : NULL;
		if (s)
			s->events += thread_stats(in, i)->events;
	}
	hmap_free(&by_pid);
	qsort(in->ranks, in->nranks, sizeof(*in->ranks), rank_cmp);
}

/* One line per rank, when the file holds several (one recording of a
 * launcher): which process is each rank, how it ended, how much it recorded. */
static void print_ranks(const struct info *in)
{
	char e[24], l[16], w[16], buf[CLEAN_MAX];

	if (in->nranks < 2)
		return;
	printf("\nranks: %" PRIu32 "\n", in->nranks);
	printf("  %5s %5s %5s %8s %6s %8s %10s  %s\n", "RANK", "LOCAL", "WORLD", "PID", "PROCS",
	       "EXIT", "EVENTS", "BACKEND");
	for (uint32_t i = 0; i < in->nranks; i++) {
		const struct rank_stats *s = &in->ranks[i];
		char pid[16] = "?";
		if (s->root)
			snprintf(pid, sizeof(pid), "%" PRIu32, s->root->pid);
		printf("  %5" PRId32 " %5s %5s %8s %6" PRIu32 " %8s %10" PRIu64 "  %s\n", s->rank,
		       rank_text(l, sizeof(l), s->local_rank), rank_text(w, sizeof(w), s->world_size),
		       pid, s->procs,
		       s->root ? exit_text(e, sizeof(e), s->root->exit_status, s->root->exit_signal) : "?",
		       s->events, clean(trace_reader_string(in->r, s->backend_str), buf));
	}
}

/* The GPUs the trace describes (1.1): what blocks per SM and occupancy are
 * computed from. */
static void print_devices(const struct trace_reader *r)
{
	uint32_t n = trace_reader_device_count(r);
	char buf[CLEAN_MAX];
	if (!n)
		return;
	printf("\ndevices: %" PRIu32 "\n", n);
	printf("  %3s %5s %5s %10s %10s %10s  %s\n", "ID", "CC", "SMS", "THR/SM", "MEM(GB)", "CLOCK(MHz)",
	       "NAME");
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_device *d = trace_reader_device(r, i);
		if (!d)
			continue;
		char cc[16];
		snprintf(cc, sizeof(cc), "%u.%u", (unsigned)d->cc_major, (unsigned)d->cc_minor);
		printf("  %3" PRIu32 " %5s %5" PRIu32 " %10" PRIu32 " %10.1f %10.0f  %s\n", d->id, cc,
		       d->sm_count, d->max_threads_per_sm, (double)d->total_memory / 1e9 /* SI, as every size */,
		       d->clock_khz / 1000.0, clean(trace_reader_string(r, d->name_str), buf));
	}
}

static void print_threads(struct info *in, const struct trace_header *h)
{
	uint32_t n = trace_reader_thread_count(in->r);
	char a[32], b[32], buf[CLEAN_MAX];
	printf("\nthreads: %" PRIu32 "\n", n);
	if (!n)
		return;
	printf("  %5s %8s %8s %12s %12s %10s %8s  %s\n", "INDEX", "PID", "TID", "START(s)",
	       "END(s)", "EVENTS", "DROPS", "NAME");
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_thread *t = trace_reader_thread(in->r, i);
		if (!t)
			continue;
		struct thread_stats *s = thread_stats(in, t->index);
		const char *name = clean(trace_reader_string(in->r, t->name_str), buf);
		char stream[96];
		if (t->kind == TRACE_TRACK_STREAM) {
			/* a GPU stream has no tid: say which stream it is */
			if (*name)
				snprintf(stream, sizeof(stream), "%.64s (GPU%" PRIu32 ")", name, t->device);
			else
				snprintf(stream, sizeof(stream), "GPU%" PRIu32 " stream %" PRIu64, t->device,
					 t->stream);
			name = stream;
		}
		printf("  %5" PRIu32 " %8" PRIu32 " %8" PRIu32 " %12s %12s %10" PRIu64
		       " %8" PRIu64 "  %s\n",
		       t->index, t->pid, t->tid, rel_seconds(a, sizeof(a), h, t->start_ns),
		       rel_seconds(b, sizeof(b), h, t->end_ns), s->events, s->drops, name);
	}
}

static void print_records(const struct info *in)
{
	char name[64];
	printf("\nrecords\n");
	print_field("events", "%" PRIu64, in->events);
	print_field("  ranges", "%" PRIu64, in->ranges);
	print_field("  marks", "%" PRIu64, in->marks);
	print_field("  unbalanced pops", "%" PRIu64, in->unbalanced);
	print_field("  open at exit", "%" PRIu64, in->open_at_exit);
	print_field("  start/end", "%" PRIu64, in->start_end);
	print_field("  truncated names", "%" PRIu64, in->truncated);
	printf("  by type\n");
	for (unsigned t = 0; t <= INFO_OTHER_TYPE; t++) {
		if (!in->by_type[t])
			continue;
		snprintf(name, sizeof(name), "  %s",
			 t == INFO_OTHER_TYPE ? "(unknown)" : trace_event_type_name(t));
		print_field(name, "%" PRIu64, in->by_type[t]);
	}
	if (!in->events)
		printf("    none\n");
}

static void print_counters(const struct info *in)
{
	char name[64];
	int any = 0;
	printf("\ncounters\n");
	for (unsigned id = 0; id <= INFO_MAX_COUNTER; id++) {
		const struct counter_stats *s = &in->counters[id];
		if (!s->n)
			continue;
		any = 1;
		/* CPU counters are percentages, RSS is shown in MiB */
		double scale = id == TRACE_CTR_RSS_BYTES ? 1.0 / (1024 * 1024) : 1.0;
		const char *unit = id == TRACE_CTR_RSS_BYTES ? " MiB"
				   : id == TRACE_CTR_CPU_PROCESS || id == TRACE_CTR_CPU_SYSTEM ? "%"
												: "";
		snprintf(name, sizeof(name), "%s",
			 id == INFO_MAX_COUNTER ? "(unknown)" : trace_counter_name(id));
		print_field(name, "%" PRIu64 " sample%s, min %.1f%s, mean %.1f%s, max %.1f%s", s->n,
			    s->n == 1 ? "" : "s", s->min * scale, unit,
			    s->sum / (double)s->n * scale, unit, s->max * scale, unit);
	}
	if (!any)
		printf("  none\n");
}

static void print_drops_and_damage(struct info *in)
{
	uint64_t offset = 0;
	const char *damage = trace_reader_damage(in->r, &offset);
	uint64_t total = trace_reader_total_drops(in->r);
	uint32_t threads = 0;
	for (uint32_t i = 0; i < in->nthreads; i++)
		threads += in->threads[i].drops != 0;
	printf("\n");
	uint64_t ring = trace_reader_drops_by_reason(in->r, TRACE_DROP_RING_FULL);
	if (total && total == ring)
		print_field("drops", "%" PRIu64 " records lost (ring full) in %" PRIu32 " thread%s",
			    total, threads, threads == 1 ? "" : "s");
	else if (total)
		print_field("drops", "%" PRIu64 " records lost in %" PRIu32 " thread%s, %" PRIu64
			    " of them to a full ring", total, threads, threads == 1 ? "" : "s", ring);
	else
		print_field("drops", "none");
	/* what an import dropped or repaired, by reason (trace.h) */
	for (unsigned why = 1; why <= TRACE_DROP_REASON_COUNT; why++) {
		uint64_t n = trace_reader_drops_by_reason(in->r, why);
		if (n)
			print_field(trace_drop_reason_is_loss(why) ? "dropped" : "repaired",
				    "%" PRIu64 " event%s: %s", n, n == 1 ? "" : "s",
				    trace_drop_reason_name(why));
	}
	if (damage)
		print_field("damage", "%s at offset %" PRIu64 " of %" PRIu64
			    " bytes; the records before it are shown",
			    damage, offset, trace_reader_file_size(in->r));
	else
		print_field("damage", "none");
}

static int info_one(const char *path)
{
	static const struct trace_visitor visitor = {
		.event = on_event,
		.counter = on_counter,
		.drops = on_drops,
	};
	char err[512];
	struct info in = {0};
	in.r = trace_open_any(path, err, sizeof(err));
	if (!in.r) {
		error("%s", err);
		return 1;
	}
	trace_reader_run(in.r, &visitor, &in);
	capture_finish(&in.capture);
	const struct trace_header *h = trace_reader_header(in.r);
	collect_ranks(&in);
	text_fputs(path, stdout);
	putchar('\n');
	if (h)
		print_header(&in, h);
	if (h) {
		print_processes(in.r, h);
		print_ranks(&in);
		print_devices(in.r);
		print_threads(&in, h);
	}
	print_records(&in);
	print_counters(&in);
	print_drops_and_damage(&in);
	free(in.threads);
	free(in.ranks);
	capture_free(&in.capture);
	trace_reader_close(in.r);
	return 0;
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	opterr = 0;
	optind = 1;
	while ((c = cmd_getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(info_usage, stdout);
			return 0;
		}
		usage_error("unknown option '%s'", argv[optind - 1]);
	}
	if (optind >= argc)
		usage_error("no trace file given");
	int status = 0;
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			putchar('\n');
		if (info_one(argv[i]) != 0)
			status = 1;
		fflush(stdout);
	}
	return status;
}
