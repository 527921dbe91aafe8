/*
 * ranks.c - the ranks of a distributed run: the identities processes
 * reported (rank, world size, backend), resolved into which process is a
 * rank's root and which processes belong to it; the PROC records that say
 * so in the trace (written during the run too, so that a file whose
 * launcher was killed still has them); and, at the end with a pattern
 * (-o t-%q{RANK}.gpdl), the split of the recorded file into one file per
 * rank and the launcher's remainder (split.h), named and put in place
 * without overwriting another file.
 */
#include "lib/recorder/recorder_int.h"

#include "common/error.h"
#include "lib/recorder/outname.h"
#include "lib/recorder/split.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Keeps the text of a rank's backend or job (file string id), which the
 * split's headers need after the file is closed. */
static void text_keep(struct recorder *r, uint32_t file_id)
{
	if (!file_id || file_id == UINT32_MAX || hmap_get(&r->kept_strs, file_id, 0))
		return;
	size_t len;
	const char *s = trace_writer_string_text(r->w, file_id, &len);
	hmap_put(&r->kept_strs, file_id, 0, (uint64_t)(uintptr_t)xmemdup0(s, len));
}

/* A kept text by its file string id, "" when unknown. */
static const char *kept_text(const struct recorder *r, uint32_t file_id)
{
	const uint64_t *v = file_id ? hmap_get(&r->kept_strs, file_id, 0) : NULL;
	return v ? (const char *)(uintptr_t)*v : "";
}

/* A rank or a job reported. The job is the environment's (the latest
 * image's); of ranks, a source at least as strong as the one known wins
 * (the program's init_process_group over the environment; an exec'd image's
 * environment over its old image's). */
void rec_process_identity(struct recorder *r, struct rec_process *p, const struct ring_process_rank *x)
{
	if (x->job_str && x->h.aux != RING_RANK_INIT) {
		p->job = string_file_id(r, x->job_str);
		text_keep(r, p->job);
		r->procs_dirty = 1;
	}
	if (!x->h.aux || x->h.aux < p->rank_source || x->rank < 0)
		return;
	p->rank_source = x->h.aux;
	r->has_ranks = 1;
	p->rank = x->rank;
	p->local_rank = x->local_rank;
	p->world_size = x->world_size;
	if (x->backend_str || x->h.aux == RING_RANK_INIT) {
		p->backend = string_file_id(r, x->backend_str);
		text_keep(r, p->backend);
	}
	r->procs_dirty = 1;
}

/* This run's own job identity, for ranks whose environment names no job
 * (ranks named only by the program's init_process_group, under mp.spawn):
 * "gprof-dl:<host>:<launcher pid>:<its start, Unix ns>", which no other
 * run shares. Its file string id; 0 when the file is closed. */
static uint32_t launcher_job(struct recorder *r)
{
	if (r->launcher_job || !r->w)
		return r->launcher_job;
	char id[512];
	int len = snprintf(id, sizeof(id), "gprof-dl:%s:%d:%lld", r->hdr.hostname ? r->hdr.hostname : "",
			   (int)getpid(), (long long)((int64_t)r->start_ns + r->hdr.wall_offset_ns));
	if (len < 0 || (size_t)len >= sizeof(id))
		len = (int)strlen(id);
	r->launcher_job = trace_writer_string(r->w, id, (size_t)len);
	text_keep(r, r->launcher_job);
	return r->launcher_job;
}

/* Which processes are ranks, from the identities they reported: a process
 * with an identity is a rank root when its (rank, world size) differs from
 * its parent's effective identity (its own, or inherited from its nearest
 * ancestor with one) and no descendant is one (innermost wins: torchrun
 * under srun has SLURM_PROCID, but its workers are the ranks). Every other
 * process belongs to the rank root nearest above it (a DataLoader worker to
 * its rank), or to none (-1: a launcher). The images of one pid (exec) are
 * one process: the latest image's identity and parent count. Fills each
 * image's p.rank, local_rank, world_size, backend_str, job_str and root: a
 * rank's processes have its root's job (its environment's, else this
 * run's own: launcher_job()), the others their own environment's. */
void rec_resolve_ranks(struct recorder *r)
{
	uint32_t n = r->nprocs;
	if (!n)
		return;
	struct hmap latest; /* pid -> its latest image */
	hmap_init(&latest);
	for (uint32_t i = 0; i < n; i++) {
		const uint64_t *l = hmap_get(&latest, r->procs[i].p.pid, 0);
		if (!l || r->procs[i].p.start_ns >= r->procs[*l].p.start_ns)
			hmap_put(&latest, r->procs[i].p.pid, 0, i);
	}
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
		p->p.job_str = root ? (root->job ? root->job : launcher_job(r)) : p->job;
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
void rec_write_processes(struct recorder *r)
{
	rec_resolve_ranks(r);
	for (uint32_t i = 0; i < r->nprocs; i++) {
		struct rec_process *p = &r->procs[i];
		const struct trace_process *a = &p->p, *b = &p->written;
		if (a->pid == b->pid && a->ppid == b->ppid && a->start_ns == b->start_ns &&
		    a->end_ns == b->end_ns && a->exit_status == b->exit_status &&
		    a->cmdline_str == b->cmdline_str && a->rank == b->rank && a->local_rank == b->local_rank &&
		    a->world_size == b->world_size && a->backend_str == b->backend_str &&
		    a->exit_signal == b->exit_signal && a->job_str == b->job_str)
			continue; /* the file says so already */
		if (trace_writer_process(r->w, a) != 0)
			write_failed(r);
		p->written = *a;
	}
	r->procs_dirty = 0;
}

static int rank_cmp(const void *x, const void *y)
{
	const struct recorder_rank *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* The rank roots as the report shows them; roots[i]: the image of ranks[i]. */
void rec_collect_ranks(struct recorder *r, uint32_t **roots)
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
		k->exit_signal = p->p.exit_signal;
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
 * when busy. NULL, after a message, when a value there may not name a file
 * (outname_check()): the rank then stays in the launcher's file, not in a
 * file of another name. */
static char *rank_name(struct recorder *r, struct names *nm, const struct rec_process *root)
{
	const char *values[RING_VARS_MAX];
	char err[512];
	for (unsigned i = 0; i < RING_VARS_MAX; i++)
		values[i] = root->vars[i];
	if (outname_check(r->opts.pattern, values, NULL, err, sizeof(err)) != 0) {
		error("rank %d (pid %u): -o '%s': %s, in its environment: the rank stays in '%s'", root->p.rank,
		      root->p.pid, outname_pattern(r->opts.pattern), err, r->out_path);
		return NULL;
	}
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

/* The job of the launcher's file: its ranks' when they have one, else
 * the one its own environment named (the recorded file's). */
static const char *ranks_job(const struct recorder *r, const uint32_t *roots)
{
	const char *job = NULL;
	for (uint32_t k = 0; k < r->nranks; k++) {
		const char *j = kept_text(r, r->procs[roots[k]].p.job_str);
		if (!*j || (job && strcmp(job, j) != 0))
			return r->hdr.job_id;
		job = j;
	}
	return job ? job : r->hdr.job_id;
}

/* One file per rank and the launcher's remainder, from the recorded file
 * (split.h). 0, or -1: the recorded file is left whole, or a rank's name
 * was refused (rank_name()) and the rank is in the launcher's file. */
int rec_split_ranks(struct recorder *r, const uint32_t *roots, uint64_t end)
{
	uint32_t nr = r->nranks, launcher = 0;
	int has_rest = 0, refused = 0;
	for (uint32_t i = 0; i < r->nprocs; i++)
		has_rest |= r->procs[i].root < 0;
	/* a rank whose name is refused stays in the launcher's file */
	for (uint32_t k = 0; k < nr; k++) {
		const struct rec_process *root = &r->procs[roots[k]];
		char err[512];
		const char *values[RING_VARS_MAX];
		for (unsigned i = 0; i < RING_VARS_MAX; i++)
			values[i] = root->vars[i];
		if (outname_check(r->opts.pattern, values, NULL, err, sizeof(err)) != 0)
			has_rest = refused = 1;
	}
	struct names nm = {xcalloc(nr + 1, sizeof(char *)), 0, r->out_path, !has_rest, r->opts.force};
	if (has_rest)
		nm.taken[nm.n++] = xstrdup(r->out_path);
	r->rank_paths = xcalloc(nr ? nr : 1, sizeof(*r->rank_paths));
	for (uint32_t k = 0; k < nr; k++) {
		r->rank_paths[k] = rank_name(r, &nm, &r->procs[roots[k]]);
		if (r->rank_paths[k])
			nm.taken[nm.n++] = xstrdup(r->rank_paths[k]);
	}
	/* out[k]: the output of rank k, the launcher's (0) when its name was refused */
	uint32_t base = has_rest ? 1 : 0, nouts = base;
	uint32_t *out = xcalloc(nr ? nr : 1, sizeof(*out));
	for (uint32_t k = 0; k < nr; k++)
		out[k] = r->rank_paths[k] ? nouts++ : launcher;
	struct split_out *outs = xcalloc(nouts, sizeof(*outs));
	char **tmps = xcalloc(nouts, sizeof(*tmps));
	if (has_rest) {
		tmps[0] = tmp_name(r->out_path);
		outs[0] = (struct split_out){tmps[0], r->hdr, end};
		outs[0].h.job_id = ranks_job(r, roots);
	}
	for (uint32_t k = 0; k < nr; k++) {
		const struct rec_process *root = &r->procs[roots[k]];
		if (!r->rank_paths[k])
			continue;
		struct split_out *o = &outs[out[k]];
		tmps[out[k]] = tmp_name(r->rank_paths[k]);
		o->path = tmps[out[k]];
		o->h = r->hdr;
		o->h.pid = root->p.pid;
		o->h.rank = root->p.rank;
		o->h.local_rank = root->p.local_rank;
		o->h.world_size = root->p.world_size;
		o->h.dist_backend = kept_text(r, root->p.backend_str);
		o->h.job_id = kept_text(r, root->p.job_str);
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
		uint32_t o = launcher;
		for (uint32_t k = 0; k < nr && p->root >= 0; k++)
			if (roots[k] == (uint32_t)p->root)
				o = out[k];
		sp[i] = (struct split_proc){p->p.pid, p->p.start_ns, o};
	}
	char err[512];
	int rc = split_trace(r->out_path, outs, nouts, sp, r->nprocs, r->cats, r->ncats, err, sizeof(err));
	if (rc != 0) {
		error("%s: the whole run stays in '%s'", err, r->out_path);
	} else {
		int took = 0;
		for (uint32_t k = 0; k < nr && rc == 0; k++) {
			if (!r->rank_paths[k])
				continue;
			int over = !has_rest && !strcmp(r->rank_paths[k], r->out_path);
			took |= over;
			rc = install(r, tmps[out[k]], &r->rank_paths[k], over);
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
	free(out);
	free(sp);
	if (rc == 0)
		for (uint32_t k = 0; k < nr; k++)
			r->ranks[k].path = r->rank_paths[k] ? r->rank_paths[k] : r->launcher_path;
	return rc ? rc : refused ? -1 : 0;
}
