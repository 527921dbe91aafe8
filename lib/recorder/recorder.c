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
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFER_POLLS 3 /* polls a record waits for a string before it is named "<unknown>" */
#define FLUSH_INTERVAL_NS 1000000000ull
#define LIVENESS_INTERVAL_NS 100000000ull
#define NO_THREAD UINT32_MAX
/* External ids are kept for this many correlation ids after the newest
 * (CUDA calls of the process): GPU work completes, and CUPTI delivers it,
 * long before that many more calls were made. */
#define XID_WINDOW (1u << 16)
#define XID_PRUNE_MIN (2u * XID_WINDOW)
/* The stream id of a context's track, where synchronizations of no one
 * stream go: CUPTI's own "invalid" stream id, which Kineto writes as -1. */
#define SYNC_STREAM UINT32_MAX

struct rec_thread {
	struct trace_thread t;
	uint64_t dropped; /* written so far */
	uint32_t prev;    /* the thread before it with the same (pid, tid), NO_THREAD: none */
	uint8_t bound;    /* a slot's thread; else a track made for GPU records */
	uint8_t gpu;      /* a stream's, CUPTI's overhead or drops track */
	uint8_t device_known; /* a stream: t.device is its device's */
	uint64_t lo, hi;  /* the span of the events GPU records put on it; lo > hi: none */
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
	uint32_t pid; /* the slot's, when drained: GPU records are that process's */
	uint32_t polls;
	_Alignas(8) unsigned char rec[sizeof(struct ring_range_ext) + 8]; /* records are read in place */
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
	uint8_t *strcomm;        /* ring string id -> names communication (NCCL, RCCL) */

	/* GPU records */
	struct hmap tids;     /* (pid, tid) -> the latest host track of that thread */
	struct hmap streams;  /* stream_key() -> stream track */
	struct hmap ctxdev;   /* (pid, context) -> device */
	struct hmap proc_tracks; /* (pid, 0) CUPTI overhead track, (pid, 1) "[CUPTI]" */
	struct hmap gdescs;   /* (file name id, type), or a copy's key -> desc id */
	struct hmap xids;     /* (pid, correlation id) -> external id */
	struct hmap xid_max;  /* (pid, 0) -> the newest correlation id with an external id */
	size_t xid_prune_at;
	struct hmap blocks;   /* (pid | device << 32, address) -> bytes allocated */
	struct hmap in_use;   /* (pid | device << 32, 0) -> bytes in use */
	struct hmap status_strs; /* ring string id of a status message -> its text, 0 not seen */
	uint32_t mem_desc, sync_desc[RING_GPU_SYNC_CONTEXT + 1];
	struct trace_device *devs; /* written */
	uint32_t ndevs;
	struct recorder_gpu_status *statuses;
	uint32_t nstatuses;
	uint64_t gpu_events, gpu_dropped;

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
	hmap_init(&r->tids);
	hmap_init(&r->streams);
	hmap_init(&r->ctxdev);
	hmap_init(&r->proc_tracks);
	hmap_init(&r->gdescs);
	hmap_init(&r->xids);
	hmap_init(&r->xid_max);
	r->xid_prune_at = XID_PRUNE_MIN;
	hmap_init(&r->blocks);
	hmap_init(&r->in_use);
	hmap_init(&r->status_strs);
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

/* Whether a kernel's name makes it communication, as the importer reads
 * Kineto's kernels: "nccl" or "rccl" in it, any case. */
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
		r->strcomm = xrealloc(r->strcomm, cap);
		memset(r->strcomm + r->strmap_cap, 0, cap - r->strmap_cap);
		r->strmap_cap = cap;
	}
	uint32_t id = trace_writer_string(r->w, s, len);
	r->strmap[ring_id] = id;
	r->strcomm[ring_id] = (uint8_t)trace_name_is_comm_work(s, len);
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

static void thread_write(struct recorder *r, struct rec_thread *t)
{
	if (trace_writer_thread(r->w, &t->t) != 0)
		r->failed = 1;
}

/* A new track (pid, tid), not yet written. Invalidates pointers into threads. */
static uint32_t thread_add(struct recorder *r, uint32_t pid, uint32_t tid)
{
	if (r->nthreads == r->threads_cap) {
		r->threads_cap = r->threads_cap ? r->threads_cap * 2 : 64;
		r->threads = xrealloc(r->threads, r->threads_cap * sizeof(*r->threads));
	}
	struct rec_thread *t = &r->threads[r->nthreads];
	memset(t, 0, sizeof(*t));
	t->t.index = r->nthreads;
	t->t.pid = pid;
	t->t.tid = tid;
	t->prev = NO_THREAD;
	t->lo = UINT64_MAX;
	return r->nthreads++;
}

/* The slot's thread; or, when GPU records named (pid, tid) before its slot
 * was drained, the track made for them, so that a thread's calls and its
 * ranges share one track. */
static struct rec_thread *thread_of_slot(struct recorder *r, uint32_t slot_idx)
{
	struct slot_state *st = &r->slots[slot_idx];
	if (st->thread >= 0)
		return &r->threads[st->thread];
	struct ring_slot *slot = ring_shm_slot(r->shm, slot_idx);
	uint64_t *v = hmap_get(&r->tids, slot->pid, slot->tid);
	uint32_t i;
	if (v && !r->threads[*v].bound) {
		i = (uint32_t)*v;
	} else {
		uint32_t prev = v ? (uint32_t)*v : NO_THREAD; /* a tid the system reused */
		i = thread_add(r, slot->pid, slot->tid);
		r->threads[i].t.start_ns = clock_now_ns();
		r->threads[i].prev = prev;
		hmap_put(&r->tids, slot->pid, slot->tid, i);
		/* now, not at its THREAD_START: a track GPU records make before
		 * that must not be written with an index the file skipped */
		thread_write(r, &r->threads[i]);
	}
	r->threads[i].bound = 1;
	st->thread = (int32_t)i;
	st->generation = slot->generation;
	st->dropped_seen = 0;
	return &r->threads[i];
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

/* ---- GPU records (ring version 3) ---------------------------------------- */

/* A desc of a given type, by file string id: GPU records name no domain. */
static uint32_t desc_typed(struct recorder *r, uint32_t name, uint8_t type)
{
	uint64_t *v = hmap_get(&r->gdescs, name, type);
	if (v)
		return (uint32_t)*v;
	uint32_t id = trace_writer_desc(r->w, name, 0, 0, type);
	hmap_put(&r->gdescs, name, type, id);
	return id;
}

static uint32_t desc_named(struct recorder *r, const char *name, uint8_t type)
{
	return desc_typed(r, trace_writer_string(r->w, name, strlen(name)), type);
}

/* A copy or set is named by what it did, as Kineto names it and the chrome
 * export composes it ("Memcpy HtoD (Pinned -> Device)", "Memset (Device)"),
 * so that an export and its import keep the desc; the views read the kinds
 * from the details. */
static uint32_t desc_copy(struct recorder *r, uint8_t type, const struct trace_event_ext *x)
{
	uint64_t k1 = 1ull << 63 | (uint64_t)type << 24 | (uint64_t)x->copy_kind << 16 |
		      (uint64_t)x->src_kind << 8 | x->dst_kind;
	uint64_t *v = hmap_get(&r->gdescs, k1, 0);
	if (v)
		return (uint32_t)*v;
	char name[96];
	if (type == TRACE_EV_MEMCPY)
		snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", trace_copy_kind_name(x->copy_kind),
			 trace_memory_kind_name(x->src_kind), trace_memory_kind_name(x->dst_kind));
	else
		snprintf(name, sizeof(name), "Memset (%s)", trace_memory_kind_name(x->dst_kind));
	uint32_t id = desc_named(r, name, type);
	hmap_put(&r->gdescs, k1, 0, id);
	return id;
}

static void gpu_event(struct recorder *r, uint64_t start, uint64_t end, uint32_t desc, uint32_t thread,
		      uint8_t flags, const struct trace_event_ext *ext)
{
	struct rec_thread *t = &r->threads[thread];
	if (end < start)
		end = start;
	if (start < t->lo)
		t->lo = start;
	if (end > t->hi)
		t->hi = end;
	event_write_ext(r, start, end, desc, thread, flags, ext);
	r->gpu_events++;
}

/* The host track of the thread that made a CUDA call at ts: the thread's
 * own, or a track made for it until its slot is drained (thread_of_slot()
 * takes it over). Where the system reused the tid, the thread it was at
 * ts: an earlier one if the latest started after ts; a new one if the
 * latest had ended by then. */
static uint32_t api_thread(struct recorder *r, uint32_t pid, uint32_t tid, uint64_t ts)
{
	uint64_t *v = hmap_get(&r->tids, pid, tid);
	uint32_t prev = NO_THREAD;
	if (v) {
		uint32_t i = (uint32_t)*v;
		const struct rec_thread *t = &r->threads[i];
		if (!t->bound || !t->t.end_ns || ts < t->t.end_ns) {
			while (r->threads[i].bound && r->threads[i].t.start_ns > ts &&
			       r->threads[i].prev != NO_THREAD)
				i = r->threads[i].prev;
			return i;
		}
		prev = i;
	}
	uint32_t i = thread_add(r, pid, tid);
	r->threads[i].prev = prev;
	r->threads[i].t.start_ns = ts;
	hmap_put(&r->tids, pid, tid, i);
	thread_write(r, &r->threads[i]);
	return i;
}

/* One CUDA stream is one track: CUPTI's stream ids are unique within a
 * process, and a context is on one device. Records without a context
 * (none CUPTI writes for work) are told apart by their device. */
static void stream_key(uint32_t pid, uint32_t context, uint32_t device, uint64_t stream, uint64_t *k1,
		       uint64_t *k2)
{
	*k1 = (uint64_t)pid << 32 | context;
	*k2 = context ? stream : (uint64_t)device << 32 | (uint32_t)stream;
}

/* The track of a stream, made on first sight; device < 0: not known from
 * this record (a synchronization names none), taken from the context's
 * other streams then, or at the end. */
static uint32_t stream_track(struct recorder *r, uint32_t pid, uint32_t context, int64_t device,
			     uint64_t stream, uint64_t ts)
{
	uint64_t k1, k2;
	if (device < 0) {
		uint64_t *d = hmap_get(&r->ctxdev, pid, context);
		if (d)
			device = (int64_t)*d;
	}
	stream_key(pid, context, device < 0 ? 0 : (uint32_t)device, stream, &k1, &k2);
	uint64_t *v = hmap_get(&r->streams, k1, k2);
	if (v) {
		struct rec_thread *t = &r->threads[*v];
		if (!t->device_known && device >= 0) {
			t->t.device = (uint32_t)device;
			t->device_known = 1;
			hmap_put(&r->ctxdev, pid, context, (uint64_t)device);
			thread_write(r, t);
		}
		return t->t.index;
	}
	uint32_t i = thread_add(r, pid, 0);
	struct rec_thread *t = &r->threads[i];
	t->gpu = 1;
	t->t.kind = TRACE_TRACK_STREAM;
	t->t.context = context;
	t->t.stream = stream;
	t->t.start_ns = ts;
	if (device >= 0) {
		t->t.device = (uint32_t)device;
		t->device_known = 1;
		hmap_put(&r->ctxdev, pid, context, (uint64_t)device);
	}
	if (stream == SYNC_STREAM) {
		char name[48];
		int n = snprintf(name, sizeof(name), "context %u sync", context);
		t->t.name_str = trace_writer_string(r->w, name, (size_t)n);
	}
	hmap_put(&r->streams, k1, k2, i);
	thread_write(r, t);
	return i;
}

/* A process's host track of CUPTI's own (which 0: its overhead, 1: the
 * records it lost), apart from the program's threads: CUPTI's overhead
 * never nests inside the program's ranges. */
static uint32_t proc_track(struct recorder *r, uint32_t pid, unsigned which, uint64_t ts)
{
	static const char *const names[] = {"[CUPTI overhead]", "[CUPTI]"};
	uint64_t *v = hmap_get(&r->proc_tracks, pid, which);
	if (v)
		return (uint32_t)*v;
	uint32_t i = thread_add(r, pid, 0);
	struct rec_thread *t = &r->threads[i];
	t->gpu = 1;
	t->t.name_str = trace_writer_string(r->w, names[which], strlen(names[which]));
	t->t.start_ns = ts;
	hmap_put(&r->proc_tracks, pid, which, i);
	thread_write(r, t);
	return i;
}

/* Keeps the external ids of each process's last XID_WINDOW correlation ids. */
static void xid_prune(struct recorder *r)
{
	struct hmap keep;
	hmap_init(&keep);
	for (size_t i = 0; i < r->xids.cap; i++) {
		const struct hmap_entry *e = &r->xids.e[i];
		if (!e->used)
			continue;
		const uint64_t *newest = hmap_get(&r->xid_max, e->k1, 0);
		if (newest && e->k2 + XID_WINDOW >= *newest)
			hmap_put(&keep, e->k1, e->k2, e->value);
	}
	hmap_free(&r->xids);
	r->xids = keep;
	r->xid_prune_at = 2 * keep.len > XID_PRUNE_MIN ? 2 * keep.len : XID_PRUNE_MIN;
}

static void xid_put(struct recorder *r, uint32_t pid, uint64_t corr, uint64_t xid)
{
	if (!corr || !xid)
		return;
	uint64_t *newest = hmap_get(&r->xid_max, pid, 0);
	if (!newest || corr > *newest)
		hmap_put(&r->xid_max, pid, 0, corr);
	hmap_put(&r->xids, pid, corr, xid);
	if (r->xids.len >= r->xid_prune_at)
		xid_prune(r);
}

static uint64_t xid_of(const struct recorder *r, uint32_t pid, uint64_t corr)
{
	const uint64_t *v = corr && r->xids.len ? hmap_get(&r->xids, pid, corr) : NULL;
	return v ? *v : 0;
}

/* The bytes in use on a device of a process after an allocation or a free,
 * as its records tell: a free takes back what its block's allocation gave
 * (its own size where the allocation was not seen), never below 0. */
static uint64_t memory_in_use(struct recorder *r, uint32_t pid, const struct ring_gpu_memory *x,
			      uint64_t *freed)
{
	uint64_t k1 = pid | (uint64_t)x->device << 32;
	uint64_t *v = hmap_get(&r->in_use, k1, 0);
	uint64_t use = v ? *v : 0;
	if (x->h.aux == RING_GPU_MEM_ALLOC) {
		hmap_put(&r->blocks, k1, x->address, x->bytes);
		use += x->bytes;
	} else {
		uint64_t *b = hmap_get(&r->blocks, k1, x->address);
		uint64_t size = b ? *b : x->bytes;
		if (b)
			hmap_del(&r->blocks, k1, x->address);
		*freed = x->bytes ? x->bytes : size;
		use -= size < use ? size : use;
	}
	hmap_put(&r->in_use, k1, 0, use);
	return use;
}

static void gpu_memory(struct recorder *r, uint32_t pid, const struct ring_gpu_memory *x)
{
	if (x->h.aux != RING_GPU_MEM_ALLOC && x->h.aux != RING_GPU_MEM_FREE)
		return;
	uint64_t freed = 0;
	struct trace_event_ext ext = {0};
	ext.total_allocated = memory_in_use(r, pid, x, &freed);
	ext.bytes = x->h.aux == RING_GPU_MEM_ALLOC ? x->bytes : (uint64_t)-(int64_t)freed;
	ext.address = x->address;
	ext.device = (int32_t)x->device;
	ext.dst_kind = x->memory_kind;
	ext.is_async = x->is_async != 0;
	ext.correlation = x->correlation;
	ext.external_id = xid_of(r, pid, x->correlation);
	if (!r->mem_desc)
		r->mem_desc = desc_named(r, "[memory]", TRACE_EV_MEMORY); /* Kineto's name */
	uint32_t th = stream_track(r, pid, x->context, x->device, x->stream, x->ts_ns);
	gpu_event(r, x->ts_ns, x->ts_ns, r->mem_desc, th, TRACE_EVF_MARK, &ext);
}

static void gpu_work(struct recorder *r, uint32_t pid, const struct ring_gpu_work *x)
{
	struct trace_event_ext ext = {0};
	uint8_t type = (uint8_t)x->h.aux;
	uint32_t desc;
	ext.correlation = x->correlation;
	ext.external_id = xid_of(r, pid, x->correlation);
	if (type == TRACE_EV_MEMCPY || type == TRACE_EV_MEMSET) {
		ext.bytes = x->bytes;
		if (type == TRACE_EV_MEMCPY) {
			ext.copy_kind = x->copy_kind;
			ext.src_kind = x->src_kind;
		}
		ext.dst_kind = x->dst_kind;
		ext.is_async = x->is_async != 0;
		desc = desc_copy(r, type, &ext);
	} else {
		/* the CUDA graph a kernel ran in (graph_id) has no place in the trace */
		memcpy(ext.grid, x->grid, sizeof(ext.grid));
		memcpy(ext.block, x->block, sizeof(ext.block));
		ext.registers = x->registers;
		ext.static_smem = x->static_smem;
		ext.dynamic_smem = x->dynamic_smem;
		if (!trace_event_type_is_device(type))
			type = TRACE_EV_KERNEL;
		if (type == TRACE_EV_KERNEL && x->name_str < r->strmap_cap && r->strcomm[x->name_str])
			type = TRACE_EV_COMMUNICATION; /* an NCCL kernel, as imports have it */
		desc = desc_typed(r, string_file_id(r, x->name_str), type);
	}
	uint32_t th = stream_track(r, pid, x->context, x->device, x->stream, x->start_ns);
	gpu_event(r, x->start_ns, x->end_ns, desc, th, (uint8_t)(x->flags & TRACE_EVF_NAME_TRUNCATED),
		  &ext);
}

/* Kineto's names of CUPTI's synchronization types. */
static void gpu_sync(struct recorder *r, uint32_t pid, const struct ring_gpu_sync *x)
{
	static const char *const names[] = {
		[RING_GPU_SYNC_UNKNOWN] = "Unknown Sync",
		[RING_GPU_SYNC_EVENT] = "Event Sync",
		[RING_GPU_SYNC_STREAM_WAIT] = "Stream Wait Event",
		[RING_GPU_SYNC_STREAM] = "Stream Sync",
		[RING_GPU_SYNC_CONTEXT] = "Context Sync",
	};
	unsigned type = x->h.aux <= RING_GPU_SYNC_CONTEXT ? x->h.aux : RING_GPU_SYNC_UNKNOWN;
	if (!r->sync_desc[type])
		r->sync_desc[type] = desc_named(r, names[type], TRACE_EV_USER_DEFINED);
	struct trace_event_ext ext = {0};
	ext.correlation = x->correlation;
	uint64_t stream = x->stream == UINT64_MAX ? SYNC_STREAM : x->stream;
	uint32_t th = stream_track(r, pid, x->context, -1, stream, x->start_ns);
	gpu_event(r, x->start_ns, x->end_ns, r->sync_desc[type], th, 0, &ext);
}

/* Written when new, or when a device is described anew (the trace keeps
 * the last description of an id). */
static void gpu_device(struct recorder *r, const struct ring_gpu_device *x)
{
	struct trace_device d;
	memset(&d, 0, sizeof(d));
	d.id = x->id;
	d.name_str = string_file_id(r, x->name_str);
	d.sm_count = x->sm_count;
	d.max_threads_per_sm = x->max_threads_per_sm;
	d.max_threads_per_block = x->max_threads_per_block;
	d.max_blocks_per_sm = x->max_blocks_per_sm;
	d.warp_size = x->warp_size;
	d.regs_per_sm = x->regs_per_sm;
	d.regs_per_block = x->regs_per_block;
	d.smem_per_sm = x->smem_per_sm;
	d.smem_per_block = x->smem_per_block;
	d.total_memory = x->total_memory;
	d.clock_khz = x->clock_khz;
	d.cc_major = x->cc_major;
	d.cc_minor = x->cc_minor;
	uint32_t i;
	for (i = 0; i < r->ndevs && r->devs[i].id != d.id; i++)
		;
	if (i < r->ndevs && memcmp(&r->devs[i], &d, sizeof(d)) == 0)
		return; /* every process of the run describes its devices */
	if (i == r->ndevs)
		r->devs = xrealloc(r->devs, ++r->ndevs * sizeof(*r->devs));
	memcpy(&r->devs[i], &d, sizeof(d)); /* padding too, for the memcmp */
	if (trace_writer_device(r->w, &d) != 0)
		r->failed = 1;
}

static void gpu_drops(struct recorder *r, uint32_t pid, const struct ring_gpu_drops *x)
{
	if (!x->dropped)
		return;
	const struct rec_process *p = process_find(r, pid, 0);
	uint32_t th = proc_track(r, pid, 1, p ? p->p.start_ns : r->start_ns);
	r->threads[th].dropped += x->dropped;
	r->gpu_dropped += x->dropped;
	if (trace_writer_drops(r->w, th, x->dropped) != 0)
		r->failed = 1;
}

/* Status messages: the ring string of one is kept as text when a drain
 * brings its status record (gpu_prescan()) no later than its STRING. */
static void status_text_keep(struct recorder *r, uint32_t ring_id, const char *s, size_t len)
{
	uint64_t *v = hmap_get(&r->status_strs, ring_id, 0);
	if (v && !*v) {
		char *text = xmalloc(len + 1);
		memcpy(text, s, len);
		text[len] = '\0';
		*v = (uint64_t)(uintptr_t)text;
	}
}

static void status_want(struct recorder *r, uint32_t ring_id)
{
	if (ring_id && !string_known(r, ring_id) && !hmap_get(&r->status_strs, ring_id, 0))
		hmap_put(&r->status_strs, ring_id, 0, 0);
}

/* What a status says when its text was not kept (its STRING was drained
 * before the status record, or never came). */
static const char *status_default(unsigned code)
{
	switch (code) {
	case RING_GPU_ON:
		return "CUPTI";
	case RING_GPU_NO_CUPTI:
		return "no GPU activity recorded: CUPTI could not be loaded";
	case RING_GPU_OLD_CUPTI:
		return "no GPU activity recorded: CUPTI is older than CUDA 12's";
	case RING_GPU_PRIVILEGES:
		return "no GPU activity recorded: CUPTI lacks the privileges to profile";
	case RING_GPU_SUBSCRIBER:
		return "no GPU activity recorded: another profiler holds CUPTI";
	case RING_GPU_BUFFERS:
		return "GPU activity records were lost: CUPTI's buffers ran short";
	default:
		return "no GPU activity recorded: CUPTI failed";
	}
}

/* How bad a status is: off (every code but these two) is worse than
 * degraded, which is worse than on. */
static int status_rank(unsigned code)
{
	return code == RING_GPU_ON ? 0 : code == RING_GPU_BUFFERS ? 1 : 2;
}

static void gpu_status(struct recorder *r, const struct ring_gpu_status *x)
{
	unsigned code = x->h.aux;
	const uint64_t *v = x->msg_str ? hmap_get(&r->status_strs, x->msg_str, 0) : NULL;
	const char *msg = v && *v ? (const char *)(uintptr_t)*v : status_default(code);
	for (uint32_t i = 0; i < r->nstatuses; i++)
		if (r->statuses[i].code == code && strcmp(r->statuses[i].msg, msg) == 0)
			return; /* every process of the run reports it */
	r->statuses = xrealloc(r->statuses, (r->nstatuses + 1) * sizeof(*r->statuses));
	r->statuses[r->nstatuses++] = (struct recorder_gpu_status){code, xstrdup(msg)};
	if (code != RING_GPU_ON)
		warning("%s", msg);
}

/* External ids and status strings first, in what one read of a ring
 * brought: CUPTI writes a call's EXTERNAL_CORRELATION record before the
 * call's, but nothing makes the ring promise that order, so within a read
 * every external id is known before a call or work looks it up; and a
 * status's STRING, written just before it, is kept as text. */
static void gpu_prescan(struct recorder *r, uint32_t pid, const unsigned char *buf, size_t n)
{
	for (size_t off = 0; off < n;) {
		const struct ring_rec *h = (const void *)(buf + off);
		if (h->size < sizeof(*h) || h->size > n - off)
			return; /* drain_slot() reports it */
		if (h->kind == RING_REC_GPU_EXTCORR && h->size >= sizeof(struct ring_gpu_extcorr)) {
			const struct ring_gpu_extcorr *x = (const void *)h;
			xid_put(r, pid, x->correlation, x->external_id);
		} else if (h->kind == RING_REC_GPU_STATUS && h->size >= sizeof(struct ring_gpu_status)) {
			status_want(r, ((const struct ring_gpu_status *)(const void *)h)->msg_str);
		}
		off += h->size;
	}
}

/* Record sizes, for records shorter than this build's (ignored). */
static size_t gpu_record_size(unsigned kind)
{
	switch (kind) {
	case RING_REC_GPU_API: return sizeof(struct ring_gpu_api);
	case RING_REC_GPU_WORK: return sizeof(struct ring_gpu_work);
	case RING_REC_GPU_MEMORY: return sizeof(struct ring_gpu_memory);
	case RING_REC_GPU_SYNC: return sizeof(struct ring_gpu_sync);
	case RING_REC_GPU_OVERHEAD: return sizeof(struct ring_gpu_overhead);
	case RING_REC_GPU_EXTCORR: return sizeof(struct ring_gpu_extcorr);
	case RING_REC_GPU_DEVICE: return sizeof(struct ring_gpu_device);
	case RING_REC_GPU_DROPS: return sizeof(struct ring_gpu_drops);
	case RING_REC_GPU_STATUS: return sizeof(struct ring_gpu_status);
	default: return SIZE_MAX;
	}
}

static int is_gpu_record(unsigned kind)
{
	return kind >= RING_REC_GPU_API && kind <= RING_REC_GPU_STATUS;
}

/* A GPU record of process pid, whatever slot brought it. Returns 0 when
 * handled, 1 when it names a string not seen yet (defer it). */
static int gpu_record(struct recorder *r, uint32_t pid, const struct ring_rec *h)
{
	if (h->size < gpu_record_size(h->kind))
		return 0;
	switch (h->kind) {
	case RING_REC_GPU_API: {
		const struct ring_gpu_api *x = (const void *)h;
		if (!string_known(r, x->name_str))
			return 1;
		struct trace_event_ext ext = {0};
		ext.correlation = x->correlation;
		ext.external_id = xid_of(r, pid, x->correlation);
		uint32_t th = api_thread(r, pid, x->tid, x->start_ns);
		gpu_event(r, x->start_ns, x->end_ns,
			  desc_typed(r, string_file_id(r, x->name_str), TRACE_EV_CUDA_RUNTIME), th,
			  (uint8_t)(x->flags & TRACE_EVF_NAME_TRUNCATED), &ext);
		return 0;
	}
	case RING_REC_GPU_WORK: {
		const struct ring_gpu_work *x = (const void *)h;
		if (!string_known(r, x->name_str))
			return 1;
		gpu_work(r, pid, x);
		return 0;
	}
	case RING_REC_GPU_MEMORY:
		gpu_memory(r, pid, (const void *)h);
		return 0;
	case RING_REC_GPU_SYNC:
		gpu_sync(r, pid, (const void *)h);
		return 0;
	case RING_REC_GPU_OVERHEAD: {
		const struct ring_gpu_overhead *x = (const void *)h;
		if (!string_known(r, x->name_str))
			return 1;
		uint32_t desc = desc_typed(r, string_file_id(r, x->name_str), TRACE_EV_USER_DEFINED);
		gpu_event(r, x->start_ns, x->end_ns, desc, proc_track(r, pid, 0, x->start_ns), 0, NULL);
		return 0;
	}
	case RING_REC_GPU_EXTCORR: {
		const struct ring_gpu_extcorr *x = (const void *)h;
		xid_put(r, pid, x->correlation, x->external_id);
		return 0;
	}
	case RING_REC_GPU_DEVICE: {
		const struct ring_gpu_device *x = (const void *)h;
		if (!string_known(r, x->name_str))
			return 1;
		gpu_device(r, x);
		return 0;
	}
	case RING_REC_GPU_DROPS:
		gpu_drops(r, pid, (const void *)h);
		return 0;
	case RING_REC_GPU_STATUS: {
		const struct ring_gpu_status *x = (const void *)h;
		if (!string_known(r, x->msg_str))
			return 1;
		gpu_status(r, x);
		return 0;
	}
	}
	return 0;
}

/* The tracks GPU records made get their span at the end: a stream's, from
 * its first event's start to its last event's end (the process's life when
 * it has none, as a track of drops only); a thread whose slot never came,
 * from its calls. */
static void finish_gpu_tracks(struct recorder *r, uint64_t end_ns)
{
	for (uint32_t i = 0; i < r->nthreads; i++) {
		struct rec_thread *t = &r->threads[i];
		if (t->bound && !t->gpu)
			continue; /* a slot's thread: finish_slot() ended it */
		if (t->t.kind == TRACE_TRACK_STREAM && !t->device_known) {
			const uint64_t *d = hmap_get(&r->ctxdev, t->t.pid, t->t.context);
			if (d)
				t->t.device = (uint32_t)*d;
		}
		if (t->lo <= t->hi) {
			t->t.start_ns = t->lo;
			t->t.end_ns = t->hi;
		} else {
			const struct rec_process *p = process_find(r, t->t.pid, 0);
			t->t.start_ns = p ? p->p.start_ns : r->start_ns;
			t->t.end_ns = p && p->p.end_ns ? p->p.end_ns : end_ns;
		}
		thread_write(r, t);
	}
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
		if (r->status_strs.len)
			status_text_keep(r, h->aux, s, strnlen(s, max));
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

/* Any record of the slot; pid: the slot's when it was drained. */
static int dispatch_record(struct recorder *r, uint32_t slot_idx, uint32_t pid, const struct ring_rec *h)
{
	if (is_gpu_record(h->kind))
		return gpu_record(r, pid, h);
	return handle_record(r, slot_idx, h);
}

static void defer_record(struct recorder *r, uint32_t slot_idx, uint32_t pid, const struct ring_rec *h)
{
	if (r->ndeferred == r->deferred_cap) {
		r->deferred_cap = r->deferred_cap ? r->deferred_cap * 2 : 64;
		r->deferred = xrealloc(r->deferred, r->deferred_cap * sizeof(*r->deferred));
	}
	struct deferred *d = &r->deferred[r->ndeferred++];
	d->slot = slot_idx;
	d->pid = pid;
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
	case RING_REC_GPU_API:
		ids[0] = ((const struct ring_gpu_api *)(const void *)h)->name_str, *n = 1;
		break;
	case RING_REC_GPU_WORK:
		ids[0] = ((const struct ring_gpu_work *)(const void *)h)->name_str, *n = 1;
		break;
	case RING_REC_GPU_OVERHEAD:
		ids[0] = ((const struct ring_gpu_overhead *)(const void *)h)->name_str, *n = 1;
		break;
	case RING_REC_GPU_DEVICE:
		ids[0] = ((const struct ring_gpu_device *)(const void *)h)->name_str, *n = 1;
		break;
	case RING_REC_GPU_STATUS:
		ids[0] = ((const struct ring_gpu_status *)(const void *)h)->msg_str, *n = 1;
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
		if (dispatch_record(r, d->slot, d->pid, h) == 0) {
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
		uint32_t pid = slot->pid;
		gpu_prescan(r, pid, r->buf, n);
		for (size_t off = 0; off < n;) {
			const struct ring_rec *h = (const void *)(r->buf + off);
			if (h->size < sizeof(*h) || h->size > n - off)
				BUG("record of %u bytes at %zu of %zu drained", h->size, off, n);
			/* external ids were taken by gpu_prescan() */
			if (h->kind != RING_REC_GPU_EXTCORR && dispatch_record(r, slot_idx, pid, h))
				defer_record(r, slot_idx, pid, h);
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
	struct rec_thread *t = &r->threads[thread_add(r, (uint32_t)r->root, 0)];
	t->bound = 1; /* ended here, not by finish_gpu_tracks() */
	t->t.name_str = trace_writer_string(r->w, "<threads without a ring slot>", 29);
	t->t.start_ns = r->start_ns;
	t->t.end_ns = end_ns;
	thread_write(r, t);
	if (trace_writer_drops(r->w, t->t.index, lost) != 0)
		r->failed = 1;
	t->dropped = lost;
}

static void stats_gpu(const struct recorder *r, struct recorder_stats *stats)
{
	stats->gpu_events = r->gpu_events;
	stats->gpu_dropped = r->gpu_dropped;
	stats->gpu_status = -1;
	stats->gpu_status_msg = NULL;
	stats->gpu_on_msg = NULL;
	for (uint32_t i = 0; i < r->nstatuses; i++) {
		const struct recorder_gpu_status *g = &r->statuses[i];
		if (g->code == RING_GPU_ON && !stats->gpu_on_msg)
			stats->gpu_on_msg = g->msg;
		if (stats->gpu_status < 0 || status_rank(g->code) > status_rank((unsigned)stats->gpu_status)) {
			stats->gpu_status = (int)g->code;
			stats->gpu_status_msg = g->msg;
		}
	}
	stats->gpu_statuses = r->statuses;
	stats->ngpu_statuses = r->nstatuses;
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
	finish_gpu_tracks(r, end);
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
		stats_gpu(r, stats);
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
	hmap_free(&r->tids);
	hmap_free(&r->streams);
	hmap_free(&r->ctxdev);
	hmap_free(&r->proc_tracks);
	hmap_free(&r->gdescs);
	hmap_free(&r->xids);
	hmap_free(&r->xid_max);
	hmap_free(&r->blocks);
	hmap_free(&r->in_use);
	for (size_t i = 0; i < r->status_strs.cap; i++)
		if (r->status_strs.e[i].used)
			free((void *)(uintptr_t)r->status_strs.e[i].value);
	hmap_free(&r->status_strs);
	for (uint32_t i = 0; i < r->nstatuses; i++)
		free((void *)r->statuses[i].msg);
	free(r->statuses);
	free(r->devs);
	free(r->strcomm);
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
