#include "lib/recorder/recorder.h"

#include "formats/trace/trace.h"
#include "gpdl-config.h"
#include "lib/collector/gprof-dl-nvtx.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/hmap.h"
#include "lib/recorder/cpu_sampler.h"
#include "lib/recorder/outname.h"
#include "lib/recorder/split.h"
#include "lib/ring/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFER_POLLS 3 /* polls a record waits for a string before it is named "<unknown>" */
#define FLUSH_INTERVAL_NS 1000000000ull
#define LIVENESS_INTERVAL_NS 100000000ull
#define WATCH_INTERVAL_NS 1000000ull /* how often the processes' watches are polled */
#define FINAL_DRAIN_NS 1000000000ull  /* the end drains what processes still write for this long */
#define NO_THREAD UINT32_MAX
/* External ids are kept for this many correlation ids after the newest
 * (CUDA calls of the process): GPU work completes, and CUPTI delivers it,
 * long before that many more calls were made. */
#define XID_WINDOW (1u << 16)
#define XID_PRUNE_MIN (2u * XID_WINDOW)
/* The stream id of a context's track, where synchronizations of no one
 * stream go: CUPTI's own "invalid" stream id, which Kineto writes as -1. */
#define SYNC_STREAM UINT32_MAX
/* What a name says about communication, and whether it came (recorder.strcomm). */
#define STR_COMM_WORK 1u /* GPU work of NCCL or RCCL (trace_name_is_comm_work) */
#define STR_COMM_CALL 2u /* a backend's collective, "gloo:all_reduce" (trace_name_comm_call) */
#define STR_COMM_WORK_KNOWN 4u /* STR_COMM_WORK was looked for (only kernels' names need it) */
#define STR_GIVEN_UP 8u /* never came: its text is string_give_up()'s placeholder */

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
	struct trace_process p; /* p.rank...: as resolved (resolve_ranks()) */
	int seen_start; /* the collector reported it (not just the launcher's guess) */
	int alive;
	/* Its identity, as it reported it (RING_REC_PROCESS_RANK): source 0 is
	 * none. An exec'd image starts with its old image's. */
	unsigned rank_source;
	int32_t rank, local_rank, world_size;
	uint32_t backend; /* file string id, 0: unknown */
	char *vars[RING_VARS_MAX]; /* the output variables at its start (NULL: unset) */
	/* How it ended, for a process the launcher does not reap. */
	int reaped;            /* p.exit_status is waitpid's */
	int exit_reported;     /* PROCESS_EXIT came: exit_code is its code, -1 unknown */
	int32_t exit_code;
	int32_t zombie_status; /* code or 128+signal read from /proc as a zombie, -1: not seen */
	int32_t root;          /* the image of its rank root (resolve_ranks()), -1: no rank's */
	int pidfd;             /* readable once it ended (process_watch()); -1: none */
	uint64_t start_ticks;  /* /proc's start time of the process its pid names (stat field 22):
				* a pid that names another by now is a reused one; 0: unknown,
				* UINT64_MAX: already reused when it was added */
	struct trace_process written; /* as last written; written.pid 0: never */
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

/* A ring name's desc, for its first domain and category (ring ids). */
struct ring_desc {
	uint32_t desc; /* 0: none yet */
	uint32_t domain, category;
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
	uint32_t gprofdl_domain; /* file string id of "gprof-dl" (domain_file_id()), 0 until seen */
	uint32_t *domfile;       /* ring string id -> its file id as a domain (domain_file_id()), 0: not yet */
	struct ring_desc *rdescs; /* ring string id -> the desc of its first (domain, category) */
	struct hmap descs;       /* (name | domain << 32, category) -> desc id, for the other ones */
	struct hmap starts;      /* range id -> struct pending_start * */
	struct hmap ends;        /* range id -> end ts, for an End drained before its Start */
	struct hmap end_threads; /* range id -> thread of that End */
	uint8_t *strcomm;        /* ring string id -> STR_COMM_* bits: what the name says */

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
	struct hmap backend_strs; /* file string id of a rank's backend -> its text, for the split's headers */
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
	int procs_dirty;         /* a process or its rank changed since PROC records were written */
	int has_ranks;           /* some process reported a rank */
	/* per-rank counters (sample_rank_counters()) */
	struct hmap pid_ticks;   /* (pid, start) -> own CPU ticks at the last sample */
	int rank_sampled, launcher_share;
	uint64_t rank_last_ts;
	double launcher_pct, launcher_rss;
	struct trace_category *cats; /* category names written (file ids), for the split */
	uint32_t ncats;
	struct recorder_rank *ranks; /* for the report, after recorder_finish() */
	uint32_t nranks;
	char **rank_paths;
	char *launcher_path;
	struct trace_header hdr; /* the recorded file's META */
	char *hdr_host, *hdr_cmdline;
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
	uint64_t no_slot_threads, no_slot_events; /* as the collector counted them, at the end */

	struct cpu_sampler cpu;
	uint64_t next_sample, next_flush, next_liveness, next_watch;
	struct pollfd *watch_fds; /* the live processes' pidfds, for one poll() */
	uint32_t *watch_procs;    /* and their indices in procs */
	size_t watch_cap;
	unsigned char *buf;
	pid_t root;
	uint64_t events, start_ns;
	int failed;
	int write_errno; /* why the trace could not be written (sticky in the writer), 0: it could */
};

/* ---- creation ------------------------------------------------------------ */

/* The writer failed (a full disk, a file size limit): its error is
 * sticky, nothing more reaches the file. The first cause is kept for the
 * end's report of what was lost. */
static void write_failed(struct recorder *r)
{
	if (!r->write_errno)
		r->write_errno = errno ? errno : EIO;
	r->failed = 1;
}

int recorder_shm_create(void)
{
	return memfd_create("gprof-dl-rings", MFD_CLOEXEC);
}

struct recorder *recorder_create(const struct recorder_opts *opts)
{
	struct recorder *r = xcalloc(1, sizeof(*r));
	r->opts = *opts;
	r->memfd = opts->shm_fd > 0 ? opts->shm_fd : -1;
	r->out_path = xstrdup(opts->out_path);
	r->w = trace_writer_open(opts->out_path, opts->force);
	if (!r->w) {
		if (errno == EEXIST)
			error("'%s' exists: choose another name with -o, or overwrite it with --force",
			      opts->out_path);
		else
			error("cannot create '%s': %s", opts->out_path, strerror(errno));
		if (r->memfd >= 0)
			close(r->memfd);
		free(r->out_path);
		free(r);
		return NULL;
	}
	if (r->memfd < 0)
		r->memfd = recorder_shm_create();
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
	hmap_init(&r->backend_strs);
	hmap_init(&r->pid_ticks);
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

/* A descriptor that becomes readable when process pid ends (pidfd_open,
 * Linux 5.3), so that the end of a process the launcher does not reap (a
 * rank is torchrun's child, not gprof-dl's) is seen within a millisecond,
 * not at the next /proc scan: its end time, which says which rank of a job
 * ended first, and its status while it is still a zombie. -1 where the
 * kernel has none: the /proc scan then sees it. */
static int process_watch(uint32_t pid)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, (pid_t)pid, 0); /* close-on-exec by default */
	return fd >= 0 ? (int)fd : -1;
#else
	(void)pid;
	return -1;
#endif
}

/* What /proc/PID/stat says of the process pid names now: its state (field
 * 3), start time in clock ticks after boot (22) and, for a zombie, its exit
 * status in waitpid's form (52; -1 when not a zombie or not given). -1 when
 * there is no such process, -2 when it cannot be told (out of descriptors). */
static int proc_stat(uint32_t pid, char *state, uint64_t *start_ticks, long *wstatus)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -1 : -2;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	p += 2; /* fields from 3 (the state) on, separated by single spaces */
	*state = *p;
	*start_ticks = 0;
	*wstatus = -1;
	for (int field = 3; field < 52 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
		if (p && field + 1 == 22)
			*start_ticks = strtoull(p, NULL, 10);
	}
	if (p && (*state == 'Z' || *state == 'X')) {
		char *end;
		long code = strtol(p, &end, 10);
		if (end != p && code >= 0)
			*wstatus = code;
	}
	return 0;
}

/* Whether a process that started at start_ticks (after boot) started after
 * ts on the trace's clock: then it is not the one that wrote a record at
 * ts, but a later process given the same pid. */
static int started_after(uint64_t start_ticks, uint64_t ts)
{
	static long hz;
	struct timespec b, m;
	if (!hz)
		hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		return 0;
	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_MONOTONIC, &m);
	int64_t boot_minus_mono = ((int64_t)b.tv_sec - (int64_t)m.tv_sec) * 1000000000 +
				  ((int64_t)b.tv_nsec - (int64_t)m.tv_nsec);
	/* /proc's start time is cut down to a tick, so never later than the
	 * true start; the margin covers the two clocks' reading */
	uint64_t start_ns = start_ticks / (uint64_t)hz * 1000000000u +
			    start_ticks % (uint64_t)hz * (1000000000u / (uint64_t)hz);
	return (int64_t)start_ns > (int64_t)ts + boot_minus_mono + 1000000;
}

static void process_unwatch(struct rec_process *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
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
	p->p.exit_status = TRACE_EXIT_UNKNOWN;
	p->p.rank = p->p.local_rank = p->p.world_size = -1;
	p->rank = p->local_rank = p->world_size = -1;
	p->exit_code = p->zombie_status = -1;
	p->root = -1;
	p->alive = 1;
	p->pidfd = process_watch(pid);
	/* Which process the pid names: the one that wrote at ts started before
	 * ts. One that started later took the pid of ours, which ended before
	 * the launcher learnt of it: neither its pidfd nor /proc is ours. */
	char state;
	long wstatus;
	int known = proc_stat(pid, &state, &p->start_ticks, &wstatus); /* -2: the next look decides */
	if (known == -1 || (known == 0 && started_after(p->start_ticks, ts))) {
		process_unwatch(p);
		p->start_ticks = UINT64_MAX; /* the next look finds it gone */
	}
	r->procs_dirty = 1;
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

static const char *env_get(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

int recorder_begin(struct recorder *r, pid_t root, int argc, char **argv, uint32_t sources)
{
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	char *cmdline = join_args(argc, argv);
	int32_t rank, local_rank, world_size; /* gprof-dl's own: a copy per rank has them */
	ring_rank_from_env(env_get, NULL, &rank, &local_rank, &world_size);
	struct trace_header h = {
		.version_major = TRACE_FORMAT_VERSION_MAJOR,
		.version_minor = TRACE_FORMAT_VERSION_MINOR,
		.sources = sources,
		.clock_domain = GPDL_CLOCK_DOMAIN,
		.wall_offset_ns = clock_wall_offset_ns(),
		.hostname = host,
		.pid = (uint32_t)root,
		.rank = rank,
		.cmdline = cmdline,
		.start_ns = clock_now_ns(),
		.ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN),
		.gprof_version = GPDL_VERSION,
		.world_size = world_size,
		.dist_backend = "",
		.local_rank = local_rank,
	};
	r->root = root;
	r->start_ns = h.start_ns;
	int rc = trace_writer_header(r->w, &h);
	struct rec_process *p = process_add(r, (uint32_t)root, (uint32_t)getpid(), h.start_ns);
	p->p.cmdline_str = trace_writer_string(r->w, cmdline, strlen(cmdline));
	/* kept for the split's headers */
	r->hdr = h;
	r->hdr.hostname = r->hdr_host = xstrdup(host);
	r->hdr.cmdline = r->hdr_cmdline = cmdline;
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

/* Grows the arrays indexed by ring string id to hold ring_id. */
static void strmap_grow(struct recorder *r, uint32_t ring_id)
{
	size_t old = r->strmap_cap, cap = old ? old : 1024;
	while (cap <= ring_id)
		cap *= 2;
	r->strmap = xrealloc(r->strmap, cap * sizeof(*r->strmap));
	memset(r->strmap + old, 0, (cap - old) * sizeof(*r->strmap));
	r->domfile = xrealloc(r->domfile, cap * sizeof(*r->domfile));
	memset(r->domfile + old, 0, (cap - old) * sizeof(*r->domfile));
	r->rdescs = xrealloc(r->rdescs, cap * sizeof(*r->rdescs));
	memset(r->rdescs + old, 0, (cap - old) * sizeof(*r->rdescs));
	r->strcomm = xrealloc(r->strcomm, cap);
	memset(r->strcomm + old, 0, cap - old);
	r->strmap_cap = cap;
}

/* A name from a ring becomes a string of the file, appended: ring ids are
 * not shared between threads' caches (nor processes' images), so a text may
 * come under several ids, and the readers take names by text. Nothing here
 * looks at the text but a few bytes: this runs for every new name the
 * target makes, as fast as it makes them. */
static void string_define(struct recorder *r, uint32_t ring_id, const char *s, size_t len)
{
	if (ring_id == 0 || ring_id > (1u << 30))
		return;
	if (ring_id >= r->strmap_cap)
		strmap_grow(r, ring_id);
	uint32_t id = trace_writer_string_append(r->w, s, len);
	if (!id) {
		/* the file is lost from here on: the name counts as known, so
		 * that records naming it are written (and fail, counted) rather
		 * than wait for it and be counted as names lost */
		write_failed(r);
		id = UINT32_MAX;
	}
	r->strmap[ring_id] = id;
	/* a backend's collective is "gloo:OP", "nccl:OP", "mpi:OP", "ucc:OP":
	 * a ':' third or fourth, else it cannot be one */
	int maybe_call = (len > 3 && s[3] == ':') || (len > 4 && s[4] == ':');
	r->strcomm[ring_id] = maybe_call && trace_name_comm_call(s, len) ? STR_COMM_CALL : 0;
}

/* Whether a GPU kernel's name makes it communication, as the importer
 * reads Kineto's kernels: "nccl" or "rccl" in it, any case. Looked for
 * once per name, and only for kernels' names. */
static int string_comm_work(struct recorder *r, uint32_t ring_id)
{
	if (ring_id >= r->strmap_cap)
		return 0;
	if (!(r->strcomm[ring_id] & STR_COMM_WORK_KNOWN)) {
		size_t len;
		const char *s = trace_writer_string_text(r->w, r->strmap[ring_id], &len);
		r->strcomm[ring_id] |= STR_COMM_WORK_KNOWN | (trace_name_is_comm_work(s, len) ? STR_COMM_WORK : 0);
	}
	return (r->strcomm[ring_id] & STR_COMM_WORK) != 0;
}

/* A ring string used as a domain: one file id per text, whichever thread
 * or process named it, so that a domain's categories and the gprof-dl
 * domain are found by id. Interned by content, once per ring id. */
static uint32_t domain_file_id(struct recorder *r, uint32_t ring_id)
{
	if (ring_id == 0 || ring_id >= r->strmap_cap || !r->strmap[ring_id])
		return 0;
	if (r->domfile[ring_id])
		return r->domfile[ring_id];
	uint32_t id = r->strmap[ring_id];
	if (id != UINT32_MAX) {
		size_t len;
		const char *text = trace_writer_string_text(r->w, id, &len);
		char *copy = xmemdup0(text, len); /* the writer's arena may move as it interns */
		id = trace_writer_string(r->w, copy, len);
		if (!id) {
			write_failed(r);
			id = UINT32_MAX;
		} else if (len == strlen(GPROF_DL_NVTX_DOMAIN) && memcmp(copy, GPROF_DL_NVTX_DOMAIN, len) == 0) {
			r->gprofdl_domain = id;
		}
		free(copy);
	}
	r->domfile[ring_id] = id;
	return id;
}

/* Keeps the text of a rank's backend (file string id), which the split's
 * headers need after the file is closed. */
static void backend_keep(struct recorder *r, uint32_t file_id)
{
	if (!file_id || file_id == UINT32_MAX || hmap_get(&r->backend_strs, file_id, 0))
		return;
	size_t len;
	const char *s = trace_writer_string_text(r->w, file_id, &len);
	hmap_put(&r->backend_strs, file_id, 0, (uint64_t)(uintptr_t)xmemdup0(s, len));
}

/* A rank's backend by its file string id, "" when unknown. */
static const char *backend_text(const struct recorder *r, uint32_t file_id)
{
	const uint64_t *v = file_id ? hmap_get(&r->backend_strs, file_id, 0) : NULL;
	return v ? (const char *)(uintptr_t)*v : "";
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
	if (ring_id < r->strmap_cap)
		r->strcomm[ring_id] |= STR_GIVEN_UP;
	r->unknown_strings++;
}

/* The gprof-dl domain's categories are event types; an operator named as
 * a backend's collective ("gloo:all_reduce", the name torch's c10d gives
 * its work) is a Communication event. */
static uint8_t event_type_of(const struct recorder *r, uint32_t domain_file, uint32_t category,
			     uint32_t name_ring)
{
	if (!domain_file || domain_file != r->gprofdl_domain)
		return TRACE_EV_USER_DEFINED;
	if (category == GPROF_DL_CAT_OPERATOR && name_ring < r->strmap_cap &&
	    (r->strcomm[name_ring] & STR_COMM_CALL))
		return TRACE_EV_COMMUNICATION;
	if ((category >= GPROF_DL_CAT_PROFILE_STEP && category <= GPROF_DL_CAT_PYTHON_OP) ||
	    category == GPROF_DL_CAT_COMMUNICATION)
		return (uint8_t)category;
	return TRACE_EV_USER_DEFINED;
}

/* The desc of a ring name in a domain and category: nearly always the
 * name's first, kept beside it; a name that a new ring id has just defined
 * cannot have one yet, so it is appended with no lookup. */
static uint32_t desc_of(struct recorder *r, uint32_t name, uint32_t domain, uint32_t category)
{
	struct ring_desc *d = name < r->strmap_cap ? &r->rdescs[name] : NULL;
	if (d && d->desc && d->domain == domain && d->category == category)
		return d->desc;
	uint64_t k1 = (uint64_t)name | (uint64_t)domain << 32;
	uint64_t *v = d && d->desc ? hmap_get(&r->descs, k1, category) : NULL;
	if (v)
		return (uint32_t)*v;
	uint32_t dom = domain_file_id(r, domain);
	uint8_t type = event_type_of(r, dom, category, name);
	uint32_t nm = string_file_id(r, name);
	uint32_t id;
	if (d && !d->desc) {
		id = trace_writer_desc_append(r->w, nm, dom, category, type);
		*d = (struct ring_desc){id, domain, category};
	} else {
		id = trace_writer_desc(r->w, nm, dom, category, type);
		hmap_put(&r->descs, k1, category, id);
	}
	return id;
}

static void thread_write(struct recorder *r, struct rec_thread *t)
{
	if (trace_writer_thread(r->w, &t->t) != 0)
		write_failed(r);
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
		write_failed(r);
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
		if (type == TRACE_EV_KERNEL && string_comm_work(r, x->name_str))
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
		write_failed(r);
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
		write_failed(r);
}

/* What a status says when its text is lost (the trace could not be
 * written, or the collector sent none). */
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
	/* the text from the trace's string table, which keeps every string
	 * the rings brought, in whichever drain its STRING came */
	size_t len = 0;
	const char *text = "";
	if (x->msg_str < r->strmap_cap && !(r->strcomm[x->msg_str] & STR_GIVEN_UP))
		text = trace_writer_string_text(r->w, string_file_id(r, x->msg_str), &len);
	char *copy = len ? xmemdup0(text, len) : NULL;
	const char *msg = copy ? copy : status_default(code);
	for (uint32_t i = 0; i < r->nstatuses; i++)
		if (r->statuses[i].code == code && strcmp(r->statuses[i].msg, msg) == 0)
			goto out; /* every process of the run reports it */
	r->statuses = xrealloc(r->statuses, (r->nstatuses + 1) * sizeof(*r->statuses));
	r->statuses[r->nstatuses++] = (struct recorder_gpu_status){code, xstrdup(msg)};
	if (code != RING_GPU_ON)
		warning("%s", msg);
out:
	free(copy);
}

/* External ids first, in what one read of a ring brought: CUPTI writes a
 * call's EXTERNAL_CORRELATION record before the call's, but nothing makes
 * the ring promise that order, so within a read every external id is known
 * before a call or work looks it up. */
static void gpu_prescan(struct recorder *r, uint32_t pid, const unsigned char *buf, size_t n)
{
	for (size_t off = 0; off < n;) {
		const struct ring_rec *h = (const void *)(buf + off);
		if (h->size < sizeof(*h) || h->size > n - off)
			return; /* drain_slot() reports it */
		if (h->kind == RING_REC_GPU_EXTCORR && h->size >= sizeof(struct ring_gpu_extcorr)) {
			const struct ring_gpu_extcorr *x = (const void *)h;
			xid_put(r, pid, x->correlation, x->external_id);
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
static void write_processes(struct recorder *r);
static void resolve_ranks(struct recorder *r);

/* A rank reported: a source at least as strong as the one known wins (the
 * program's init_process_group over the environment; an exec'd image's
 * environment over its old image's). */
static void process_identity(struct recorder *r, struct rec_process *p, const struct ring_process_rank *x)
{
	if (x->h.aux < p->rank_source || x->rank < 0)
		return;
	p->rank_source = x->h.aux;
	r->has_ranks = 1;
	p->rank = x->rank;
	p->local_rank = x->local_rank;
	p->world_size = x->world_size;
	if (x->backend_str || x->h.aux == RING_RANK_INIT) {
		p->backend = string_file_id(r, x->backend_str);
		backend_keep(r, p->backend);
	}
	r->procs_dirty = 1;
}

/* A collective's call (the bindings' comm()): a Communication event on the
 * thread that made it, its bytes and its call's identity in the details. */
static void comm_event(struct recorder *r, const struct rec_thread *t, const struct ring_comm *x)
{
	struct trace_event_ext ext;
	memset(&ext, 0, sizeof(ext));
	ext.bytes = x->bytes;
	ext.has_coll_seq = x->seq >= 0;
	ext.coll_seq = x->seq >= 0 ? (uint64_t)x->seq : 0;
	ext.pg_str = string_file_id(r, x->pg_str);
	ext.group_size = x->group_size;
	ext.dtype_str = string_file_id(r, x->dtype_str);
	ext.has_peer = x->peer >= 0;
	ext.peer = x->peer >= 0 ? x->peer : 0;
	uint32_t desc = desc_typed(r, string_file_id(r, x->name_str), TRACE_EV_COMMUNICATION);
	event_write_ext(r, x->start_ns, x->end_ns, desc, t->t.index, 0, &ext);
}

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
			desc = trace_writer_desc(r->w, s, domain_file_id(r, x->domain_str), 0,
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
		struct trace_category c = {domain_file_id(r, x->domain_str), x->category, string_file_id(r, x->name_str)};
		if (trace_writer_category(r->w, &c) != 0)
			write_failed(r);
		r->cats = xrealloc(r->cats, (r->ncats + 1) * sizeof(*r->cats));
		r->cats[r->ncats++] = c;
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
	case RING_REC_COMM: {
		const struct ring_comm *x = (const void *)h;
		if (h->size < sizeof(*x))
			return 0;
		if (!names_known(r, x->name_str, x->pg_str, x->dtype_str))
			return 1;
		comm_event(r, t, x);
		return 0;
	}
	case RING_REC_PROCESS_EXIT: {
		/* also drained once the process is known dead (process_ended()) */
		const struct ring_process *x = (const void *)h;
		struct rec_process *p = process_find(r, x->pid, 0);
		if (p && (p->alive || !p->p.end_ns || x->ts_ns < p->p.end_ns))
			p->p.end_ns = x->ts_ns;
		if (p) {
			p->exit_reported = 1;
			p->exit_code = h->aux & RING_EXIT_KNOWN ? (int32_t)(h->aux & 0xffu) : -1;
		}
		return 0;
	}
	case RING_REC_PROCESS_RANK: {
		const struct ring_process_rank *x = (const void *)h;
		if (h->size < sizeof(*x))
			return 0;
		if (!string_known(r, x->backend_str))
			return 1;
		struct rec_process *p = process_find(r, x->pid, 0);
		if (!p)
			return 1; /* its PROCESS_START waits for its command line */
		process_identity(r, p, x);
		return 0;
	}
	case RING_REC_PROCESS_VAR: {
		const struct ring_process_var *x = (const void *)h;
		struct rec_process *p = process_find(r, x->pid, 0);
		unsigned i = h->aux & 0xffffu;
		if (h->size < sizeof(*x) || x->len > h->size - sizeof(*x) - 1 || i >= RING_VARS_MAX)
			return 0;
		if (!p)
			return 1;
		free(p->vars[i]);
		p->vars[i] = NULL;
		if (h->aux & RING_VAR_SET) {
			p->vars[i] = xmalloc(x->len + 1);
			memcpy(p->vars[i], x + 1, x->len);
			p->vars[i][x->len] = '\0';
		}
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
	case RING_REC_COMM: {
		const struct ring_comm *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->pg_str, ids[2] = x->dtype_str, *n = 3;
		break;
	}
	case RING_REC_PROCESS_RANK:
		ids[0] = ((const struct ring_process_rank *)(const void *)h)->backend_str, *n = 1;
		break;
	}
	return ids;
}

/* Records wait for the STRING record another thread's ring holds; after a few
 * polls, or at the end, the names that never came are given up on. */
static void retry_deferred(struct recorder *r, int final, int count)
{
	size_t keep = 0;
	for (size_t i = 0; i < r->ndeferred; i++) {
		struct deferred *d = &r->deferred[i];
		const struct ring_rec *h = d->big ? (const void *)d->big : (const void *)d->rec;
		if (final || (count && ++d->polls >= DEFER_POLLS)) {
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

/* Drains what the slot holds, at most two rings' worth: all that a thread
 * that ended left, and no more than that of one that writes on as fast as
 * it is drained, which must not keep the launcher from the other slots and
 * from seeing processes end. */
static uint64_t drain_slot(struct recorder *r, uint32_t slot_idx)
{
	struct ring_slot *slot = ring_shm_slot(r->shm, slot_idx);
	struct slot_state *st = &r->slots[slot_idx];
	uint64_t total = 0;
	size_t n;

	if (st->thread >= 0 && st->generation != slot->generation)
		st->thread = -1; /* reused by a new thread: cannot happen before we free it */
	while (total < 2 * r->opts.ring_bytes && (n = ring_read(r->shm, slot, r->buf, r->opts.ring_bytes)) > 0) {
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
			write_failed(r);
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
	if (!p) { /* the launcher's guess of one it reaped before this start was drained */
		struct rec_process *last = process_find(r, x->pid, 0);
		if (last && !last->seen_start && last->p.end_ns && x->ts_ns <= last->p.end_ns)
			p = last;
	}
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
		process_unwatch(p); /* the new image watches the pid */
		if (r->nexecs == r->execs_cap) {
			r->execs_cap = r->execs_cap ? r->execs_cap * 2 : 8;
			r->execs = xrealloc(r->execs, r->execs_cap * sizeof(*r->execs));
		}
		r->execs[r->nexecs++] = (struct exec_end){x->pid, x->ts_ns};
	}
	int32_t old = p ? (int32_t)(p - r->procs) : -1; /* process_add() moves procs */
	p = process_add(r, x->pid, x->ppid, x->ts_ns);
	p->p.cmdline_str = cmd;
	p->seen_start = 1;
	if (old >= 0) { /* an exec keeps the process: its rank and variables */
		const struct rec_process *o = &r->procs[old];
		p->rank_source = o->rank_source;
		p->rank = o->rank;
		p->local_rank = o->local_rank;
		p->world_size = o->world_size;
		p->backend = o->backend;
		for (unsigned i = 0; i < RING_VARS_MAX; i++)
			p->vars[i] = o->vars[i] ? xstrdup(o->vars[i]) : NULL;
	}
}

/* Drains what every slot holds before a process counts as ended: its
 * PROCESS_START among it when the launcher had not seen it yet (and the
 * STRING its command line needs, which its parent may have written, in
 * its own slot, before the fork), an exec, its PROCESS_EXIT. So a start
 * drained late confirms the process rather than adds a second one. The
 * records that still wait for a string are tried again (not counted as a
 * poll: only polls give a string up). */
static void drain_pending(struct recorder *r)
{
	uint32_t used = atomic_load_explicit(&r->shm->slots_used, memory_order_acquire);
	for (uint32_t k = 0; k < used && k < r->shm->nslots; k++) {
		uint32_t state = atomic_load_explicit(&ring_shm_slot(r->shm, k)->state, memory_order_acquire);
		if (state == RING_SLOT_ACTIVE || state == RING_SLOT_EXITED)
			drain_slot(r, k);
	}
	if (r->ndeferred)
		retry_deferred(r, 0, 0);
}

/* The live image of the process of image i once its slots are drained (an
 * exec drained there makes a new one), by index: draining may move procs.
 * -1 when none is alive. */
static int32_t process_drained(struct recorder *r, uint32_t i)
{
	uint32_t pid = r->procs[i].p.pid;
	drain_pending(r);
	const struct rec_process *p = process_find(r, pid, 1);
	return p ? (int32_t)(p - r->procs) : -1;
}

/* The process of image i is gone: what its slots still hold is drained
 * first (its PROCESS_START, its PROCESS_EXIT among it), then its threads
 * end. By index: draining may add images. Returns the image that ended
 * (the latest, after an exec drained here). */
static uint32_t process_ended(struct recorder *r, uint32_t i, uint64_t end_ns)
{
	int32_t live = process_drained(r, i);
	if (live >= 0)
		i = (uint32_t)live;
	uint32_t pid = r->procs[i].p.pid;
	struct rec_process *p = &r->procs[i];
	p->alive = 0;
	process_unwatch(p);
	r->procs_dirty = 1;
	if (!p->p.end_ns)
		p->p.end_ns = end_ns;
	finish_process_slots(r, pid, p->p.end_ns);
	return i;
}

/* The exit status of a process the launcher did not reap, once it is
 * gone: as /proc showed it as a zombie, else as it reported it (exit,
 * _exit, main's return), else it died without exiting: killed. */
static void process_unreaped_status(struct rec_process *p)
{
	if (p->reaped)
		return;
	if (p->zombie_status >= 0)
		p->p.exit_status = p->zombie_status;
	else if (p->exit_reported)
		p->p.exit_status = p->exit_code >= 0 ? p->exit_code : TRACE_EXIT_UNKNOWN;
	else
		p->p.exit_status = TRACE_EXIT_KILLED;
}

void recorder_process_reaped(struct recorder *r, pid_t pid, int status, const struct rusage *usage)
{
	uint64_t now = clock_now_ns();
	if (usage)
		cpu_sampler_reaped(&r->cpu, usage);
	/* first what it wrote: its PROCESS_START, when the launcher was too
	 * busy to drain it while it ran */
	drain_pending(r);
	struct rec_process *p = process_find(r, (uint32_t)pid, 1);
	if (!p) { /* seen dead (a zombie) before it was reaped: the same process */
		p = process_find(r, (uint32_t)pid, 0);
		if (p && p->reaped)
			p = NULL;
	}
	if (!p)
		p = process_add(r, (uint32_t)pid, 0, now); /* never loaded the collector */
	p->reaped = 1;
	if (WIFEXITED(status))
		p->p.exit_status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		p->p.exit_status = 128 + WTERMSIG(status);
	r->procs_dirty = 1;
	if (p->alive)
		process_ended(r, (uint32_t)(p - r->procs), now);
}

/* A process the launcher does not reap (its parent does) is dead once /proc
 * says so: gone, a zombie, or its pid names a process that started later
 * (start_ticks, when known, differs: the pid was reused). A zombie's exit
 * status (waitpid's form) goes to *status as a code or 128 + signal; -1
 * otherwise. */
static int process_is_dead(uint32_t pid, uint64_t start_ticks, int32_t *status)
{
	char state;
	uint64_t ticks;
	long code;
	*status = -1;
	int known = proc_stat(pid, &state, &ticks, &code);
	if (known == -2)
		return 0; /* cannot tell now (out of descriptors): the next look will */
	if (known != 0 || (start_ticks && ticks != start_ticks))
		return 1;
	if (state != 'Z' && state != 'X')
		return 0;
	if (code >= 0 && WIFEXITED((int)code))
		*status = WEXITSTATUS((int)code);
	else if (code >= 0 && WIFSIGNALED((int)code))
		*status = 128 + WTERMSIG((int)code);
	return 1;
}

/* Process i, which the launcher does not reap, is gone or a zombie (whose
 * status, or -1): it ended at now, with the status it can be given. The
 * status goes to the image that ended (an exec may be drained first). */
static void process_found_dead(struct recorder *r, uint32_t i, int32_t status, uint64_t now)
{
	i = process_ended(r, i, now);
	r->procs[i].zombie_status = status;
	process_unreaped_status(&r->procs[i]);
}

/* The processes whose watch (process_watch()) says they ended: ended now,
 * with the status a zombie shows. A readable pidfd is proof enough: by the
 * time /proc is read the zombie may be reaped and its pid taken. Indices,
 * not pointers: ending a process drains its rings, which may add
 * processes. */
static void check_watches(struct recorder *r, uint64_t now)
{
	size_t n = 0;
	for (uint32_t i = 0; i < r->nprocs; i++) {
		if (!r->procs[i].alive || r->procs[i].pidfd < 0)
			continue;
		if (n == r->watch_cap) {
			r->watch_cap = r->watch_cap ? 2 * r->watch_cap : 16;
			r->watch_fds = xrealloc(r->watch_fds, r->watch_cap * sizeof(*r->watch_fds));
			r->watch_procs = xrealloc(r->watch_procs, r->watch_cap * sizeof(*r->watch_procs));
		}
		r->watch_fds[n] = (struct pollfd){.fd = r->procs[i].pidfd, .events = POLLIN};
		r->watch_procs[n++] = i;
	}
	if (!n || poll(r->watch_fds, n, 0) <= 0)
		return;
	for (size_t k = 0; k < n; k++) {
		uint32_t i = r->watch_procs[k];
		int32_t status;
		if (!(r->watch_fds[k].revents & (POLLIN | POLLHUP)) || !r->procs[i].alive)
			continue;
		process_is_dead(r->procs[i].p.pid, r->procs[i].start_ticks, &status);
		process_found_dead(r, i, status, now);
	}
}

static void check_liveness(struct recorder *r, uint64_t now)
{
	for (uint32_t i = 0; i < r->nprocs; i++) {
		int32_t status;
		if (r->procs[i].alive && process_is_dead(r->procs[i].p.pid, r->procs[i].start_ticks, &status))
			process_found_dead(r, i, status, now);
	}
}

/* With ranks, each rank's processes get series of their own, under the
 * rank root's pid, so that a rank's file has its own CPU and memory: from
 * each live process's own CPU time (not its reaped children's, which its
 * own samples counted already) since the last sample. The root's series
 * then keep what the ranks leave of the whole (the launcher's share), so
 * that the series of one file still add up to the target's total; when
 * the root is itself a rank there is no such share. */
static void sample_rank_counters(struct recorder *r, uint64_t now, const struct cpu_sample *total)
{
	resolve_ranks(r);
	uint32_t n = r->nprocs;
	uint64_t *ticks = xcalloc(n ? n : 1, sizeof(*ticks)), *rss = xcalloc(n ? n : 1, sizeof(*rss));
	for (uint32_t i = 0; i < n; i++) {
		const struct rec_process *p = &r->procs[i];
		uint64_t t, pages;
		if (!p->alive || cpu_sample_pid((pid_t)p->p.pid, &t, &pages) != 0)
			continue;
		uint64_t *prev = hmap_get(&r->pid_ticks, p->p.pid, p->p.start_ns);
		uint64_t d = prev && *prev <= t ? t - *prev : prev ? 0 : t;
		hmap_put(&r->pid_ticks, p->p.pid, p->p.start_ns, t);
		if (p->root >= 0) {
			ticks[p->root] += d;
			rss[p->root] += pages;
		}
	}
	double wall_s = r->rank_sampled ? (double)(now - r->rank_last_ts) / 1e9 : 0.0;
	double ranks_pct = 0.0, ranks_rss = 0.0;
	const struct rec_process *root = process_find(r, (uint32_t)r->root, 0);
	for (uint32_t i = 0; i < n && wall_s > 0.0; i++) {
		if (r->procs[i].root != (int32_t)i)
			continue;
		double pct = (double)ticks[i] / (double)r->cpu.ticks_per_sec / wall_s * 100.0;
		double bytes = (double)rss[i] * (double)r->cpu.page_size;
		struct trace_counter c[2] = {
			{now, TRACE_CTR_CPU_PROCESS, r->procs[i].p.pid, pct},
			{now, TRACE_CTR_RSS_BYTES, r->procs[i].p.pid, bytes},
		};
		for (int k = 0; k < 2; k++)
			if (trace_writer_counter(r->w, &c[k]) != 0)
				write_failed(r);
		ranks_pct += pct;
		ranks_rss += bytes;
	}
	r->launcher_share = !root || root->root < 0;
	if (total) {
		r->launcher_pct = total->process_pct > ranks_pct ? total->process_pct - ranks_pct : 0.0;
		r->launcher_rss = (double)total->rss_bytes > ranks_rss ? (double)total->rss_bytes - ranks_rss : 0.0;
	}
	r->rank_sampled = 1;
	r->rank_last_ts = now;
	free(ticks);
	free(rss);
}

static void sample_counters(struct recorder *r, uint64_t now)
{
	pid_t pids[256];
	unsigned n = 0;
	for (uint32_t i = 0; i < r->nprocs && n < 256; i++)
		if (r->procs[i].alive)
			pids[n++] = (pid_t)r->procs[i].p.pid;
	struct cpu_sample s;
	int have = cpu_sampler_sample(&r->cpu, pids, n, now, &s);
	if (r->has_ranks || r->rank_sampled)
		sample_rank_counters(r, now, have ? &s : NULL);
	if (!have)
		return;
	struct trace_counter c[3] = {
		{now, TRACE_CTR_CPU_PROCESS, (uint32_t)r->root, s.process_pct},
		{now, TRACE_CTR_CPU_SYSTEM, 0, s.system_pct},
		{now, TRACE_CTR_RSS_BYTES, (uint32_t)r->root, (double)s.rss_bytes},
	};
	for (int i = 0; i < 3; i++) {
		if (i != 1 && r->rank_sampled && !r->launcher_share)
			continue; /* the ranks' series say it all */
		if (i == 0 && r->rank_sampled)
			c[i].value = r->launcher_pct;
		if (i == 2 && r->rank_sampled)
			c[i].value = r->launcher_rss;
		if (trace_writer_counter(r->w, &c[i]) != 0)
			write_failed(r);
	}
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
		retry_deferred(r, 0, 1);
	uint64_t now = clock_now_ns();
	if (now >= r->next_watch) {
		check_watches(r, now);
		r->next_watch = now + WATCH_INTERVAL_NS;
	}
	if (now >= r->next_liveness) {
		check_liveness(r, now);
		r->next_liveness = now + LIVENESS_INTERVAL_NS;
	}
	if (now >= r->next_sample) {
		sample_counters(r, now);
		r->next_sample = now + r->opts.sample_interval_ns;
	}
	if (now >= r->next_flush) {
		if (r->procs_dirty)
			write_processes(r);
		if (trace_writer_flush(r->w) != 0)
			write_failed(r);
		r->next_flush = now + FLUSH_INTERVAL_NS;
	}
	return total;
}

/* ---- ranks --------------------------------------------------------------- */

/* Which processes are ranks, from the identities they reported: a process
 * with an identity is a rank root when its (rank, world size) differs from
 * its parent's effective identity (its own, or inherited from its nearest
 * ancestor with one) and no descendant is one (innermost wins: torchrun
 * under srun has SLURM_PROCID, but its workers are the ranks). Every other
 * process belongs to the rank root nearest above it (a DataLoader worker to
 * its rank), or to none (-1: a launcher). The images of one pid (exec) are
 * one process: the latest image's identity and parent count. Fills each
 * image's p.rank, local_rank, world_size, backend_str and root. */
static void resolve_ranks(struct recorder *r)
{
	uint32_t n = r->nprocs;
	if (!n)
		return;
	struct hmap latest; /* pid -> its latest image */
	hmap_init(&latest);
	for (uint32_t i = 0; i < n; i++)
		hmap_put(&latest, r->procs[i].p.pid, 0, i);
	int32_t *parent = xmalloc(n * sizeof(*parent)), *eff = xmalloc(n * sizeof(*eff));
	uint8_t *cand = xcalloc(n, 1), *below = xcalloc(n, 1);
	for (uint32_t i = 0; i < n; i++) {
		const uint64_t *l = hmap_get(&latest, r->procs[i].p.pid, 0);
		const uint64_t *q = hmap_get(&latest, r->procs[*l].p.ppid, 0);
		parent[i] = q && *q != *l ? (int32_t)*q : -1;
		eff[i] = -2; /* not yet */
	}
	/* eff[i]: the image whose identity process i has (-1: none); the
	 * walks are bounded by n, whatever cycles pid reuse may make */
	for (uint32_t i = 0; i < n; i++) {
		const uint64_t *l = hmap_get(&latest, r->procs[i].p.pid, 0);
		int32_t k = (int32_t)*l;
		for (uint32_t steps = 0; k >= 0 && !r->procs[k].rank_source && steps < n; steps++)
			k = parent[k];
		eff[i] = k >= 0 && r->procs[k].rank_source ? k : -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct rec_process *p = &r->procs[i];
		const uint64_t *l = hmap_get(&latest, p->p.pid, 0);
		if (*l != i || !p->rank_source)
			continue; /* an old image: its pid's latest decides */
		int32_t pe = parent[i] >= 0 ? eff[parent[i]] : -1;
		cand[i] = pe < 0 || r->procs[pe].rank != p->rank || r->procs[pe].world_size != p->world_size;
		for (int32_t k = parent[i], steps = 0; cand[i] && k >= 0 && !below[k] && (uint32_t)steps < n;
		     k = parent[k], steps++)
			below[k] = 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct rec_process *p = &r->procs[i];
		int32_t k = (int32_t)*hmap_get(&latest, p->p.pid, 0);
		for (uint32_t steps = 0; k >= 0 && !(cand[k] && !below[k]) && steps < n; steps++)
			k = parent[k];
		p->root = k >= 0 && cand[k] && !below[k] ? k : -1;
	}
	/* a rank's local rank and backend: its root's, or what another of its
	 * processes with the same identity said (the backend of a worker's
	 * init_process_group under a root that srun named); by root in eff[] */
	int32_t *backend = (int32_t *)eff, *local = parent;
	for (uint32_t i = 0; i < n; i++) {
		backend[i] = (int32_t)r->procs[i].backend;
		local[i] = r->procs[i].local_rank;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct rec_process *q = &r->procs[i];
		int32_t k = q->root;
		if (k < 0 || !q->rank_source || q->rank != r->procs[k].rank || q->world_size != r->procs[k].world_size)
			continue;
		if (!backend[k])
			backend[k] = (int32_t)q->backend;
		if (local[k] < 0)
			local[k] = q->local_rank;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct rec_process *p = &r->procs[i];
		const struct rec_process *root = p->root >= 0 ? &r->procs[p->root] : NULL;
		p->p.rank = root ? root->rank : -1;
		p->p.world_size = root ? root->world_size : -1;
		p->p.local_rank = root ? local[p->root] : -1;
		p->p.backend_str = root ? (uint32_t)backend[p->root] : 0;
	}
	free(parent);
	free(eff);
	free(cand);
	free(below);
	hmap_free(&latest);
}

/* PROC records with the ranks as resolved now: during the run too, so that
 * a file whose launcher was killed still says which process was which rank
 * (a reader keeps the last record of a process). */
static void write_processes(struct recorder *r)
{
	resolve_ranks(r);
	for (uint32_t i = 0; i < r->nprocs; i++) {
		struct rec_process *p = &r->procs[i];
		const struct trace_process *a = &p->p, *b = &p->written;
		if (a->pid == b->pid && a->ppid == b->ppid && a->start_ns == b->start_ns &&
		    a->end_ns == b->end_ns && a->exit_status == b->exit_status &&
		    a->cmdline_str == b->cmdline_str && a->rank == b->rank && a->local_rank == b->local_rank &&
		    a->world_size == b->world_size && a->backend_str == b->backend_str)
			continue; /* the file says so already */
		if (trace_writer_process(r->w, a) != 0)
			write_failed(r);
		p->written = *a;
	}
	r->procs_dirty = 0;
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

/* Threads that found no free slot (more alive at once than --max-threads)
 * lost their events: a track of their own, named with how many threads they
 * were, carries the events' count as its drops, so that every reader shows
 * both. The track is added before any pointer into the table is taken:
 * adding may move it. */
static void write_no_slot_drops(struct recorder *r, uint64_t end_ns)
{
	uint64_t threads = atomic_load(&r->shm->no_slot_threads);
	uint64_t events = atomic_load(&r->shm->no_slot_events);
	r->no_slot_threads = threads;
	r->no_slot_events = events;
	if (!threads && !events)
		return;
	char name[64];
	int len = snprintf(name, sizeof(name), "<%llu thread%s without a ring slot>", (unsigned long long)threads,
			   threads == 1 ? "" : "s");
	uint32_t i = thread_add(r, (uint32_t)r->root, 0);
	struct rec_thread *t = &r->threads[i];
	t->bound = 1; /* ended here, not by finish_gpu_tracks() */
	t->t.name_str = trace_writer_string(r->w, name, (size_t)len);
	t->t.start_ns = r->start_ns;
	t->t.end_ns = end_ns;
	thread_write(r, t);
	if (events && trace_writer_drops_reason(r->w, t->t.index, events, TRACE_DROP_NO_SLOT) != 0)
		write_failed(r);
	t->dropped = events;
}

static int count_event(void *ctx, const struct trace_event *e)
{
	(void)e;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* The trace could not be written in full: what of it is there, read back
 * as any reader will read it (up to its last whole chunk), and what was
 * lost. An event that reached the file has its name: the writer puts a
 * name before the first event that uses it. */
static void report_write_failure(const struct recorder *r)
{
	char err[512];
	const char *why = strerror(r->write_errno);
	struct trace_reader *tr = trace_reader_open(r->out_path, err, sizeof(err));
	if (!tr) {
		error("cannot write '%s': %s: nothing of the run could be written (%llu events lost)", r->out_path,
		      why, (unsigned long long)r->events);
		return;
	}
	uint64_t kept = 0, at = 0;
	struct trace_visitor v = {.event = count_event};
	trace_reader_run(tr, &v, &kept);
	const char *damage = trace_reader_damage(tr, &at);
	if (!damage)
		at = trace_reader_file_size(tr);
	trace_reader_close(tr);
	if (!kept && r->events)
		error("cannot write '%s': %s: the trace is readable up to byte %llu, before any event: "
		      "all %llu events recorded were lost",
		      r->out_path, why, (unsigned long long)at, (unsigned long long)r->events);
	else if (kept < r->events)
		error("cannot write '%s': %s: the trace is readable up to byte %llu; %llu of the %llu events "
		      "recorded were lost, the %llu before it are whole, with their names",
		      r->out_path, why, (unsigned long long)at, (unsigned long long)(r->events - kept),
		      (unsigned long long)r->events, (unsigned long long)kept);
	else
		error("cannot write '%s': %s: the trace is readable up to byte %llu and holds every event "
		      "recorded (%llu) with its name: only its end was lost",
		      r->out_path, why, (unsigned long long)at, (unsigned long long)kept);
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

/* ---- the ranks' files ------------------------------------------------------ */

static int rank_cmp(const void *x, const void *y)
{
	const struct recorder_rank *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* The rank roots as the report shows them; roots[i]: the image of ranks[i]. */
static void collect_ranks(struct recorder *r, uint32_t **roots)
{
	r->ranks = xcalloc(r->nprocs ? r->nprocs : 1, sizeof(*r->ranks));
	r->nranks = 0;
	for (uint32_t i = 0; i < r->nprocs; i++) {
		const struct rec_process *p = &r->procs[i];
		if (p->root != (int32_t)i)
			continue;
		struct recorder_rank *k = &r->ranks[r->nranks++];
		k->rank = p->p.rank;
		k->local_rank = p->p.local_rank;
		k->world_size = p->p.world_size;
		k->pid = p->p.pid;
		k->exit_status = p->p.exit_status;
		k->path = r->out_path;
	}
	qsort(r->ranks, r->nranks, sizeof(*r->ranks), rank_cmp);
	*roots = xmalloc((r->nranks ? r->nranks : 1) * sizeof(**roots));
	for (uint32_t k = 0; k < r->nranks; k++)
		for (uint32_t i = 0; i < r->nprocs; i++)
			if (r->procs[i].root == (int32_t)i && r->procs[i].p.pid == r->ranks[k].pid)
				(*roots)[k] = i;
}

struct names {
	char **taken; /* names this run gave out */
	uint32_t n;
	const char *recorded; /* the recorded file: free for a rank when no launcher file stays */
	int recorded_free;
	int force;
};

static int name_given(const struct names *nm, const char *path)
{
	for (uint32_t i = 0; i < nm->n; i++)
		if (!strcmp(nm->taken[i], path))
			return 1;
	return 0;
}

/* Whether a rank may not have path: another of this run's files has it, or
 * a file is there (ours to overwrite only with --force, or the recorded
 * file itself when no launcher file stays). */
static int name_busy(const struct names *nm, const char *path, int for_seq)
{
	if (name_given(nm, path))
		return 1;
	if (nm->recorded_free && !strcmp(path, nm->recorded))
		return 0;
	return (for_seq || !nm->force) && access(path, F_OK) == 0;
}

static int name_busy_seq(const char *path, void *ctx)
{
	return name_busy(ctx, path, 1);
}

/* The file of rank k: the pattern in its root's environment; made distinct
 * when busy. */
static char *rank_name(struct recorder *r, struct names *nm, const struct rec_process *root)
{
	const char *values[RING_VARS_MAX];
	for (unsigned i = 0; i < RING_VARS_MAX; i++)
		values[i] = root->vars[i];
	char *name = outname_expand(r->opts.pattern, root->p.pid, r->hdr.hostname, values, name_busy_seq, nm);
	if (!*name) {
		free(name);
		name = xmalloc(48);
		snprintf(name, 48, "rank-%d.gpdl", root->p.rank);
	}
	if (!name_busy(nm, name, 0))
		return name;
	char *d = NULL;
	for (unsigned n = 1; !d || name_busy(nm, d, 0); n++) {
		free(d);
		d = outname_distinct(name, n);
	}
	warning("rank %d (pid %u): '%s' is %s: written to '%s'", root->p.rank, root->p.pid, name,
		name_given(nm, name) ? "another file of this run" : "an existing file (--force overwrites)",
		d);
	free(name);
	return d;
}

/* Puts a finished output in place: over the recorded file, or as a new
 * file (never over another: a name taken meanwhile, by another gprof-dl
 * run beside this one, gets the next distinct name). */
static int install(struct recorder *r, const char *tmp, char **final, int over)
{
	if (over || r->opts.force) {
		if (rename(tmp, *final) == 0)
			return 0;
		return error("cannot rename '%s' to '%s': %s", tmp, *final, strerror(errno));
	}
	for (unsigned n = 1;; n++) {
		if (link(tmp, *final) == 0)
			break;
		if (errno != EEXIST || n > 1000)
			return error("cannot write '%s': %s", *final, strerror(errno));
		char *d = outname_distinct(*final, n);
		warning("'%s' appeared meanwhile: written to '%s'", *final, d);
		free(*final);
		*final = d;
	}
	unlink(tmp);
	return 0;
}

static char *tmp_name(const char *final)
{
	char *t = xmalloc(strlen(final) + 48);
	sprintf(t, "%s.gprof-dl-part.%d", final, (int)getpid());
	return t;
}

/* One file per rank and the launcher's remainder, from the recorded file
 * (split.h). 0 or -1 (the recorded file is left whole). */
static int split_ranks(struct recorder *r, const uint32_t *roots, uint64_t end)
{
	uint32_t nr = r->nranks, launcher = 0;
	int has_rest = 0;
	for (uint32_t i = 0; i < r->nprocs; i++)
		has_rest |= r->procs[i].root < 0;
	struct names nm = {xcalloc(nr + 1, sizeof(char *)), 0, r->out_path, !has_rest, r->opts.force};
	if (has_rest)
		nm.taken[nm.n++] = xstrdup(r->out_path);
	r->rank_paths = xcalloc(nr ? nr : 1, sizeof(*r->rank_paths));
	for (uint32_t k = 0; k < nr; k++) {
		r->rank_paths[k] = rank_name(r, &nm, &r->procs[roots[k]]);
		nm.taken[nm.n++] = xstrdup(r->rank_paths[k]);
	}
	uint32_t nouts = nr + (has_rest ? 1 : 0), base = has_rest ? 1 : 0;
	struct split_out *outs = xcalloc(nouts, sizeof(*outs));
	char **tmps = xcalloc(nouts, sizeof(*tmps));
	if (has_rest) {
		tmps[0] = tmp_name(r->out_path);
		outs[0] = (struct split_out){tmps[0], r->hdr, end};
	}
	for (uint32_t k = 0; k < nr; k++) {
		const struct rec_process *root = &r->procs[roots[k]];
		struct split_out *o = &outs[base + k];
		tmps[base + k] = tmp_name(r->rank_paths[k]);
		o->path = tmps[base + k];
		o->h = r->hdr;
		o->h.pid = root->p.pid;
		o->h.rank = root->p.rank;
		o->h.local_rank = root->p.local_rank;
		o->h.world_size = root->p.world_size;
		o->h.dist_backend = backend_text(r, root->p.backend_str);
		/* from its first process's start (the image before an exec
		 * included) to its last one's end */
		o->h.start_ns = root->p.start_ns;
		o->end_ns = 0;
		int running = 0;
		for (uint32_t i = 0; i < r->nprocs; i++) {
			const struct rec_process *p = &r->procs[i];
			if (p->root != (int32_t)roots[k])
				continue;
			if (p->p.start_ns < o->h.start_ns)
				o->h.start_ns = p->p.start_ns;
			running |= !p->p.end_ns;
			if (p->p.end_ns > o->end_ns)
				o->end_ns = p->p.end_ns;
		}
		if (running || !o->end_ns || o->end_ns > end)
			o->end_ns = end;
	}
	struct split_proc *sp = xcalloc(r->nprocs ? r->nprocs : 1, sizeof(*sp));
	for (uint32_t i = 0; i < r->nprocs; i++) {
		const struct rec_process *p = &r->procs[i];
		uint32_t out = launcher;
		for (uint32_t k = 0; k < nr && p->root >= 0; k++)
			if (roots[k] == (uint32_t)p->root)
				out = base + k;
		sp[i] = (struct split_proc){p->p.pid, p->p.start_ns, out};
	}
	char err[512];
	int rc = split_trace(r->out_path, outs, nouts, sp, r->nprocs, r->cats, r->ncats, err, sizeof(err));
	if (rc != 0) {
		error("%s: the whole run stays in '%s'", err, r->out_path);
	} else {
		int took = 0;
		for (uint32_t k = 0; k < nr && rc == 0; k++) {
			int over = !has_rest && !strcmp(r->rank_paths[k], r->out_path);
			took |= over;
			rc = install(r, tmps[base + k], &r->rank_paths[k], over);
		}
		if (rc == 0 && has_rest)
			rc = install(r, tmps[0], &r->out_path, 1);
		else if (rc == 0 && !took)
			unlink(r->out_path); /* every process was a rank's */
		if (rc == 0 && has_rest)
			r->launcher_path = xstrdup(r->out_path);
	}
	for (uint32_t i = 0; i < nouts; i++) {
		if (rc != 0)
			unlink(tmps[i]);
		free(tmps[i]);
	}
	for (uint32_t i = 0; i < nm.n; i++)
		free(nm.taken[i]);
	free(nm.taken);
	free(tmps);
	free(outs);
	free(sp);
	if (rc == 0)
		for (uint32_t k = 0; k < nr; k++)
			r->ranks[k].path = r->rank_paths[k];
	return rc;
}

int recorder_finish(struct recorder *r, struct recorder_stats *stats)
{
	uint64_t end = clock_now_ns();
	/* Whatever is still pending, in every slot, live or not: for a second
	 * at most, as a process left running (a daemon, an orphaned worker)
	 * may write on for ever. */
	while (recorder_poll(r) > 0 && clock_now_ns() - end < FINAL_DRAIN_NS)
		;
	end = clock_now_ns();
	sample_counters(r, end);
	check_liveness(r, end); /* those that ended since the last look */
	for (uint32_t i = 0; i < r->nprocs; i++) {
		if (!r->procs[i].alive)
			continue;
		/* Still running (a daemonised descendant): its open ranges end now. */
		process_ended(r, i, end);
	}
	for (uint32_t i = 0; i < r->shm->nslots; i++)
		if (atomic_load(&ring_shm_slot(r->shm, i)->state) != RING_SLOT_FREE)
			finish_slot(r, i, end);
	retry_deferred(r, 1, 1);
	finish_gpu_tracks(r, end);
	finish_pending_ranges(r, end);
	write_no_slot_drops(r, end);
	/* an image that exec'd did not exit: its process did, as its last image */
	for (uint32_t i = r->nprocs; i-- > 0;) {
		struct rec_process *p = &r->procs[i];
		const struct rec_process *last = process_find(r, p->p.pid, 0);
		if (last != p && !p->reaped && p->p.exit_status == TRACE_EXIT_UNKNOWN && last->p.end_ns &&
		    last->p.start_ns >= p->p.start_ns)
			p->p.exit_status = last->p.exit_status;
	}
	write_processes(r);

	uint64_t dropped = 0;
	for (uint32_t i = 0; i < r->nthreads; i++)
		dropped += r->threads[i].dropped;
	if (stats) {
		stats->events = r->events;
		stats->dropped = dropped;
		stats->processes = r->nprocs;
		stats->threads = r->nthreads;
		stats->no_slot_threads = r->no_slot_threads;
		stats->no_slot_events = r->no_slot_events;
		stats_gpu(r, stats);
	}
	if (r->unknown_strings && !r->write_errno)
		warning("%llu names were lost with records that did not fit in the rings",
			(unsigned long long)r->unknown_strings);
	int rc = trace_writer_close(r->w, end);
	r->w = NULL;
	if (rc != 0)
		write_failed(r);
	if (r->write_errno)
		report_write_failure(r);
	uint32_t *roots;
	collect_ranks(r, &roots);
	r->launcher_path = NULL;
	if (!rc && !r->failed && r->opts.pattern && r->nranks) {
		if (split_ranks(r, roots, end) != 0)
			r->failed = 1;
	}
	if (!r->launcher_path && (!r->opts.pattern || !r->nranks || r->failed))
		r->launcher_path = xstrdup(r->out_path);
	free(roots);
	struct stat sb;
	if (stats && r->launcher_path && stat(r->launcher_path, &sb) == 0)
		stats->bytes = (uint64_t)sb.st_size;
	if (stats) {
		stats->ranks = r->ranks;
		stats->nranks = r->nranks;
		stats->launcher_path = r->launcher_path;
		const struct rec_process *root = process_find(r, (uint32_t)r->root, 0);
		stats->root_exit_status = root ? root->p.exit_status : TRACE_EXIT_UNKNOWN;
	}
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
	for (uint32_t i = 0; i < r->nprocs; i++)
		process_unwatch(&r->procs[i]);
	free(r->watch_fds);
	free(r->watch_procs);
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
	for (size_t i = 0; i < r->backend_strs.cap; i++)
		if (r->backend_strs.e[i].used)
			free((void *)(uintptr_t)r->backend_strs.e[i].value);
	hmap_free(&r->backend_strs);
	hmap_free(&r->pid_ticks);
	for (uint32_t i = 0; i < r->nprocs; i++)
		for (unsigned k = 0; k < RING_VARS_MAX; k++)
			free(r->procs[i].vars[k]);
	free(r->cats);
	for (uint32_t i = 0; r->rank_paths && i < r->nranks; i++)
		free(r->rank_paths[i]);
	free(r->rank_paths);
	free(r->ranks);
	free(r->launcher_path);
	free(r->hdr_host);
	free(r->hdr_cmdline);
	for (uint32_t i = 0; i < r->nstatuses; i++)
		free((void *)r->statuses[i].msg);
	free(r->statuses);
	free(r->devs);
	free(r->strcomm);
	free(r->deferred);
	free(r->execs);
	free(r->strmap);
	free(r->domfile);
	free(r->rdescs);
	free(r->threads);
	free(r->procs);
	free(r->slots);
	free(r->buf);
	free(r->out_path);
	free(r);
}
