#include "lib/recorder/recorder.h"

#include "formats/trace/trace.h"
#include "gpdl-config.h"
#include "lib/collector/gprof-dl-nvtx.h"
#include "lib/common/clock.h"
#include "lib/common/error.h"
#include "lib/common/hmap.h"
#include "lib/recorder/cpu_sampler.h"
#include "lib/ring/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFER_POLLS 3 /* polls a record waits for a string before it is named "<unknown>" */
#define FLUSH_INTERVAL_NS 1000000000ull
#define LIVENESS_INTERVAL_NS 100000000ull

struct rec_thread {
	struct trace_thread t;
	uint64_t dropped; /* written so far */
};

struct rec_process {
	struct trace_process p;
	int seen_start; /* the collector reported it (not just the launcher's guess) */
	int alive;
};

struct slot_state {
	uint32_t generation;
	int32_t thread; /* rec_thread index, -1 when none yet */
	uint64_t dropped_seen;
};

struct pending_start {
	uint64_t ts;
	uint32_t name, domain, category, flags;
	uint32_t thread;
};

struct deferred {
	uint32_t slot;
	uint32_t polls;
	unsigned char rec[sizeof(struct ring_range_ext) + 8];
	unsigned char *big; /* records larger than rec[] (strings never defer) */
};

struct recorder {
	struct recorder_opts opts;
	char *out_path;
	int memfd;
	struct ring_shm *shm;
	size_t shm_len;
	char shm_env[64];
	struct trace_writer *w;

	uint32_t *strmap; /* ring string id -> file string id */
	size_t strmap_cap;
	uint32_t gprofdl_domain; /* file string id of "gprof-dl", 0 until seen */
	struct hmap descs;       /* (name | domain << 32, category) -> desc id */
	struct hmap starts;      /* range id -> struct pending_start * */
	struct hmap ends;        /* range id -> end ts, for an End drained before its Start */
	struct hmap end_threads; /* range id -> thread of that End */

	struct rec_thread *threads;
	uint32_t nthreads, threads_cap;
	struct rec_process *procs;
	uint32_t nprocs, procs_cap;
	struct slot_state *slots;

	struct deferred *deferred;
	size_t ndeferred, deferred_cap;
	/* Processes that exec'd, whose old image's threads are finished once the
	 * current drain pass is over: finishing drains, and a drain must not
	 * start inside another (they share buf). */
	struct exec_end {
		uint32_t pid;
		uint64_t ts;
	} *execs;
	size_t nexecs, execs_cap;
	uint64_t unknown_strings;

	struct cpu_sampler cpu;
	uint64_t next_sample, next_flush, next_liveness;
	unsigned char *buf;
	pid_t root;
	uint64_t events, start_ns;
	int failed;
};

/* ---- creation ------------------------------------------------------------ */

struct recorder *recorder_create(const struct recorder_opts *opts)
{
	struct recorder *r = xcalloc(1, sizeof(*r));
	r->opts = *opts;
	r->memfd = -1;
	r->out_path = xstrdup(opts->out_path);
	r->w = trace_writer_open(opts->out_path, opts->force);
	if (!r->w) {
		if (errno == EEXIST)
			error("'%s' exists: choose another name with -o, or overwrite it with --force",
			      opts->out_path);
		else
			error("cannot create '%s': %s", opts->out_path, strerror(errno));
		free(r->out_path);
		free(r);
		return NULL;
	}
	r->memfd = memfd_create("gprof-dl-rings", MFD_CLOEXEC);
	r->shm_len = ring_shm_size(opts->nslots, opts->ring_bytes);
	if (r->memfd < 0 || ftruncate(r->memfd, (off_t)r->shm_len) != 0) {
		error("cannot create the shared memory for the collector: %s", strerror(errno));
		recorder_abort(r);
		return NULL;
	}
	r->shm = mmap(NULL, r->shm_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
	if (r->shm == MAP_FAILED) {
		error("cannot map the shared memory for the collector: %s", strerror(errno));
		r->shm = NULL;
		recorder_abort(r);
		return NULL;
	}
	ring_shm_init(r->shm, opts->nslots, opts->ring_bytes, (uint32_t)getpid());
	snprintf(r->shm_env, sizeof(r->shm_env), "/proc/%d/fd/%d", (int)getpid(), r->memfd);
	r->slots = xcalloc(opts->nslots, sizeof(*r->slots));
	for (uint32_t i = 0; i < opts->nslots; i++)
		r->slots[i].thread = -1;
	r->buf = xmalloc(opts->ring_bytes);
	hmap_init(&r->descs);
	hmap_init(&r->starts);
	hmap_init(&r->ends);
	hmap_init(&r->end_threads);
	cpu_sampler_init(&r->cpu);
	return r;
}

const char *recorder_shm_env(const struct recorder *r)
{
	return r->shm_env;
}

static struct rec_process *process_find(struct recorder *r, uint32_t pid, int alive_only)
{
	for (uint32_t i = r->nprocs; i-- > 0;)
		if (r->procs[i].p.pid == pid && (!alive_only || r->procs[i].alive))
			return &r->procs[i];
	return NULL;
}

static struct rec_process *process_add(struct recorder *r, uint32_t pid, uint32_t ppid, uint64_t ts)
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
	p->p.exit_status = -1;
	p->alive = 1;
	return p;
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *s = xmalloc(len), *p = s;
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]);
		if (i)
			*p++ = ' ';
		memcpy(p, argv[i], n);
		p += n;
	}
	*p = '\0';
	return s;
}

/* The first of the launchers' variables that is set (torchrun, Open MPI, MPICH,
 * Slurm), or -1. */
static int32_t env_first(const char *const *vars, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return (int32_t)strtol(v, NULL, 10);
	}
	return -1;
}

static int32_t env_rank(void)
{
	static const char *const vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
	return env_first(vars, sizeof(vars) / sizeof(vars[0]));
}

static int32_t env_world_size(void)
{
	static const char *const vars[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
	return env_first(vars, sizeof(vars) / sizeof(vars[0]));
}

int recorder_begin(struct recorder *r, pid_t root, int argc, char **argv, uint32_t sources)
{
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	char *cmdline = join_args(argc, argv);
	struct trace_header h = {
		.version_major = TRACE_FORMAT_VERSION_MAJOR,
		.version_minor = TRACE_FORMAT_VERSION_MINOR,
		.sources = sources,
		.clock_domain = GPDL_CLOCK_DOMAIN,
		.wall_offset_ns = clock_wall_offset_ns(),
		.hostname = host,
		.pid = (uint32_t)root,
		.rank = env_rank(),
		.cmdline = cmdline,
		.start_ns = clock_now_ns(),
		.ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN),
		.gprof_version = GPDL_VERSION,
		.world_size = env_world_size(),
		.dist_backend = "",
	};
	r->root = root;
	r->start_ns = h.start_ns;
	int rc = trace_writer_header(r->w, &h);
	struct rec_process *p = process_add(r, (uint32_t)root, (uint32_t)getpid(), h.start_ns);
	p->p.cmdline_str = trace_writer_string(r->w, cmdline, strlen(cmdline));
	free(cmdline);
	r->next_sample = h.start_ns;
	r->next_flush = h.start_ns + FLUSH_INTERVAL_NS;
	r->next_liveness = h.start_ns + LIVENESS_INTERVAL_NS;
	return rc;
}

/* ---- strings, descs, threads -------------------------------------------- */

static int string_known(const struct recorder *r, uint32_t ring_id)
{
	return ring_id == 0 || (ring_id < r->strmap_cap && r->strmap[ring_id] != 0);
}

static uint32_t string_file_id(const struct recorder *r, uint32_t ring_id)
{
	return ring_id < r->strmap_cap ? r->strmap[ring_id] : 0;
}

static void string_define(struct recorder *r, uint32_t ring_id, const char *s, size_t len)
{
	if (ring_id == 0 || ring_id > (1u << 30))
		return;
	if (ring_id >= r->strmap_cap) {
		size_t cap = r->strmap_cap ? r->strmap_cap : 1024;
		while (cap <= ring_id)
			cap *= 2;
		r->strmap = xrealloc(r->strmap, cap * sizeof(*r->strmap));
		memset(r->strmap + r->strmap_cap, 0, (cap - r->strmap_cap) * sizeof(*r->strmap));
		r->strmap_cap = cap;
	}
	uint32_t id = trace_writer_string(r->w, s, len);
	r->strmap[ring_id] = id;
	if (!r->gprofdl_domain && len == strlen(GPROF_DL_NVTX_DOMAIN) && memcmp(s, GPROF_DL_NVTX_DOMAIN, len) == 0)
		r->gprofdl_domain = id;
}

/* A string id whose STRING record never came (it did not fit in a full ring):
 * name it by its id rather than lose the event. */
static void string_give_up(struct recorder *r, uint32_t ring_id)
{
	if (string_known(r, ring_id))
		return;
	char name[48];
	int n = snprintf(name, sizeof(name), "<unknown name %u>", ring_id);
	string_define(r, ring_id, name, (size_t)n);
	r->unknown_strings++;
}

static uint8_t event_type_of(const struct recorder *r, uint32_t domain_file, uint32_t category)
{
	if (domain_file && domain_file == r->gprofdl_domain && category >= GPROF_DL_CAT_PROFILE_STEP &&
	    category <= GPROF_DL_CAT_PYTHON_OP)
		return (uint8_t)category;
	return TRACE_EV_USER_DEFINED;
}

static uint32_t desc_of(struct recorder *r, uint32_t name, uint32_t domain, uint32_t category)
{
	uint64_t k1 = (uint64_t)name | (uint64_t)domain << 32;
	uint64_t *v = hmap_get(&r->descs, k1, category);
	if (v)
		return (uint32_t)*v;
	uint32_t dom = string_file_id(r, domain);
	uint32_t id = trace_writer_desc(r->w, string_file_id(r, name), dom, category,
					event_type_of(r, dom, category));
	hmap_put(&r->descs, k1, category, id);
	return id;
}

static struct rec_thread *thread_of_slot(struct recorder *r, uint32_t slot_idx)
{
	struct slot_state *st = &r->slots[slot_idx];
	if (st->thread >= 0)
		return &r->threads[st->thread];
	struct ring_slot *slot = ring_shm_slot(r->shm, slot_idx);
	if (r->nthreads == r->threads_cap) {
		r->threads_cap = r->threads_cap ? r->threads_cap * 2 : 64;
		r->threads = xrealloc(r->threads, r->threads_cap * sizeof(*r->threads));
	}
	struct rec_thread *t = &r->threads[r->nthreads];
	memset(t, 0, sizeof(*t));
	t->t.index = r->nthreads;
	t->t.pid = slot->pid;
	t->t.tid = slot->tid;
	t->t.start_ns = clock_now_ns();
	st->thread = (int32_t)r->nthreads++;
	st->generation = slot->generation;
	st->dropped_seen = 0;
	return t;
}

static void thread_write(struct recorder *r, struct rec_thread *t)
{
	if (trace_writer_thread(r->w, &t->t) != 0)
		r->failed = 1;
}

static void event_write_ext(struct recorder *r, uint64_t start, uint64_t end, uint32_t desc,
			    uint32_t thread, uint8_t flags, const struct trace_event_ext *ext)
{
	struct trace_event e = {
		.start_ns = start,
		.dur_ns = end > start ? end - start : 0,
		.desc = desc,
		.thread = thread,
		.flags = flags,
		.ext = ext,
	};
	if (trace_writer_event(r->w, &e) != 0)
		r->failed = 1;
	r->events++;
}

static void event_write(struct recorder *r, uint64_t start, uint64_t end, uint32_t desc, uint32_t thread,
			uint8_t flags)
{
	event_write_ext(r, start, end, desc, thread, flags, NULL);
}

/* A range's details as the trace has them: torch's sequence number (< 0:
 * none), its input shapes (a ring string id, known), a step's samples. */
static const struct trace_event_ext *range_ext(const struct recorder *r, int64_t seq, uint32_t shapes,
					       uint64_t samples, struct trace_event_ext *x)
{
	if (seq < 0 && !shapes && !samples)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->has_seq = seq >= 0;
	x->seq_nr = seq >= 0 ? seq : 0;
	x->shapes_str = string_file_id(r, shapes);
	x->samples = samples;
	return x;
}

/* ---- record handling ---------------------------------------------------- */

static int names_known(const struct recorder *r, uint32_t a, uint32_t b, uint32_t c)
{
	return string_known(r, a) && string_known(r, b) && string_known(r, c);
}

static void range_end_matched(struct recorder *r, const struct pending_start *s, uint64_t end_ts, uint8_t extra)
{
	uint32_t desc = desc_of(r, s->name, s->domain, s->category);
	event_write(r, s->ts, end_ts, desc, s->thread, (uint8_t)(s->flags | TRACE_EVF_START_END | extra));
}

static void process_started(struct recorder *r, const struct ring_process *p);

/* Returns 0 when handled, 1 when it names a string not seen yet (defer it). */
static int handle_record(struct recorder *r, uint32_t slot_idx, const struct ring_rec *h)
{
	struct rec_thread *t = thread_of_slot(r, slot_idx);
	switch (h->kind) {
	case RING_REC_STRING: {
		size_t max = h->size - sizeof(*h);
		const char *s = (const char *)(h + 1);
		string_define(r, h->aux, s, strnlen(s, max));
		return 0;
	}
	case RING_REC_RANGE: {
		const struct ring_range *x = (const void *)h;
		if (!names_known(r, x->name_str, x->domain_str, 0))
			return 1;
		event_write(r, x->start_ns, x->end_ns, desc_of(r, x->name_str, x->domain_str, x->category),
			    t->t.index, (uint8_t)h->aux);
		return 0;
	}
	case RING_REC_RANGE_EXT: {
		/* an operator with its sequence number and shapes, or a step with
		 * its samples; a step written at its end follows its contents */
		const struct ring_range_ext *x = (const void *)h;
		struct trace_event_ext ext;
		if (h->size < sizeof(*x))
			return 0;
		if (!names_known(r, x->name_str, x->domain_str, x->shapes_str))
			return 1;
		event_write_ext(r, x->start_ns, x->end_ns, desc_of(r, x->name_str, x->domain_str, x->category),
				t->t.index, (uint8_t)h->aux,
				range_ext(r, x->seq, x->shapes_str, x->samples, &ext));
		return 0;
	}
	case RING_REC_MARK:
	case RING_REC_POP_UNBALANCED: {
		const struct ring_mark *x = (const void *)h;
		if (!names_known(r, x->name_str, x->domain_str, 0))
			return 1;
		uint32_t name = x->name_str;
		uint8_t flags = (uint8_t)(h->aux | TRACE_EVF_MARK);
		uint32_t desc;
		if (h->kind == RING_REC_POP_UNBALANCED) {
			flags |= TRACE_EVF_UNBALANCED_POP;
			uint32_t s = trace_writer_string(r->w, "<pop without push>", 18);
			desc = trace_writer_desc(r->w, s, string_file_id(r, x->domain_str), 0,
						 TRACE_EV_USER_DEFINED);
		} else {
			desc = desc_of(r, name, x->domain_str, x->category);
		}
		event_write(r, x->ts_ns, x->ts_ns, desc, t->t.index, flags);
		return 0;
	}
	case RING_REC_RANGE_START: {
		const struct ring_range_start *x = (const void *)h;
		if (!names_known(r, x->name_str, x->domain_str, 0))
			return 1;
		struct pending_start s = {x->ts_ns, x->name_str, x->domain_str, x->category, h->aux, t->t.index};
		uint64_t *end = hmap_get(&r->ends, x->id, 0);
		if (end) { /* its End was drained first, from another thread's ring */
			range_end_matched(r, &s, *end, 0);
			hmap_del(&r->ends, x->id, 0);
			hmap_del(&r->end_threads, x->id, 0);
			return 0;
		}
		struct pending_start *p = xmalloc(sizeof(*p));
		*p = s;
		hmap_put(&r->starts, x->id, 0, (uint64_t)(uintptr_t)p);
		return 0;
	}
	case RING_REC_RANGE_END: {
		const struct ring_range_end *x = (const void *)h;
		uint64_t *v = hmap_get(&r->starts, x->id, 0);
		if (v) {
			struct pending_start *p = (struct pending_start *)(uintptr_t)*v;
			range_end_matched(r, p, x->ts_ns, 0);
			free(p);
			hmap_del(&r->starts, x->id, 0);
		} else {
			hmap_put(&r->ends, x->id, 0, x->ts_ns);
			hmap_put(&r->end_threads, x->id, 0, t->t.index);
		}
		return 0;
	}
	case RING_REC_CATEGORY: {
		const struct ring_category *x = (const void *)h;
		if (!names_known(r, x->domain_str, x->name_str, 0))
			return 1;
		struct trace_category c = {string_file_id(r, x->domain_str), x->category, string_file_id(r, x->name_str)};
		if (trace_writer_category(r->w, &c) != 0)
			r->failed = 1;
		return 0;
	}
	case RING_REC_THREAD_START: {
		const struct ring_thread *x = (const void *)h;
		t->t.start_ns = x->ts_ns;
		t->t.pid = x->pid;
		t->t.tid = x->tid;
		thread_write(r, t);
		return 0;
	}
	case RING_REC_THREAD_END: {
		const struct ring_thread *x = (const void *)h;
		t->t.end_ns = x->ts_ns;
		thread_write(r, t);
		return 0;
	}
	case RING_REC_THREAD_NAME: {
		const struct ring_thread_name *x = (const void *)h;
		if (!string_known(r, x->name_str))
			return 1;
		/* nvtxNameOsThread may name any thread of this process. */
		for (uint32_t i = r->nthreads; i-- > 0;) {
			struct rec_thread *o = &r->threads[i];
			if (o->t.tid == x->tid && o->t.pid == t->t.pid) {
				o->t.name_str = string_file_id(r, x->name_str);
				thread_write(r, o);
				break;
			}
		}
		return 0;
	}
	case RING_REC_PROCESS_START: {
		const struct ring_process *x = (const void *)h;
		if (!string_known(r, x->cmdline_str))
			return 1;
		process_started(r, x);
		return 0;
	}
	case RING_REC_PROCESS_EXIT: {
		const struct ring_process *x = (const void *)h;
		struct rec_process *p = process_find(r, x->pid, 1);
		if (p)
			p->p.end_ns = x->ts_ns;
		return 0;
	}
	default:
		return 0; /* PAD, and kinds a newer collector may add */
	}
}

static void defer_record(struct recorder *r, uint32_t slot_idx, const struct ring_rec *h)
{
	if (r->ndeferred == r->deferred_cap) {
		r->deferred_cap = r->deferred_cap ? r->deferred_cap * 2 : 64;
		r->deferred = xrealloc(r->deferred, r->deferred_cap * sizeof(*r->deferred));
	}
	struct deferred *d = &r->deferred[r->ndeferred++];
	d->slot = slot_idx;
	d->polls = 0;
	d->big = NULL;
	if (h->size <= sizeof(d->rec)) {
		memcpy(d->rec, h, h->size);
	} else {
		d->big = xmalloc(h->size);
		memcpy(d->big, h, h->size);
	}
}

static const uint32_t *record_string_ids(const struct ring_rec *h, unsigned *n)
{
	static uint32_t ids[3];
	*n = 0;
	switch (h->kind) {
	case RING_REC_RANGE: {
		const struct ring_range *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->domain_str, *n = 2;
		break;
	}
	case RING_REC_RANGE_EXT: {
		const struct ring_range_ext *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->domain_str, ids[2] = x->shapes_str, *n = 3;
		break;
	}
	case RING_REC_MARK:
	case RING_REC_POP_UNBALANCED: {
		const struct ring_mark *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->domain_str, *n = 2;
		break;
	}
	case RING_REC_RANGE_START: {
		const struct ring_range_start *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->domain_str, *n = 2;
		break;
	}
	case RING_REC_CATEGORY: {
		const struct ring_category *x = (const void *)h;
		ids[0] = x->domain_str, ids[1] = x->name_str, *n = 2;
		break;
	}
	case RING_REC_THREAD_NAME:
		ids[0] = ((const struct ring_thread_name *)(const void *)h)->name_str, *n = 1;
		break;
	case RING_REC_PROCESS_START:
		ids[0] = ((const struct ring_process *)(const void *)h)->cmdline_str, *n = 1;
		break;
	}
	return ids;
}

/* Records wait for the STRING record another thread's ring holds; after a few
 * polls, or at the end, the names that never came are given up on. */
static void retry_deferred(struct recorder *r, int final)
{
	size_t keep = 0;
	for (size_t i = 0; i < r->ndeferred; i++) {
		struct deferred *d = &r->deferred[i];
		const struct ring_rec *h = d->big ? (const void *)d->big : (const void *)d->rec;
		if (final || ++d->polls >= DEFER_POLLS) {
			unsigned n;
			const uint32_t *ids = record_string_ids(h, &n);
			for (unsigned k = 0; k < n; k++)
				string_give_up(r, ids[k]);
		}
		if (handle_record(r, d->slot, h) == 0) {
			free(d->big);
			continue;
		}
		r->deferred[keep++] = *d;
	}
	r->ndeferred = keep;
}

/* ---- slots and processes ---------------------------------------------- */

static uint64_t drain_slot(struct recorder *r, uint32_t slot_idx)
{
	struct ring_slot *slot = ring_shm_slot(r->shm, slot_idx);
	struct slot_state *st = &r->slots[slot_idx];
	uint64_t total = 0;
	size_t n;

	if (st->thread >= 0 && st->generation != slot->generation)
		st->thread = -1; /* reused by a new thread: cannot happen before we free it */
	while ((n = ring_read(r->shm, slot, r->buf, r->opts.ring_bytes)) > 0) {
		for (size_t off = 0; off < n;) {
			const struct ring_rec *h = (const void *)(r->buf + off);
			if (h->size < sizeof(*h) || h->size > n - off)
				BUG("record of %u bytes at %zu of %zu drained", h->size, off, n);
			if (handle_record(r, slot_idx, h))
				defer_record(r, slot_idx, h);
			off += h->size;
		}
		total += n;
	}
	return total;
}

/* The slot's thread is over (it ended, its process died or exec'd): ranges still
 * on its push stack become open-at-exit events ending at end_ns. */
static void finish_slot(struct recorder *r, uint32_t slot_idx, uint64_t end_ns)
{
	struct ring_slot *slot = ring_shm_slot(r->shm, slot_idx);
	drain_slot(r, slot_idx);
	struct rec_thread *t = thread_of_slot(r, slot_idx);
	if (!t->t.end_ns)
		t->t.end_ns = end_ns;
	uint32_t depth = atomic_load_explicit(&slot->depth, memory_order_acquire);
	if (depth > RING_STACK_MAX)
		depth = RING_STACK_MAX;
	for (uint32_t d = 0; d < depth; d++) {
		const struct ring_open_range *o = &slot->stack[d];
		struct trace_event_ext ext;
		if (o->flags & RING_OPEN_SKIP)
			continue; /* pushed while the recording window was closed */
		string_give_up(r, o->name_str);
		string_give_up(r, o->domain_str);
		string_give_up(r, o->shapes_str);
		uint64_t end = t->t.end_ns > o->start_ns ? t->t.end_ns : o->start_ns;
		event_write_ext(r, o->start_ns, end, desc_of(r, o->name_str, o->domain_str, o->category),
				t->t.index, (uint8_t)(o->flags | TRACE_EVF_OPEN_AT_EXIT),
				range_ext(r, o->seq, o->shapes_str, o->samples, &ext));
	}
	uint64_t dropped = atomic_load_explicit(&slot->dropped, memory_order_relaxed);
	if (dropped) {
		t->dropped += dropped;
		if (trace_writer_drops(r->w, t->t.index, dropped) != 0)
			r->failed = 1;
	}
	thread_write(r, t);
	r->slots[slot_idx].thread = -1;
	ring_slot_free(slot);
}

/* Every slot of pid is finished (the process ended). */
static void finish_process_slots(struct recorder *r, uint32_t pid, uint64_t end_ns)
{
	uint32_t used = atomic_load_explicit(&r->shm->slots_used, memory_order_acquire);
	for (uint32_t i = 0; i < used && i < r->shm->nslots; i++) {
		struct ring_slot *s = ring_shm_slot(r->shm, i);
		if (s->pid != pid || atomic_load_explicit(&s->state, memory_order_acquire) == RING_SLOT_FREE)
			continue;
		finish_slot(r, i, end_ns);
	}
}

/* After an exec, the threads of the old image are the slots of that pid whose
 * thread started before the exec: the new image's start after it. */
static void finish_exec_images(struct recorder *r)
{
	for (size_t k = 0; k < r->nexecs; k++) {
		uint32_t used = atomic_load_explicit(&r->shm->slots_used, memory_order_acquire);
		for (uint32_t i = 0; i < used && i < r->shm->nslots; i++) {
			struct ring_slot *s = ring_shm_slot(r->shm, i);
			if (s->pid != r->execs[k].pid ||
			    atomic_load_explicit(&s->state, memory_order_acquire) == RING_SLOT_FREE)
				continue;
			drain_slot(r, i);
			if (thread_of_slot(r, i)->t.start_ns < r->execs[k].ts)
				finish_slot(r, i, r->execs[k].ts);
		}
	}
	r->nexecs = 0;
}

static void process_started(struct recorder *r, const struct ring_process *x)
{
	struct rec_process *p = process_find(r, x->pid, 1);
	uint32_t cmd = string_file_id(r, x->cmdline_str);
	if (p && !p->seen_start) { /* the launcher's own guess, now confirmed */
		p->p.ppid = x->ppid;
		if (cmd)
			p->p.cmdline_str = cmd;
		p->seen_start = 1;
		return;
	}
	if (p) { /* exec: the old image ends here, its threads with it */
		p->p.end_ns = x->ts_ns;
		p->alive = 0;
		if (r->nexecs == r->execs_cap) {
			r->execs_cap = r->execs_cap ? r->execs_cap * 2 : 8;
			r->execs = xrealloc(r->execs, r->execs_cap * sizeof(*r->execs));
		}
		r->execs[r->nexecs++] = (struct exec_end){x->pid, x->ts_ns};
	}
	p = process_add(r, x->pid, x->ppid, x->ts_ns);
	p->p.cmdline_str = cmd;
	p->seen_start = 1;
}

static void process_ended(struct recorder *r, struct rec_process *p, uint64_t end_ns)
{
	if (!p->p.end_ns)
		p->p.end_ns = end_ns;
	p->alive = 0;
	finish_process_slots(r, p->p.pid, p->p.end_ns);
}

void recorder_process_reaped(struct recorder *r, pid_t pid, int status, const struct rusage *usage)
{
	uint64_t now = clock_now_ns();
	if (usage)
		cpu_sampler_reaped(&r->cpu, usage);
	struct rec_process *p = process_find(r, (uint32_t)pid, 1);
	if (!p)
		p = process_add(r, (uint32_t)pid, 0, now); /* never loaded the collector */
	if (WIFEXITED(status))
		p->p.exit_status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		p->p.exit_status = 128 + WTERMSIG(status);
	process_ended(r, p, now);
}

/* A process the launcher does not reap (its parent does) is dead once /proc
 * says so: gone, or a zombie. */
static int process_is_dead(uint32_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X');
}

static void check_liveness(struct recorder *r, uint64_t now)
{
	for (uint32_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].alive && process_is_dead(r->procs[i].p.pid))
			process_ended(r, &r->procs[i], now);
}

static void sample_counters(struct recorder *r, uint64_t now)
{
	pid_t pids[256];
	unsigned n = 0;
	for (uint32_t i = 0; i < r->nprocs && n < 256; i++)
		if (r->procs[i].alive)
			pids[n++] = (pid_t)r->procs[i].p.pid;
	struct cpu_sample s;
	if (!cpu_sampler_sample(&r->cpu, pids, n, now, &s))
		return;
	struct trace_counter c[3] = {
		{now, TRACE_CTR_CPU_PROCESS, (uint32_t)r->root, s.process_pct},
		{now, TRACE_CTR_CPU_SYSTEM, 0, s.system_pct},
		{now, TRACE_CTR_RSS_BYTES, (uint32_t)r->root, (double)s.rss_bytes},
	};
	for (int i = 0; i < 3; i++)
		if (trace_writer_counter(r->w, &c[i]) != 0)
			r->failed = 1;
}

uint64_t recorder_poll(struct recorder *r)
{
	uint64_t total = 0;
	uint32_t used = atomic_load_explicit(&r->shm->slots_used, memory_order_acquire);
	for (uint32_t i = 0; i < used && i < r->shm->nslots; i++) {
		struct ring_slot *s = ring_shm_slot(r->shm, i);
		uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
		if (state == RING_SLOT_FREE || state == RING_SLOT_CLAIMING)
			continue;
		total += drain_slot(r, i);
		if (state == RING_SLOT_EXITED)
			finish_slot(r, i, clock_now_ns());
	}
	if (r->nexecs)
		finish_exec_images(r);
	if (r->ndeferred)
		retry_deferred(r, 0);
	uint64_t now = clock_now_ns();
	if (now >= r->next_liveness) {
		check_liveness(r, now);
		r->next_liveness = now + LIVENESS_INTERVAL_NS;
	}
	if (now >= r->next_sample) {
		sample_counters(r, now);
		r->next_sample = now + r->opts.sample_interval_ns;
	}
	if (now >= r->next_flush) {
		if (trace_writer_flush(r->w) != 0)
			r->failed = 1;
		r->next_flush = now + FLUSH_INTERVAL_NS;
	}
	return total;
}

/* ---- the end ------------------------------------------------------------ */

static void finish_pending_ranges(struct recorder *r, uint64_t end_ns)
{
	for (size_t i = 0; i < r->starts.cap; i++) {
		if (!r->starts.e[i].used)
			continue;
		struct pending_start *p = (struct pending_start *)(uintptr_t)r->starts.e[i].value;
		uint64_t end = r->threads[p->thread].t.end_ns ? r->threads[p->thread].t.end_ns : end_ns;
		range_end_matched(r, p, end, TRACE_EVF_OPEN_AT_EXIT);
		free(p);
	}
	hmap_free(&r->starts);
	/* Ends whose start never came: recorded where they happened. */
	for (size_t i = 0; i < r->ends.cap; i++) {
		if (!r->ends.e[i].used)
			continue;
		uint64_t *th = hmap_get(&r->end_threads, r->ends.e[i].k1, 0);
		uint32_t s = trace_writer_string(r->w, "<range end without start>", 25);
		uint32_t desc = trace_writer_desc(r->w, s, 0, 0, TRACE_EV_USER_DEFINED);
		event_write(r, r->ends.e[i].value, r->ends.e[i].value, desc, th ? (uint32_t)*th : 0,
			    TRACE_EVF_MARK | TRACE_EVF_UNBALANCED_POP | TRACE_EVF_START_END);
	}
	hmap_free(&r->ends);
	hmap_free(&r->end_threads);
}

/* Threads that found no free slot lost their events: the count goes to a
 * thread of its own, so every reader shows it. */
static void write_no_slot_drops(struct recorder *r, uint64_t end_ns)
{
	uint64_t lost = atomic_load(&r->shm->no_slot_events) + atomic_load(&r->shm->no_slot_threads);
	if (!lost)
		return;
	if (r->nthreads == r->threads_cap) {
		r->threads_cap = r->threads_cap ? r->threads_cap * 2 : 64;
		r->threads = xrealloc(r->threads, r->threads_cap * sizeof(*r->threads));
	}
	struct rec_thread *t = &r->threads[r->nthreads];
	memset(t, 0, sizeof(*t));
	t->t.index = r->nthreads++;
	t->t.pid = (uint32_t)r->root;
	t->t.name_str = trace_writer_string(r->w, "<threads without a ring slot>", 29);
	t->t.start_ns = r->start_ns;
	t->t.end_ns = end_ns;
	thread_write(r, t);
	if (trace_writer_drops(r->w, t->t.index, lost) != 0)
		r->failed = 1;
	t->dropped = lost;
}

int recorder_finish(struct recorder *r, struct recorder_stats *stats)
{
	uint64_t end = clock_now_ns();
	/* Whatever is still pending, in every slot, live or not. */
	while (recorder_poll(r) > 0)
		;
	end = clock_now_ns();
	sample_counters(r, end);
	for (uint32_t i = 0; i < r->nprocs; i++) {
		if (!r->procs[i].alive)
			continue;
		/* Still running (a daemonised descendant): its open ranges end now. */
		process_ended(r, &r->procs[i], end);
	}
	for (uint32_t i = 0; i < r->shm->nslots; i++)
		if (atomic_load(&ring_shm_slot(r->shm, i)->state) != RING_SLOT_FREE)
			finish_slot(r, i, end);
	retry_deferred(r, 1);
	finish_pending_ranges(r, end);
	write_no_slot_drops(r, end);
	for (uint32_t i = 0; i < r->nprocs; i++)
		if (trace_writer_process(r->w, &r->procs[i].p) != 0)
			r->failed = 1;

	uint64_t dropped = 0;
	for (uint32_t i = 0; i < r->nthreads; i++)
		dropped += r->threads[i].dropped;
	if (stats) {
		stats->events = r->events;
		stats->dropped = dropped;
		stats->processes = r->nprocs;
		stats->threads = r->nthreads;
	}
	if (r->unknown_strings)
		warning("%llu names were lost with records that did not fit in the rings",
			(unsigned long long)r->unknown_strings);
	int rc = trace_writer_close(r->w, end);
	r->w = NULL;
	if (rc != 0)
		error("cannot write '%s': %s", r->out_path, strerror(errno));
	else if (r->failed)
		error("cannot write '%s': a write failed during the run", r->out_path);
	struct stat sb;
	if (stats && stat(r->out_path, &sb) == 0)
		stats->bytes = (uint64_t)sb.st_size;
	return rc || r->failed ? -1 : 0;
}

void recorder_abort(struct recorder *r)
{
	if (r->w) {
		trace_writer_close(r->w, clock_now_ns());
		r->w = NULL;
	}
	unlink(r->out_path);
	recorder_destroy(r);
}

void recorder_destroy(struct recorder *r)
{
	if (!r)
		return;
	if (r->w)
		trace_writer_close(r->w, clock_now_ns());
	if (r->shm)
		munmap(r->shm, r->shm_len);
	if (r->memfd >= 0)
		close(r->memfd);
	for (size_t i = 0; i < r->ndeferred; i++)
		free(r->deferred[i].big);
	for (size_t i = 0; i < r->starts.cap; i++)
		if (r->starts.e[i].used)
			free((void *)(uintptr_t)r->starts.e[i].value);
	hmap_free(&r->starts);
	hmap_free(&r->ends);
	hmap_free(&r->end_threads);
	hmap_free(&r->descs);
	free(r->deferred);
	free(r->execs);
	free(r->strmap);
	free(r->threads);
	free(r->procs);
	free(r->slots);
	free(r->buf);
	free(r->out_path);
	free(r);
}
