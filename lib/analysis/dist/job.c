/*
 * job.c - the ranks of a distributed job found in its files, and each loaded
 * alone on the job's clock (job.h).
 */
#include "lib/analysis/dist/job.h"

#include "formats/trace/trace_open.h"
#include "formats/trace/trace_ranks.h"
#include "formats/trace/trace_tail.h"
#include "common/parallel.h"
#include "common/progress.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- a file's processes --------------------------------------------------- */

struct scan_proc {
	struct trace_process p;
	char *backend, *job_id;
};

struct scan {
	const struct trace_reader *r;
	struct scan_proc *v;
	uint32_t n, cap;
};

/* The process table, each process image (a pid and its start: an exec makes
 * another) as last described (its end comes later). */
static int scan_process(void *ctx, const struct trace_process *p)
{
	struct scan *sc = ctx;
	const char *backend = trace_reader_string(sc->r, p->backend_str);
	const char *job = p->job_str ? trace_reader_string(sc->r, p->job_str) : "";
	for (uint32_t i = 0; i < sc->n; i++) {
		if (sc->v[i].p.pid == p->pid && sc->v[i].p.start_ns == p->start_ns) {
			free(sc->v[i].backend);
			free(sc->v[i].job_id);
			sc->v[i] = (struct scan_proc){*p, xstrdup(backend), xstrdup(job ? job : "")};
			return 0;
		}
	}
	if (sc->n == sc->cap) {
		sc->cap = sc->cap ? sc->cap * 2 : 16;
		sc->v = xrealloc(sc->v, sc->cap * sizeof(*sc->v));
	}
	sc->v[sc->n++] = (struct scan_proc){*p, xstrdup(backend), xstrdup(job ? job : "")};
	return 0;
}

static void scan_free(struct scan *sc)
{
	for (uint32_t i = 0; i < sc->n; i++) {
		free(sc->v[i].backend);
		free(sc->v[i].job_id);
	}
	free(sc->v);
}

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return (a > b) - (a < b);
}

/* Drops repeats from sorted v[0..n); returns how many are left. */
static uint32_t u32_unique(uint32_t *v, uint32_t n)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

/* ---- building the job ------------------------------------------------------- */

static struct job_rank *job_add_part(struct job *j, int32_t rank, uint32_t file)
{
	j->ranks = xrealloc(j->ranks, (j->nparts + 1) * sizeof(*j->ranks));
	struct job_rank *r = &j->ranks[j->nparts++];
	memset(r, 0, sizeof(*r));
	r->rank = rank;
	r->local_rank = r->world_size = -1;
	r->backend = xstrdup("");
	r->file = file;
	r->exit_status = TRACE_EXIT_UNKNOWN;
	r->exit_signal = -1;
	r->job_id = xstrdup("");
	return r;
}

static const struct trace_process *scan_at(const void *ctx, uint32_t i)
{
	return &((const struct scan *)ctx)->v[i].p;
}

/* The root of a rank's processes (trace_ranks.h). */
static const struct scan_proc *rank_root(const struct scan *sc, int32_t rank)
{
	int64_t i = trace_rank_root(scan_at, sc, sc->n, rank);
	return i >= 0 ? &sc->v[i] : NULL;
}

static void part_from_root(struct job_rank *r, const struct scan_proc *root)
{
	if (!root)
		return;
	r->pid = root->p.pid;
	r->exit_status = root->p.exit_status;
	r->exit_signal = root->p.exit_signal;
	r->end_ns = root->p.end_ns;
	if (r->rank >= 0) {
		r->local_rank = root->p.local_rank;
		r->world_size = root->p.world_size;
		free(r->backend);
		r->backend = xstrdup(root->backend);
		free(r->job_id);
		r->job_id = xstrdup(root->job_id);
	}
}

/* A file whose header names no rank: a part per rank its processes name,
 * and the rest; or the whole file as one part of rank -1. */
static void job_split_file(struct job *j, uint32_t f, const struct scan *sc, uint32_t header_pid)
{
	uint32_t nranked = 0;
	for (uint32_t i = 0; i < sc->n; i++)
		nranked += trace_process_rank(&sc->v[i].p) >= 0;
	if (!nranked) {
		struct job_rank *r = job_add_part(j, -1, f);
		r->pid = header_pid;
		for (uint32_t i = 0; i < sc->n; i++)
			if (sc->v[i].p.pid == header_pid)
				part_from_root(r, &sc->v[i]);
		return;
	}
	uint32_t *ranked = xmalloc(nranked * sizeof(*ranked)), k = 0;
	for (uint32_t i = 0; i < sc->n; i++) {
		int32_t rank = trace_process_rank(&sc->v[i].p);
		if (rank < 0)
			continue;
		ranked[k++] = sc->v[i].p.pid;
		int seen = 0;
		for (uint32_t q = 0; q < i; q++)
			seen |= trace_process_rank(&sc->v[q].p) == rank;
		if (seen)
			continue;
		struct job_rank *r = job_add_part(j, rank, f);
		for (uint32_t q = i; q < sc->n; q++)
			r->npids += trace_process_rank(&sc->v[q].p) == rank;
		r->pids = xmalloc(r->npids * sizeof(*r->pids));
		r->npids = 0;
		for (uint32_t q = i; q < sc->n; q++)
			if (trace_process_rank(&sc->v[q].p) == rank)
				r->pids[r->npids++] = sc->v[q].p.pid;
		qsort(r->pids, r->npids, sizeof(*r->pids), u32_cmp);
		r->npids = u32_unique(r->pids, r->npids); /* an exec'd pid's images */
		part_from_root(r, rank_root(sc, rank));
	}
	qsort(ranked, nranked, sizeof(*ranked), u32_cmp);
	uint32_t nimages = nranked;
	nranked = u32_unique(ranked, nranked);
	if (nimages == sc->n) {
		free(ranked);
		return;
	}
	/* the launcher and whatever no rank claims: all but the ranks' processes */
	struct job_rank *r = job_add_part(j, -1, f);
	r->pids = ranked;
	r->npids = nranked;
	r->exclude = 1;
	r->pid = header_pid;
	for (uint32_t i = 0; i < sc->n; i++)
		if (sc->v[i].p.pid == header_pid)
			part_from_root(r, &sc->v[i]);
}

static int job_open_file(struct job *j, const char *path, char *err, size_t errlen)
{
	struct trace_reader *r = trace_open_any(path, err, errlen);
	if (!r)
		return -1;
	const struct trace_header *h = trace_reader_header(r);
	uint32_t f = j->nfiles++;
	j->files = xrealloc(j->files, j->nfiles * sizeof(*j->files));
	struct job_file *jf = &j->files[f];
	*jf = (struct job_file){xstrdup(path), xstrdup(h->hostname ? h->hostname : ""),
				xstrdup(h->clock_domain && *h->clock_domain ? h->clock_domain
									    : "unknown"),
				h->pid, h->rank, h->wall_offset_ns, h->start_ns, h->end_ns};
	if (!jf->end_ns && trace_tail_end(path, &jf->end_ns) != 0)
		jf->end_ns = 0; /* cut short or imported: not known without reading it all */
	int v13 = h->version_major > 1 || (h->version_major == 1 && h->version_minor >= 3);
	if (h->rank >= 0 || !v13) {
		/* the whole file; its processes' ends are learnt when it loads */
		struct job_rank *part = job_add_part(j, h->rank >= 0 ? h->rank : -1, f);
		part->pid = h->pid;
		if (h->rank >= 0) {
			part->local_rank = h->local_rank;
			part->world_size = h->world_size;
			free(part->backend);
			part->backend = xstrdup(h->dist_backend ? h->dist_backend : "");
			free(part->job_id);
			part->job_id = xstrdup(h->job_id ? h->job_id : "");
		}
		trace_reader_close(r);
		return 0;
	}
	struct scan sc = {.r = r};
	const struct trace_visitor v = {.process = scan_process};
	int rc = trace_reader_run(r, &v, &sc);
	if (rc == 0)
		job_split_file(j, f, &sc, h->pid);
	else
		snprintf(err, errlen, "'%s': cannot read the trace", path);
	scan_free(&sc);
	trace_reader_close(r);
	return rc ? -1 : 0;
}

/* The job's world size, and the ranks below it that no part holds. */
static void job_world(struct job *j)
{
	j->world_size = -1;
	for (uint32_t p = 0; p < j->nranks; p++)
		if (j->ranks[p].world_size > j->world_size)
			j->world_size = j->ranks[p].world_size;
	j->nmissing = 0;
	if (j->world_size > 0 && (uint32_t)j->world_size > j->nranks)
		j->nmissing = (uint32_t)j->world_size - j->nranks;
}

/* Whether rank r has a part (the rank parts are sorted by rank). */
static int job_has_rank(const struct job *j, int32_t r)
{
	uint32_t lo = 0, hi = j->nranks;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (j->ranks[mid].rank < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < j->nranks && j->ranks[lo].rank == r;
}

void job_missing_words(char *buf, size_t size, const struct job *j)
{
	size_t used = (size_t)snprintf(buf, size, "rank%s", j->nmissing > 1 ? "s" : "");
	int32_t from = -1;
	unsigned runs = 0;
	for (int32_t r = 0; r <= j->world_size && used < size; r++) {
		int missing = r < j->world_size && !job_has_rank(j, r);
		if (missing && from < 0)
			from = r;
		if (missing || from < 0)
			continue;
		if (runs++ == 8) {
			snprintf(buf + used, size - used, ", ...");
			return;
		}
		if (r - 1 == from)
			used += (size_t)snprintf(buf + used, size - used, "%s %d", runs > 1 ? "," : "", from);
		else if (r - 2 == from)
			used += (size_t)snprintf(buf + used, size - used, "%s %d, %d", runs > 1 ? "," : "",
						 from, r - 1);
		else
			used += (size_t)snprintf(buf + used, size - used, "%s %d-%d", runs > 1 ? "," : "",
						 from, r - 1);
		from = -1;
	}
}

/* Rank parts first, by rank; then the others in file order. */
static int part_cmp(const void *x, const void *y)
{
	const struct job_rank *a = x, *b = y;
	if ((a->rank < 0) != (b->rank < 0))
		return a->rank < 0 ? 1 : -1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return (a->file > b->file) - (a->file < b->file);
}

/* "rank 3" or "rank 3 of 4" of part p, for the messages below. */
static const char *rank_words(char *buf, size_t size, const struct job *j, uint32_t p, int world)
{
	const struct job_rank *r = &j->ranks[p];
	if (world && r->world_size > 0)
		snprintf(buf, size, "rank %d of %d", r->rank, r->world_size);
	else
		snprintf(buf, size, "rank %d", r->rank);
	return buf;
}

/* "2026-11-28 05:01:09 UTC" of a wall time in ns. */
static const char *wall_words(char *buf, size_t size, int64_t ns)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, size, "%lld ns", (long long)ns);
	return buf;
}

/* That the ranks are one job (job_open()): -1 with the message in err when
 * they are not. */
static int job_check(const struct job *j, char *err, size_t errlen)
{
	char a[64], b[64];
	const char *hint = "--mixed-jobs takes them together";
	for (uint32_t p = 1; p < j->nranks; p++) { /* one job identity */
		const struct job_rank *x = &j->ranks[0], *y = &j->ranks[p];
		for (uint32_t q = 0; q < p && !*x->job_id; q++)
			x = &j->ranks[q];
		if (*x->job_id && *y->job_id && strcmp(x->job_id, y->job_id) != 0) {
			char ia[160], ib[160];
			snprintf(err, errlen, "'%s' (rank %d, job %s) and '%s' (rank %d, job %s) are not of "
					      "one job; %s",
				 j->files[x->file].path, x->rank,
				 text_clean(ia, sizeof(ia), x->job_id), j->files[y->file].path, y->rank,
				 text_clean(ib, sizeof(ib), y->job_id), hint);
			return -1;
		}
	}
	uint32_t first = j->nranks; /* the first rank that says its world size */
	for (uint32_t p = 0; p < j->nranks; p++) {
		if (j->ranks[p].world_size <= 0)
			continue;
		if (first == j->nranks) {
			first = p;
		} else if (j->ranks[p].world_size != j->ranks[first].world_size) {
			snprintf(err, errlen, "'%s' (%s) and '%s' (%s) are not of one job: their world "
					      "sizes differ; %s",
				 j->files[j->ranks[first].file].path, rank_words(a, sizeof(a), j, first, 1),
				 j->files[j->ranks[p].file].path, rank_words(b, sizeof(b), j, p, 1), hint);
			return -1;
		}
	}
	/* runs that were under way at one time: the latest start before the
	 * earliest end (ends unknown of files cut short or imported) */
	int64_t latest = INT64_MIN, earliest = INT64_MAX;
	uint32_t pl = 0, pe = 0;
	for (uint32_t p = 0; p < j->nranks; p++) {
		const struct job_file *f = &j->files[j->ranks[p].file];
		int64_t s = (int64_t)f->start_ns + f->wall_offset_ns;
		if (s > latest) {
			latest = s;
			pl = p;
		}
		int64_t e = (int64_t)f->end_ns + f->wall_offset_ns;
		if (f->end_ns && e < earliest) {
			earliest = e;
			pe = p;
		}
	}
	if (earliest != INT64_MAX && latest > earliest) {
		char t1[64], t2[64];
		snprintf(err, errlen, "'%s' (%s) and '%s' (%s) are not of one job: the first ended at %s, "
				      "before the second began at %s; %s",
			 j->files[j->ranks[pe].file].path, rank_words(a, sizeof(a), j, pe, 0),
			 j->files[j->ranks[pl].file].path, rank_words(b, sizeof(b), j, pl, 0),
			 wall_words(t1, sizeof(t1), earliest), wall_words(t2, sizeof(t2), latest), hint);
		return -1;
	}
	return 0;
}

int job_open(struct job *j, int nfiles, char **paths, unsigned flags, char *err, size_t errlen)
{
	memset(j, 0, sizeof(*j));
	for (int i = 0; i < nfiles; i++) {
		progress_phase("reading the header of '%s'", paths[i]);
		if (job_open_file(j, paths[i], err, errlen) != 0) {
			job_free(j);
			return -1;
		}
	}
	if (j->nparts)
		qsort(j->ranks, j->nparts, sizeof(*j->ranks), part_cmp);
	for (uint32_t p = 0; p < j->nparts && j->ranks[p].rank >= 0; p++) {
		j->nranks++;
		if (p && j->ranks[p - 1].rank == j->ranks[p].rank) {
			snprintf(err, errlen, "the same rank %d in '%s' and '%s'", j->ranks[p].rank,
				 j->files[j->ranks[p - 1].file].path, j->files[j->ranks[p].file].path);
			job_free(j);
			return -1;
		}
	}
	for (uint32_t f = 0; f < j->nfiles; f++) {
		int seen = 0;
		for (uint32_t g = 0; g < f && !seen; g++)
			seen = strcmp(j->files[g].host, j->files[f].host) == 0;
		j->nhosts += !seen;
	}
	j->clock = j->nfiles ? j->files[0].clock : "unknown";
	for (uint32_t f = 1; f < j->nfiles && j->clock; f++)
		if (strcmp(j->files[f].clock, j->clock) != 0)
			j->clock = NULL;
	j->wall_clock = j->nhosts > 1 || !j->clock;
	job_world(j);
	if (!(flags & JOB_OPEN_MIXED) && job_check(j, err, errlen) != 0) {
		job_free(j);
		return -1;
	}
	for (uint32_t p = 0; p < j->nparts; p++) {
		struct job_rank *r = &j->ranks[p];
		if (r->end_ns)
			r->end_ns = (uint64_t)((int64_t)r->end_ns + job_file_shift(j, r->file));
	}
	return 0;
}

int job_open_said(struct job *j, int nfiles, char *const *paths, unsigned flags)
{
	char err[1024];
	if (job_open(j, nfiles, (char **)(uintptr_t)paths, flags, err, sizeof(err)) == 0)
		return 0;
	progress_done();
	error("%s", err);
	return -1;
}

void job_free(struct job *j)
{
	for (uint32_t f = 0; f < j->nfiles; f++) {
		free(j->files[f].path);
		free(j->files[f].host);
		free(j->files[f].clock);
	}
	for (uint32_t p = 0; p < j->nparts; p++) {
		free(j->ranks[p].backend);
		free(j->ranks[p].job_id);
		free(j->ranks[p].pids);
	}
	free(j->files);
	free(j->ranks);
	memset(j, 0, sizeof(*j));
}

/* ---- loading ---------------------------------------------------------------- */

/* job_load() without a word on the progress line: safe on any thread for
 * parts that differ. */
static int load_part(struct job *j, uint32_t p, struct analysis *a, char *err, size_t errlen)
{
	struct job_rank *r = &j->ranks[p];
	const char *path = j->files[r->file].path;
	struct trace_pids pids = {r->pids, r->npids, r->exclude};
	a->store.wall_clock = j->wall_clock;
	if (store_load_part(&a->store, path, r->pids || r->exclude ? &pids : NULL, err, errlen) != 0)
		return -1;
	struct store_file *f = &a->store.files[a->store.nfiles - 1];
	f->pid = r->pid;
	f->rank = r->rank;
	analysis_prepare(a); /* the processes' times are on the job's clock from here */
	/* the root's latest image: the program it exec'd, not the shell before */
	const struct store_process *root = NULL;
	for (uint32_t i = 0; i < a->store.nprocs; i++) {
		const struct store_process *sp = &a->store.procs[i];
		if (sp->pid == r->pid && (!root || sp->start_ns >= root->start_ns))
			root = sp;
	}
	if (root && r->exit_status == TRACE_EXIT_UNKNOWN) {
		r->exit_status = root->exit_status;
		r->exit_signal = root->exit_signal;
	}
	if (root && !r->end_ns)
		r->end_ns = root->end_ns;
	return 0;
}

int job_load(struct job *j, uint32_t p, struct analysis *a, char *err, size_t errlen)
{
	if (p >= j->nparts)
		BUG("job_load of part %u of %u", p, j->nparts);
	progress_phase("reading '%s'", j->files[j->ranks[p].file].path);
	return load_part(j, p, a, err, errlen);
}

/* job_load_each(): loader threads read the parts ahead, at most
 * LOAD_AHEAD of them, each into the slot of its index modulo the window,
 * while the calling thread hands out each part in order and frees it. */
#define LOAD_AHEAD 3

struct load_ahead {
	struct job *j;
	unsigned window;          /* slots: the part in hand and those read ahead */
	struct analysis *a;       /* by slot */
	int *state;               /* by slot: 0 free or being read, 2 read, 3 failed */
	char (*err)[512];         /* by slot */
	uint32_t n;               /* the parts to read */
	uint32_t next, consumed;  /* the next part to read; parts handed out and freed */
	int stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *load_ahead_thread(void *arg)
{
	struct load_ahead *la = arg;
	for (;;) {
		pthread_mutex_lock(&la->mu);
		while (!la->stop && la->next < la->n && la->next >= la->consumed + la->window)
			pthread_cond_wait(&la->cv, &la->mu);
		if (la->stop || la->next >= la->n) {
			pthread_mutex_unlock(&la->mu);
			return NULL;
		}
		uint32_t p = la->next++;
		unsigned k = p % la->window;
		pthread_mutex_unlock(&la->mu);
		analysis_init(&la->a[k]);
		int rc = load_part(la->j, p, &la->a[k], la->err[k], sizeof(la->err[k]));
		pthread_mutex_lock(&la->mu);
		la->state[k] = rc == 0 ? 2 : 3;
		pthread_cond_broadcast(&la->cv);
		pthread_mutex_unlock(&la->mu);
	}
}

int job_load_each(struct job *j, uint32_t n,
		  int (*each)(void *ctx, uint32_t p, struct analysis *a, char *err, size_t errlen),
		  void *ctx, char *err, size_t errlen)
{
	if (n > j->nparts)
		BUG("job_load_each of %u parts of %u", n, j->nparts);
	unsigned loaders = parallel_threads() - 1;
	if (loaders > LOAD_AHEAD)
		loaders = LOAD_AHEAD;
	if (loaders > n)
		loaders = n;
	pthread_t tids[LOAD_AHEAD];
	unsigned started = 0;
	struct load_ahead la = {.j = j, .window = loaders + 1, .n = n};
	la.a = xcalloc(la.window, sizeof(*la.a));
	la.state = xcalloc(la.window, sizeof(*la.state));
	la.err = xcalloc(la.window, sizeof(*la.err));
	pthread_mutex_init(&la.mu, NULL);
	pthread_cond_init(&la.cv, NULL);
	for (unsigned i = 0; i < loaders; i++)
		if (pthread_create(&tids[started], NULL, load_ahead_thread, &la) == 0)
			started++;
	int ret = 0;
	for (uint32_t p = 0; p < n && ret == 0; p++) {
		unsigned k = p % la.window;
		progress_phase("reading '%s'", j->files[j->ranks[p].file].path);
		if (!started) { /* no thread: read here */
			analysis_init(&la.a[k]);
			la.state[k] = load_part(j, p, &la.a[k], la.err[k], sizeof(la.err[k])) == 0 ? 2 : 3;
		}
		pthread_mutex_lock(&la.mu);
		while (la.state[k] < 2)
			pthread_cond_wait(&la.cv, &la.mu);
		pthread_mutex_unlock(&la.mu);
		if (la.state[k] != 2) {
			snprintf(err, errlen, "%s", la.err[k]);
			ret = -1;
		} else if (each(ctx, p, &la.a[k], err, errlen) != 0) {
			ret = -1;
		}
		analysis_free(&la.a[k]);
		pthread_mutex_lock(&la.mu);
		la.state[k] = 0;
		la.consumed = p + 1;
		la.stop = ret != 0;
		pthread_cond_broadcast(&la.cv);
		pthread_mutex_unlock(&la.mu);
	}
	pthread_mutex_lock(&la.mu);
	la.stop = 1;
	pthread_cond_broadcast(&la.cv);
	pthread_mutex_unlock(&la.mu);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	for (unsigned k = 0; k < la.window; k++)
		if (la.state[k] >= 2)
			analysis_free(&la.a[k]); /* read ahead of a failure */
	pthread_mutex_destroy(&la.mu);
	pthread_cond_destroy(&la.cv);
	free(la.a);
	free(la.state);
	free(la.err);
	return ret;
}

int job_load_all(const struct job *j, struct analysis *a, char *err, size_t errlen)
{
	a->store.wall_clock = j->wall_clock;
	for (uint32_t f = 0; f < j->nfiles; f++) {
		progress_phase("reading '%s'", j->files[f].path);
		if (store_load(&a->store, j->files[f].path, err, errlen) != 0)
			return -1;
	}
	analysis_prepare(a);
	return 0;
}

void job_warn_damage(const struct analysis *a, uint32_t from, const char *done)
{
	for (uint32_t i = from; i < a->store.nfiles; i++) {
		const struct store_file *f = &a->store.files[i];
		if (!f->damage)
			continue;
		progress_done();
		warning("trace '%s' is damaged at offset %llu: %s; %s up to there", f->path,
			(unsigned long long)f->damage_offset, f->damage, done);
	}
}

int job_load_files(struct analysis *a, int nfiles, char **paths, const char *done)
{
	for (int i = 0; i < nfiles; i++) {
		char err[1024];
		progress_phase("reading '%s'", paths[i]);
		if (analysis_load(a, paths[i], err, sizeof(err)) != 0) {
			progress_done();
			error("%s", err);
			return -1;
		}
		job_warn_damage(a, a->store.nfiles - 1, done);
	}
	analysis_prepare(a);
	return 0;
}

const char *job_part_name(char *buf, size_t size, const struct job *j, uint32_t p)
{
	const struct job_rank *r = &j->ranks[p];
	if (r->rank >= 0)
		snprintf(buf, size, "rank %d", r->rank);
	else
		snprintf(buf, size, "pid %u", r->pid);
	return buf;
}

/* ---- the job clock, for the exports of a job ---------------------------------- */

const struct export_filter *job_part_filter(const struct job *j, uint32_t p,
					    struct export_filter *f)
{
	const struct job_rank *r = &j->ranks[p];
	if (!r->pids && !r->exclude)
		return NULL;
	int rest = 0, first = 1;
	for (uint32_t q = 0; q < j->nparts; q++) {
		if (j->ranks[q].file != r->file)
			continue;
		rest |= j->ranks[q].exclude;
		first &= q >= p;
	}
	*f = (struct export_filter){{r->pids, r->npids, r->exclude}, rest ? r->exclude : first};
	return f;
}

int64_t job_file_shift(const struct job *j, uint32_t f)
{
	return j->wall_clock ? j->files[f].wall_offset_ns : 0;
}

void job_part_title(char *buf, size_t size, const struct job *j, uint32_t p)
{
	const struct job_rank *r = &j->ranks[p];
	const char *host = j->files[r->file].host;
	char who[64];
	if (r->rank >= 0)
		snprintf(who, sizeof(who), "rank %d", r->rank);
	else
		snprintf(who, sizeof(who), "%s", j->nranks ? "launcher" : "trace");
	if (*host)
		snprintf(buf, size, "%s (pid %u, host %s)", who, r->pid, host);
	else
		snprintf(buf, size, "%s (pid %u)", who, r->pid);
}

uint32_t job_part_out_pid(const struct job *j, uint32_t p)
{
	for (uint32_t q = 0; q < j->nparts; q++)
		if (q != p && j->ranks[q].pid == j->ranks[p].pid)
			return 0x50000000u + p;
	return j->ranks[p].pid;
}

void job_clock_base(const struct job *j, uint64_t *base, int64_t *wall)
{
	uint32_t first = 0;
	*base = UINT64_MAX;
	for (uint32_t f = 0; f < j->nfiles; f++) {
		uint64_t s = j->files[f].start_ns + (uint64_t)job_file_shift(j, f);
		if (s < *base) {
			*base = s;
			first = f;
		}
	}
	if (!j->nfiles)
		*base = 0;
	*wall = j->wall_clock ? 0 : j->nfiles ? j->files[first].wall_offset_ns : 0;
}
