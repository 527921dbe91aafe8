/*
 * recorder.c - the recorder's public API (recorder.h) and its main loop:
 * the trace and the shared memory made at creation, the file's header at
 * begin, what one poll does (drain, watch processes, sample, flush) and the
 * order of the end (drain what is left, end what still runs, write what was
 * pending, close, split into the ranks' files). The parts it drives are in
 * drain.c, gpu.c, process.c and ranks.c (recorder_int.h).
 */
#include "lib/recorder/recorder_int.h"
#include "lib/recorder/outname.h"

#include "common/clock.h"
#include "common/error.h"
#include "gpdl-config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FLUSH_INTERVAL_NS 1000000000ull
#define LIVENESS_INTERVAL_NS 100000000ull
#define WATCH_INTERVAL_NS 1000000ull /* how often the processes' watches are polled */
#define FINAL_DRAIN_NS 1000000000ull  /* the end drains what processes still write for this long */

/* The recorded trace, whole or as far as it could be written, renamed from
 * its temporary file to out_path: over an existing file only with --force;
 * a file that took the name meanwhile without --force (another run of the
 * same -o beside this one) is never replaced: the trace takes the next
 * distinct name then ("t-1.gpdl"), said in a warning. 0, or -1 after a
 * message (the temporary file, named there, is left). */
static int rec_install(struct recorder *r)
{
	char err[2048];
	if (!r->of.path)
		return 0;
	if (outfile_close(&r->of, err, sizeof(err)) != 0 && !r->write_errno)
		r->write_errno = errno; /* the fsync: said by report_write_failure */
	if (!r->of.tmp) { /* a device or a pipe: written in place */
		outfile_abort(&r->of);
		return 0;
	}
	char *final = xstrdup(r->out_path);
	int rc = 0;
	for (unsigned n = 1; outfile_install(r->of.tmp, final, r->opts.force) != 0; n++) {
		if (errno != EEXIST || n > 1000) {
			rc = error("cannot write '%s': %s: the run is in '%s'", final, strerror(errno),
				   r->of.tmp);
			break;
		}
		char *d = outname_distinct(r->out_path, n);
		free(final);
		final = d;
	}
	if (rc == 0) {
		if (strcmp(final, r->out_path) != 0)
			warning("'%s' appeared while this run recorded (another run?): written to '%s'",
				r->out_path, final);
		free(r->out_path);
		r->out_path = final;
		free(r->of.tmp);
		r->of.tmp = NULL; /* installed: nothing to remove */
	} else {
		free(final);
		outfile_forget(r->of.slot); /* kept: the run is in it */
		r->of.slot = -1;
		free(r->of.tmp);
		r->of.tmp = NULL;
	}
	outfile_abort(&r->of); /* frees the rest */
	return rc;
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
	char err[2048];
	/* a temporary file of this run's own beside the trace: two runs given
	 * the same name never write one file (issue 25) */
	r->w = NULL;
	if (outfile_open(&r->of, opts->out_path, opts->force ? OUTFILE_FORCE : 0, 0644, err,
			 sizeof(err)) == 0 &&
	    !(r->w = trace_writer_fdopen(r->of.fd, 0))) {
		int e = errno;
		outfile_abort(&r->of);
		errno = e;
		snprintf(err, sizeof(err), "cannot create '%s': %s", opts->out_path, strerror(e));
	}
	if (!r->w) {
		if (errno == EEXIST)
			error("'%s' exists: choose another name with -o, or overwrite it with --force",
			      opts->out_path);
		else
			error("%s", err);
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
	const char *bp = getenv(RING_WAIT_ENV);
	if (bp && !strcmp(bp, "1")) /* back-pressure: a last resort, off by default */
		atomic_fetch_or(&r->shm->flags, RING_SHM_WAIT);
	snprintf(r->shm_env, sizeof(r->shm_env), "/proc/%d/fd/%d", (int)getpid(), r->memfd);
	r->slots = xcalloc(opts->nslots, sizeof(*r->slots));
	for (uint32_t i = 0; i < opts->nslots; i++)
		r->slots[i].thread = -1;
	r->buf = xmalloc(opts->ring_bytes);
	rec_spill_init(r);
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
	hmap_init(&r->kept_strs);
	hmap_init(&r->pid_ticks);
	cpu_sampler_init(&r->cpu);
	return r;
}

const char *recorder_shm_env(const struct recorder *r)
{
	return r->shm_env;
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
	char job[RING_NAME_MAX + 1]; /* and its job: the file's, when that is one rank's */
	ring_job_from_env(env_get, NULL, job, sizeof(job));
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
		.job_id = job,
	};
	r->root = root;
	r->start_ns = h.start_ns;
	int rc = trace_writer_header(r->w, &h);
	struct rec_process *p = rec_process_add(r, (uint32_t)root, (uint32_t)getpid(), h.start_ns);
	p->p.cmdline_str = trace_writer_string(r->w, cmdline, strlen(cmdline));
	/* kept for the split's headers */
	r->hdr = h;
	r->hdr.hostname = r->hdr_host = xstrdup(host);
	r->hdr.cmdline = r->hdr_cmdline = cmdline;
	r->hdr.job_id = r->hdr_job = xstrdup(job);
	r->next_sample = h.start_ns;
	r->next_flush = h.start_ns + FLUSH_INTERVAL_NS;
	r->next_liveness = h.start_ns + LIVENESS_INTERVAL_NS;
	return rc;
}

void recorder_wait(struct recorder *r, uint64_t timeout_ns)
{
	ring_wait(r->shm, timeout_ns);
}

int recorder_backlog(struct recorder *r)
{
	rec_spill_lock(r);
	int backlog = r->spill.pending > 0;
	rec_spill_unlock(r);
	return backlog;
}

void recorder_spiller_start(struct recorder *r)
{
	if (rec_spiller_start(r) != 0)
		warning("cannot start the spiller thread: the poll loop empties the rings alone");
}

uint64_t recorder_poll(struct recorder *r)
{
	uint64_t total = rec_drain(r);
	uint64_t now = clock_now_ns();
	if (now >= r->next_watch) {
		rec_check_watches(r, now);
		r->next_watch = now + WATCH_INTERVAL_NS;
	}
	if (now >= r->next_liveness) {
		rec_check_liveness(r, now);
		r->next_liveness = now + LIVENESS_INTERVAL_NS;
	}
	if (now >= r->next_sample) {
		rec_sample_counters(r, now);
		r->next_sample = now + r->opts.sample_interval_ns;
	}
	if (now >= r->next_flush) {
		if (r->procs_dirty)
			rec_write_processes(r);
		if (trace_writer_flush(r->w) != 0)
			write_failed(r);
		r->next_flush = now + FLUSH_INTERVAL_NS;
	}
	return total;
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
	uint32_t i = rec_thread_add(r, (uint32_t)r->root, 0);
	struct rec_thread *t = &r->threads[i];
	t->bound = 1; /* ended here, not by rec_finish_gpu_tracks() */
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

int recorder_finish(struct recorder *r, struct recorder_stats *stats)
{
	rec_spiller_stop(r); /* the end drains alone, as it always did */
	uint64_t end = clock_now_ns();
	/* Whatever is still pending, in every slot, live or not: for a second
	 * at most, as a process left running (a daemon, an orphaned worker)
	 * may write on for ever. */
	while (recorder_poll(r) > 0 && clock_now_ns() - end < FINAL_DRAIN_NS)
		;
	end = clock_now_ns();
	rec_sample_counters(r, end);
	rec_check_liveness(r, end); /* those that ended since the last look */
	for (uint32_t i = 0; i < r->nprocs; i++) {
		if (!r->procs[i].alive)
			continue;
		/* Still running (a daemonised descendant): its open ranges end now. */
		rec_process_ended(r, i, end);
	}
	rec_drain_final(r, end);
	rec_finish_gpu_tracks(r, end);
	rec_finish_pending_ranges(r, end);
	write_no_slot_drops(r, end);
	/* an image that exec'd did not exit: its process did, as its last image */
	for (uint32_t i = r->nprocs; i-- > 0;) {
		struct rec_process *p = &r->procs[i];
		const struct rec_process *last = rec_process_find(r, p->p.pid, 0);
		if (last != p && !p->reaped && p->p.exit_status == TRACE_EXIT_UNKNOWN && last->p.end_ns &&
		    last->p.start_ns >= p->p.start_ns) {
			p->p.exit_status = last->p.exit_status;
			p->p.exit_signal = last->p.exit_signal;
		}
	}
	rec_write_processes(r);

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
		rec_stats_gpu(r, stats);
		stats->spilled_bytes = r->spill.total_bytes;
		stats->spill_peak_bytes = r->spill.peak_bytes;
		stats->spill_file_bytes = r->spill.file_bytes;
		stats->spill_lost = r->spill.lost_records;
		stats->spill_convert_ns = r->spill.convert_ns;
		stats->waited_ns = r->waited_ns;
	}
	if (r->waited_ns)
		warning("the program waited %.3f s for full rings to be emptied (%s=1)%s", r->waited_ns / 1e9,
			RING_WAIT_ENV,
			atomic_load(&r->shm->flags) & RING_SHM_WAIT ? ""
								    : "; a wait ran out, and records were dropped after it");
	if (r->unknown_strings && !r->write_errno)
		warning("%llu names were lost with records that did not fit in the rings",
			(unsigned long long)r->unknown_strings);
	int rc = trace_writer_close(r->w, end);
	r->w = NULL;
	if (rc != 0)
		write_failed(r);
	/* in place even after a write failure: readable up to the damage */
	if (rec_install(r) != 0)
		r->failed = 1;
	if (r->write_errno)
		report_write_failure(r);
	uint32_t *roots;
	rec_collect_ranks(r, &roots);
	r->launcher_path = NULL;
	if (!rc && !r->failed && r->opts.pattern && r->nranks) {
		if (rec_split_ranks(r, roots, end) != 0)
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
		const struct rec_process *root = rec_process_find(r, (uint32_t)r->root, 0);
		stats->root_exit_status = root ? root->p.exit_status : TRACE_EXIT_UNKNOWN;
		stats->root_exit_signal = root ? root->p.exit_signal : 0;
	}
	return rc || r->failed ? -1 : 0;
}

void recorder_abort(struct recorder *r)
{
	if (r->w) {
		trace_writer_abort(r->w);
		r->w = NULL;
	}
	outfile_abort(&r->of); /* an existing trace of that name is left as it was */
	recorder_destroy(r);
}

void recorder_destroy(struct recorder *r)
{
	if (!r)
		return;
	rec_spiller_stop(r);
	if (r->w) {
		trace_writer_close(r->w, clock_now_ns());
		r->w = NULL;
		rec_install(r);
	}
	if (r->shm)
		munmap(r->shm, r->shm_len);
	if (r->memfd >= 0)
		close(r->memfd);
	for (uint32_t i = 0; i < r->nprocs; i++)
		rec_process_unwatch(&r->procs[i]);
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
	for (size_t i = 0; i < r->kept_strs.cap; i++)
		if (r->kept_strs.e[i].used)
			free((void *)(uintptr_t)r->kept_strs.e[i].value);
	hmap_free(&r->kept_strs);
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
	free(r->hdr_job);
	for (uint32_t i = 0; i < r->nstatuses; i++)
		free((void *)r->statuses[i].msg);
	free(r->statuses);
	free(r->devs);
	free(r->deferred);
	free(r->execs);
	rec_strmap_free(r);
	free(r->threads);
	free(r->procs);
	rec_spill_free(r); /* walks the slots' chunk lists */
	free(r->slots);
	free(r->buf);
	free(r->out_path);
	free(r);
}
