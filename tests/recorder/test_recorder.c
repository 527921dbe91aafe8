/* The recorder driven through its shared memory, as the collector would: the
 * exec of a process whose old image still has records pending in a slot above
 * the new image's (a nested drain once overwrote the drain buffer and hung
 * the launcher), and ranges left open by the old image; ranges with details
 * (RING_REC_RANGE_EXT) and the mirror's details and skipped entries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "formats/trace/trace.h"
#include "lib/analysis/store/store.h"
#include "lib/collector/gprof-dl-nvtx.h"
#include "common/clock.h"
#include "lib/recorder/outname.h"
#include "lib/recorder/recorder.h"
#include "lib/ring/ring.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], path[96];

static struct ring_shm *attach(struct recorder *r, size_t *len)
{
	int fd = open(recorder_shm_env(r), O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	struct ring_shm *shm = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(shm != MAP_FAILED);
	assert_int_equal(ring_shm_check(shm, *len), 0);
	return shm;
}

/* A recorder writing to path (8 slots of 64 KiB), begun with root as its
 * root process, and its rings mapped into *shm (*len bytes). */
static struct recorder *start(uint32_t root, struct ring_shm **shm, size_t *len)
{
	struct recorder_opts o = {path, 1, 8, 1u << 16, 1000000000ull};
	struct recorder *r = recorder_create(&o);
	assert_non_null(r);
	assert_int_equal(recorder_begin(r, (pid_t)root, 0, NULL, 0), 0);
	*shm = attach(r, len);
	return r;
}

static void put_string(struct ring_shm *shm, struct ring_slot *s, uint32_t id, const char *text)
{
	unsigned char buf[128] = {0};
	struct ring_rec *h = (struct ring_rec *)buf;
	size_t n = strlen(text) + 1;
	h->kind = RING_REC_STRING;
	h->size = (uint16_t)ring_rec_align(sizeof(*h) + n);
	h->aux = id;
	memcpy(h + 1, text, n);
	assert_int_equal(ring_write(shm, s, buf), 0);
}

static void put_process(struct ring_shm *shm, struct ring_slot *s, uint32_t pid, uint64_t ts, uint32_t cmd)
{
	struct ring_process p = {{RING_REC_PROCESS_START, sizeof(p), 0}, ts, pid, 1, cmd, 0};
	assert_int_equal(ring_write(shm, s, &p), 0);
}

static void put_thread(struct ring_shm *shm, struct ring_slot *s, uint64_t ts)
{
	struct ring_thread t = {{RING_REC_THREAD_START, sizeof(t), 0}, ts, s->pid, s->tid};
	assert_int_equal(ring_write(shm, s, &t), 0);
}

static void put_range(struct ring_shm *shm, struct ring_slot *s, uint32_t name, uint64_t start)
{
	struct ring_range x = {{RING_REC_RANGE, sizeof(x), 0}, start, start + 100, name, 0, 0, 0};
	assert_int_equal(ring_write(shm, s, &x), 0);
}

struct counts {
	const struct trace_reader *r;
	unsigned old_ranges, new_ranges, open_ranges;
};

static int count_event(void *ctx, const struct trace_event *e)
{
	struct counts *c = ctx;
	const char *name = trace_reader_string(c->r, trace_reader_desc(c->r, e->desc)->name_str);
	if (!strcmp(name, "old-range"))
		c->old_ranges++;
	else if (!strcmp(name, "new-range"))
		c->new_ranges++;
	else if (!strcmp(name, "open-in-old") && (e->flags & TRACE_EVF_OPEN_AT_EXIT))
		c->open_ranges++;
	return 0;
}

static void test_exec_with_records_pending_above(void **state)
{
	(void)state;
	uint32_t pid = (uint32_t)getpid();
	size_t len;
	struct ring_shm *shm;
	struct recorder *r = start(pid, &shm, &len);
	uint64_t t0 = clock_now_ns();

	/* Slot 0: a short-lived thread of the old image; slot 1: its main thread. */
	struct ring_slot *other = ring_slot_claim(shm, pid, pid + 1);
	struct ring_slot *old = ring_slot_claim(shm, pid, pid);
	assert_true(other < old);
	put_string(shm, old, 1, "old image");
	put_string(shm, old, 2, "old-range");
	put_string(shm, old, 3, "open-in-old");
	put_process(shm, old, pid, t0, 1);
	put_thread(shm, old, t0);
	put_thread(shm, other, t0 + 1);
	put_range(shm, old, 2, t0 + 10);
	recorder_poll(r);
	ring_slot_release(other);
	recorder_poll(r); /* slot 0 is free again */

	/* The old image writes more, with a range open, then execs: the new image
	 * claims the lowest free slot, below the old one. */
	for (int i = 0; i < 200; i++)
		put_range(shm, old, 2, t0 + 1000 + (uint64_t)i * 200);
	old->stack[0] = (struct ring_open_range){t0 + 500, 3, 0, 0, 0};
	atomic_store(&old->depth, 1);
	struct ring_slot *img = ring_slot_claim(shm, pid, pid);
	assert_ptr_equal(img, other);
	uint64_t exec_ts = clock_now_ns() + 1000000;
	put_string(shm, img, 4, "new image");
	put_string(shm, img, 5, "new-range");
	put_process(shm, img, pid, exec_ts, 4);
	put_thread(shm, img, exec_ts + 1);
	put_range(shm, img, 5, exec_ts + 10);
	recorder_poll(r);
	assert_int_equal(atomic_load(&old->state), RING_SLOT_FREE); /* old image finished */
	assert_int_equal(atomic_load(&img->state), RING_SLOT_ACTIVE); /* new image kept */

	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	recorder_destroy(r);
	munmap(shm, len);

	char err[256];
	struct trace_reader *tr = trace_reader_open(path, err, sizeof(err));
	assert_non_null(tr);
	struct counts c = {tr, 0, 0, 0};
	struct trace_visitor v = {.event = count_event};
	assert_int_equal(trace_reader_run(tr, &v, &c), 0);
	assert_null(trace_reader_damage(tr, NULL));
	assert_int_equal(c.old_ranges, 201);
	assert_int_equal(c.new_ranges, 1);
	assert_int_equal(c.open_ranges, 1);
	/* Two images of one pid: the old ends at the exec. */
	assert_int_equal(trace_reader_process_count(tr), 2);
	const struct trace_process *p0 = trace_reader_process(tr, 0);
	assert_int_equal(p0->pid, pid);
	assert_int_equal(p0->end_ns, exec_ts);
	assert_string_equal(trace_reader_string(tr, p0->cmdline_str), "old image");
	assert_string_equal(trace_reader_string(tr, trace_reader_process(tr, 1)->cmdline_str), "new image");
	trace_reader_close(tr);
}

struct ext_seen {
	const struct trace_reader *r;
	unsigned ops, steps, open_ops, others;
};

static int ext_event(void *ctx, const struct trace_event *e)
{
	struct ext_seen *c = ctx;
	const struct trace_desc *d = trace_reader_desc(c->r, e->desc);
	const char *name = trace_reader_string(c->r, d->name_str);
	if (!strcmp(name, "aten::mm") && !(e->flags & TRACE_EVF_OPEN_AT_EXIT)) {
		/* its shapes string came from another thread's ring, later */
		assert_int_equal(d->type, TRACE_EV_OPERATOR);
		assert_non_null(e->ext);
		assert_int_equal(e->ext->has_seq, 1);
		assert_int_equal(e->ext->seq_nr, 0);
		assert_string_equal(trace_reader_string(c->r, e->ext->shapes_str), "[[1, 2]]");
		assert_int_equal(e->ext->samples, 0);
		assert_int_equal(e->start_ns, 5000);
		assert_int_equal(e->dur_ns, 100);
		c->ops++;
	} else if (!strcmp(name, "step")) {
		assert_int_equal(d->type, TRACE_EV_PROFILE_STEP);
		assert_non_null(e->ext);
		assert_int_equal(e->ext->has_seq, 0);
		assert_int_equal(e->ext->shapes_str, 0);
		assert_int_equal(e->ext->samples, 64);
		assert_int_equal(e->start_ns, 4000); /* written after the op it holds */
		c->steps++;
	} else if (!strcmp(name, "aten::mm")) {
		assert_int_equal(e->flags, TRACE_EVF_OPEN_AT_EXIT);
		assert_non_null(e->ext);
		assert_int_equal(e->ext->seq_nr, 9);
		assert_string_equal(trace_reader_string(c->r, e->ext->shapes_str), "[[1, 2]]");
		c->open_ops++;
	} else {
		c->others++;
	}
	return 0;
}

/* RANGE_EXT records, one naming a string another slot defines later (the
 * record waits for it); and a mirror whose entries are a range with details
 * and one pushed while the window was closed (not recovered). */
static void test_range_ext_and_mirror(void **state)
{
	(void)state;
	uint32_t pid = (uint32_t)getpid();
	size_t len;
	struct ring_shm *shm;
	struct recorder *r = start(pid, &shm, &len);
	struct ring_slot *a = ring_slot_claim(shm, pid, pid);
	struct ring_slot *b = ring_slot_claim(shm, pid, pid + 1);
	put_string(shm, a, 1, "cmd");
	put_string(shm, a, 2, "aten::mm");
	put_string(shm, a, 3, "gprof-dl");
	put_string(shm, a, 5, "step");
	put_process(shm, a, pid, 1000, 1);
	put_thread(shm, a, 1000);
	struct ring_range_ext op = {{RING_REC_RANGE_EXT, sizeof(op), 0}, 5000, 5100, 2, 3, 6, 4, 0, 0};
	struct ring_range_ext step = {{RING_REC_RANGE_EXT, sizeof(step), 0}, 4000, 9000, 5, 3, 1, 0, -1, 64};
	assert_int_equal(ring_write(shm, a, &op), 0);
	assert_int_equal(ring_write(shm, a, &step), 0);
	recorder_poll(r); /* the op waits for string 4 */
	put_thread(shm, b, 1001);
	put_string(shm, b, 4, "[[1, 2]]");
	recorder_poll(r);
	/* open at the end: an operator with details, one not to be recorded */
	a->stack[0] = (struct ring_open_range){6000, 2, 3, 6, RING_OPEN_SKIP, 1, 0, 4, 0};
	a->stack[1] = (struct ring_open_range){7000, 2, 3, 6, 0, 9, 0, 4, 0};
	atomic_store(&a->depth, 2);
	ring_slot_release(a);
	ring_slot_release(b);
	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	recorder_destroy(r);
	munmap(shm, len);

	char err[256];
	struct trace_reader *tr = trace_reader_open(path, err, sizeof(err));
	assert_non_null(tr);
	struct ext_seen c = {tr, 0, 0, 0, 0};
	struct trace_visitor v = {.event = ext_event};
	assert_int_equal(trace_reader_run(tr, &v, &c), 0);
	assert_null(trace_reader_damage(tr, NULL));
	assert_int_equal(c.ops, 1);
	assert_int_equal(c.steps, 1);
	assert_int_equal(c.open_ops, 1);
	assert_int_equal(c.others, 0);
	trace_reader_close(tr);
}

struct comm_seen {
	const struct trace_reader *r;
	unsigned comm, comm_ops, comm_cat, ops, others, all_reduce;
};

static int comm_visit(void *ctx, const struct trace_event *e)
{
	struct comm_seen *c = ctx;
	const struct trace_desc *d = trace_reader_desc(c->r, e->desc);
	const char *name = trace_reader_string(c->r, d->name_str);
	if (!strcmp(name, "gloo:all_reduce")) {
		/* comm(): its bytes and the call's identity */
		assert_int_equal(d->type, TRACE_EV_COMMUNICATION);
		assert_int_equal(e->start_ns, 2000);
		assert_int_equal(e->dur_ns, 500);
		assert_non_null(e->ext);
		assert_int_equal(e->ext->bytes, 4096);
		assert_int_equal(e->ext->has_coll_seq, 1);
		assert_int_equal(e->ext->coll_seq, 11);
		assert_string_equal(trace_reader_string(c->r, e->ext->pg_str), "0");
		assert_string_equal(trace_reader_string(c->r, e->ext->dtype_str), "float");
		assert_int_equal(e->ext->group_size, 2);
		assert_int_equal(e->ext->has_peer, 0);
		/* slot a's, then slot b's (thread 101) */
		assert_int_equal(trace_reader_thread(c->r, e->thread)->tid, 100 + c->all_reduce++);
		c->comm++;
	} else if (!strcmp(name, "gloo:send")) {
		assert_int_equal(d->type, TRACE_EV_COMMUNICATION);
		assert_non_null(e->ext);
		assert_int_equal(e->ext->has_coll_seq, 0);
		assert_int_equal(e->ext->has_peer, 1);
		assert_int_equal(e->ext->peer, 1);
		assert_int_equal(e->ext->pg_str, 0);
		c->comm++;
	} else if (!strcmp(name, "NCCL:broadcast")) {
		/* an operator range named as a backend's collective */
		assert_int_equal(d->type, TRACE_EV_COMMUNICATION);
		assert_int_equal(d->category, 6);
		c->comm_ops++;
	} else if (!strcmp(name, "my barrier")) {
		assert_int_equal(d->type, TRACE_EV_COMMUNICATION); /* category 13 */
		c->comm_cat++;
	} else if (!strcmp(name, "gloo:") || !strcmp(name, "aten::mm") || !strcmp(name, "foo:bar")) {
		assert_int_equal(d->type, TRACE_EV_OPERATOR);
		c->ops++;
	} else {
		/* another domain: UserDefined whatever the name */
		assert_string_equal(name, "other:gloo:x");
		assert_int_equal(d->type, TRACE_EV_USER_DEFINED);
		c->others++;
	}
	return 0;
}

/* RING_REC_COMM becomes a Communication event with its details on its
 * thread's track (its strings from another slot, later); operators named
 * BACKEND:OP and the gprof-dl domain's category 13 are Communication too. */
static void test_communication(void **state)
{
	(void)state;
	uint32_t pid = (uint32_t)getpid();
	size_t len;
	struct ring_shm *shm;
	struct recorder *r = start(pid, &shm, &len);
	struct ring_slot *a = ring_slot_claim(shm, pid, 100);
	struct ring_slot *b = ring_slot_claim(shm, pid, 101);
	static const char *const strs[] = {"cmd", "gloo:all_reduce", "gprof-dl", "NCCL:broadcast",
					   "my barrier", "gloo:", "aten::mm", "foo:bar", "other",
					   "other:gloo:x", "gloo:send"};
	for (uint32_t i = 0; i < 11; i++)
		put_string(shm, a, i + 1, strs[i]);
	put_process(shm, a, pid, 1000, 1);
	put_thread(shm, a, 1000);
	put_thread(shm, b, 1000);
	struct ring_comm x = {{RING_REC_COMM, sizeof(x), 0}, 2000, 2500, 2, 20, 21, 2, 11, 4096, -1, 0};
	assert_int_equal(ring_write(shm, a, &x), 0);
	struct ring_comm y = {{RING_REC_COMM, sizeof(y), 0}, 2600, 2700, 11, 0, 0, 0, -1, 0, 1, 0};
	assert_int_equal(ring_write(shm, a, &y), 0);
	assert_int_equal(ring_write(shm, b, &x), 0);
	static const struct {
		uint32_t name, domain, category;
	} ranges[] = {{4, 3, 6}, {5, 3, 13}, {6, 3, 6}, {7, 3, 6}, {8, 3, 6}, {10, 9, 6}};
	for (size_t i = 0; i < 6; i++) {
		struct ring_range rr = {{RING_REC_RANGE, sizeof(rr), 0}, 3000 + i * 10, 3005 + i * 10,
					ranges[i].name, ranges[i].domain, ranges[i].category, 0};
		assert_int_equal(ring_write(shm, a, &rr), 0);
	}
	recorder_poll(r); /* the comm records wait for strings 20 and 21 */
	put_string(shm, b, 20, "0");
	put_string(shm, b, 21, "float");
	ring_slot_release(a);
	ring_slot_release(b);
	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	assert_int_equal(st.events, 9);
	assert_int_equal(st.dropped, 0);
	recorder_destroy(r);
	munmap(shm, len);

	char err[256];
	struct trace_reader *tr = trace_reader_open(path, err, sizeof(err));
	assert_non_null(tr);
	struct comm_seen c = {tr, 0, 0, 0, 0, 0, 0};
	struct trace_visitor v = {.event = comm_visit};
	assert_int_equal(trace_reader_run(tr, &v, &c), 0);
	assert_null(trace_reader_damage(tr, NULL));
	assert_int_equal(c.comm, 3);
	assert_int_equal(c.comm_ops, 1);
	assert_int_equal(c.comm_cat, 1);
	assert_int_equal(c.ops, 3);
	assert_int_equal(c.others, 1);
	trace_reader_close(tr);
}

/* ---- ranks ------------------------------------------------------------------ */

#define P0 4194400u /* beyond any pid_max: never a live process */

static void put_exit(struct ring_shm *shm, struct ring_slot *s, uint32_t pid, uint64_t ts, uint32_t aux)
{
	struct ring_process p = {{RING_REC_PROCESS_EXIT, sizeof(p), aux}, ts, pid, 1, 0, 0};
	assert_int_equal(ring_write(shm, s, &p), 0);
}

static void put_rank(struct ring_shm *shm, struct ring_slot *s, uint32_t pid, unsigned source, int32_t rank,
		     int32_t local, int32_t world, uint32_t backend)
{
	struct ring_process_rank x = {{RING_REC_PROCESS_RANK, sizeof(x), source}, pid, rank, local, world, backend, 0};
	assert_int_equal(ring_write(shm, s, &x), 0);
}

/* Variable i of the -o pattern as pid reported it (value NULL: unset);
 * flags: more aux bits (RING_VAR_FORKED). */
static void put_var_flags(struct ring_shm *shm, struct ring_slot *s, uint32_t pid, unsigned i, const char *value,
			  unsigned flags)
{
	_Alignas(8) unsigned char buf[64] = {0};
	struct ring_process_var *v = (struct ring_process_var *)buf;
	size_t len = value ? strlen(value) : 0;
	v->h.kind = RING_REC_PROCESS_VAR;
	v->h.size = (uint16_t)ring_rec_align(sizeof(*v) + len + 1);
	v->h.aux = i | (value ? RING_VAR_SET : 0) | flags;
	v->pid = pid;
	v->len = (uint32_t)len;
	memcpy(buf + sizeof(*v), value ? value : "", len);
	assert_int_equal(ring_write(shm, s, buf), 0);
}

static void put_var(struct ring_shm *shm, struct ring_slot *s, uint32_t pid, unsigned i, const char *value)
{
	put_var_flags(shm, s, pid, i, value, 0);
}

/* A process of the scenario below: its slot's records up to its range. */
struct sproc {
	const char *name;
	uint32_t pid, ppid;
	unsigned source; /* 0: no rank */
	int32_t rank, local, world;
	uint32_t backend;
	const char *var;  /* RANK as it had it */
	int exec;         /* an image before this one, with no rank */
	int exit_aux;     /* PROCESS_EXIT's aux; -1: none (killed) */
	int32_t want_rank, want_status;
	const char *want_file;
};

/* L launches S (srun's task: SLURM identity), which launches R0 and R1
 * (torch's); R0 was exec'd (an image with no rank first) and forks W (the
 * same identity: a DataLoader worker); R1 names itself through
 * init_process_group (backend gloo) and forks X (no identity); L also runs
 * M. Ranks: R0 with W, R1 with X; L, S and M are the launcher's. */
static const struct sproc scenario[] = {
	{"L", P0, 1, 0, 0, 0, 0, 0, NULL, 0, -1, -1, 9, "t-.gpdl"},
	{"S", P0 + 1, P0, RING_RANK_ENV_SLURM, 0, 0, 1, 0, NULL, 0, RING_EXIT_KNOWN | 5, -1, 5, "t-.gpdl"},
	{"R0", P0 + 2, P0 + 1, RING_RANK_ENV_TORCH, 0, 0, 2, 0, "0", 1, RING_EXIT_KNOWN | 0, 0, 0, "t-0.gpdl"},
	{"R1", P0 + 3, P0 + 1, RING_RANK_INIT, 1, -1, 2, 9, "1", 0, -1, 1, TRACE_EXIT_KILLED, "t-1.gpdl"},
	{"W", P0 + 4, P0 + 2, RING_RANK_ENV_TORCH, 0, 0, 2, 0, "0", 0, 0, 0, TRACE_EXIT_UNKNOWN, "t-0.gpdl"},
	{"X", P0 + 5, P0 + 3, 0, 0, 0, 0, 0, NULL, 0, RING_EXIT_KNOWN | 3, 1, 3, "t-1.gpdl"},
	{"M", P0 + 6, P0, 0, 0, 0, 0, 0, NULL, 0, RING_EXIT_KNOWN | 0, -1, 0, "t-.gpdl"},
};
enum { NSCEN = sizeof(scenario) / sizeof(scenario[0]) };

static char rdir[64];

struct rank_seen {
	const struct trace_reader *r;
	unsigned events[NSCEN], procs[NSCEN], counters, system_counters;
	int32_t status[NSCEN];
	uint32_t counter_pid; /* the file's root: its counters' pid */
};

static int scen_index(uint32_t pid)
{
	for (int i = 0; i < NSCEN; i++)
		if (scenario[i].pid == pid)
			return i;
	fail_msg("pid %u is not the scenario's", pid);
	return -1;
}

static int rank_event(void *ctx, const struct trace_event *e)
{
	struct rank_seen *c = ctx;
	const char *name = trace_reader_string(c->r, trace_reader_desc(c->r, e->desc)->name_str);
	const struct trace_thread *t = trace_reader_thread(c->r, e->thread);
	int i = scen_index(t->pid);
	char want[32];
	snprintf(want, sizeof(want), "work-%s", scenario[i].name);
	assert_string_equal(name, want);
	c->events[i]++;
	return 0;
}

static int rank_process(void *ctx, const struct trace_process *p)
{
	struct rank_seen *c = ctx;
	int i = scen_index(p->pid);
	const struct sproc *sp = &scenario[i];
	if (p->rank != sp->want_rank)
		fail_msg("%s: rank %d, expected %d", sp->name, p->rank, sp->want_rank);
	assert_int_equal(p->world_size, sp->want_rank >= 0 ? 2 : -1);
	assert_int_equal(p->local_rank, sp->want_rank == 0 ? 0 : -1);
	assert_string_equal(trace_reader_string(c->r, p->backend_str), sp->want_rank == 1 ? "gloo" : "");
	c->procs[i]++;
	c->status[i] = p->exit_status;
	return 0;
}

static int rank_counter(void *ctx, const struct trace_counter *k)
{
	struct rank_seen *c = ctx;
	/* S was a rank root for a while, before its ranks came: series of
	 * its pid stay the launcher's */
	if (k->pid && !(c->counter_pid == P0 && k->pid == P0 + 1))
		assert_int_equal(k->pid, c->counter_pid);
	else if (!k->pid)
		assert_int_equal(k->id, TRACE_CTR_CPU_SYSTEM);
	c->counters += k->pid != 0;
	c->system_counters += k->pid == 0;
	return 0;
}

static void read_rank_file(const char *name, uint32_t root, struct rank_seen *c,
			   const struct trace_header **h, struct trace_reader **tr)
{
	char p[160], err[256];
	snprintf(p, sizeof(p), "%s/%s", rdir, name);
	*tr = trace_reader_open(p, err, sizeof(err));
	if (!*tr)
		fail_msg("%s", err);
	memset(c, 0, sizeof(*c));
	c->r = *tr;
	c->counter_pid = root;
	struct trace_visitor v = {.event = rank_event, .process = rank_process, .counter = rank_counter};
	assert_int_equal(trace_reader_run(*tr, &v, c), 0);
	assert_null(trace_reader_damage(*tr, NULL));
	*h = trace_reader_header(*tr);
}

/* Ranks resolved (innermost distinct identity; children follow), exit
 * statuses of processes the launcher did not reap, and the split: one
 * file per rank named from its root's variables, the rest in place. */
static void test_ranks_and_split(void **state)
{
	(void)state;
	char out[128], err[256];
	snprintf(out, sizeof(out), "%s/t-.gpdl", rdir);
	char pattern[128];
	snprintf(pattern, sizeof(pattern), "%s/t-%%q{RANK}.gpdl", rdir);
	struct outname *o = outname_parse(pattern, err, sizeof(err));
	assert_non_null(o);
	/* counters sampled at every poll */
	struct recorder_opts ro = {out, 0, 16, 1u << 16, 1, o};
	struct recorder *r = recorder_create(&ro);
	assert_non_null(r);
	assert_int_equal(recorder_begin(r, (pid_t)P0, 0, NULL, 0), 0);
	size_t len;
	struct ring_shm *shm = attach(r, &len);
	struct ring_slot *first = ring_slot_claim(shm, P0, P0);
	put_string(shm, first, 1, "cmd");
	put_string(shm, first, 9, "gloo");
	for (uint32_t i = 0; i < NSCEN; i++) {
		const struct sproc *sp = &scenario[i];
		char name[32];
		snprintf(name, sizeof(name), "work-%s", sp->name);
		put_string(shm, first, 20 + i, name);
	}
	recorder_poll(r);
	uint64_t t = 1000;
	for (uint32_t i = 0; i < NSCEN; i++) {
		const struct sproc *sp = &scenario[i];
		struct ring_slot *s = i ? ring_slot_claim(shm, sp->pid, sp->pid) : first;
		if (sp->exec) { /* the image before the exec: no rank yet */
			put_process(shm, s, sp->pid, t++, 1);
			s->pid = sp->pid;
			put_thread(shm, s, t++);
			recorder_poll(r);
			ring_slot_release(s);
			recorder_poll(r);
			s = ring_slot_claim(shm, sp->pid, sp->pid);
		}
		struct ring_process ps = {{RING_REC_PROCESS_START, sizeof(ps), 0}, t++, sp->pid, sp->ppid, 1, 0};
		assert_int_equal(ring_write(shm, s, &ps), 0);
		if (sp->source && sp->source != RING_RANK_INIT)
			put_rank(shm, s, sp->pid, sp->source, sp->rank, sp->local, sp->world, 0);
		put_var(shm, s, sp->pid, 0, sp->var);
		put_thread(shm, s, t++);
		put_range(shm, s, 20 + i, t++);
		if (sp->source == RING_RANK_INIT) /* after the environment's: wins */
			put_rank(shm, s, sp->pid, sp->source, sp->rank, sp->local, sp->world, sp->backend);
		if (sp->exit_aux >= 0)
			put_exit(shm, s, sp->pid, t++, (uint32_t)sp->exit_aux);
		recorder_poll(r);
	}
	/* two samples of the counters, each over more than the sampler's
	 * shortest interval (CPU_SAMPLER_MIN_TICKS) */
	for (int k = 0; k < 2; k++) {
		struct timespec ts = {0, 80 * 1000 * 1000};
		nanosleep(&ts, NULL);
		recorder_poll(r);
	}
	recorder_process_reaped(r, (pid_t)P0, 9 << 8, NULL);
	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	/* the report's view */
	assert_int_equal(st.nranks, 2);
	assert_int_equal(st.ranks[0].rank, 0);
	assert_int_equal(st.ranks[0].pid, P0 + 2);
	assert_int_equal(st.ranks[0].exit_status, 0);
	assert_int_equal(st.ranks[0].world_size, 2);
	assert_int_equal(st.ranks[1].rank, 1);
	assert_int_equal(st.ranks[1].pid, P0 + 3);
	assert_int_equal(st.ranks[1].exit_status, TRACE_EXIT_KILLED);
	char want[160];
	snprintf(want, sizeof(want), "%s/t-0.gpdl", rdir);
	assert_string_equal(st.ranks[0].path, want);
	snprintf(want, sizeof(want), "%s/t-1.gpdl", rdir);
	assert_string_equal(st.ranks[1].path, want);
	assert_string_equal(st.launcher_path, out);
	assert_int_equal(st.root_exit_status, 9);
	recorder_destroy(r);
	outname_free(o);
	munmap(shm, len);

	static const char *const files[] = {"t-.gpdl", "t-0.gpdl", "t-1.gpdl"};
	unsigned total_events = 0, system_counters = 0;
	for (int f = 0; f < 3; f++) {
		struct rank_seen c;
		const struct trace_header *h;
		struct trace_reader *tr;
		read_rank_file(files[f], f ? scenario[f + 1].pid : P0, &c, &h, &tr);
		int32_t frank = f - 1;
		assert_int_equal(h->rank, frank);
		assert_int_equal(h->world_size, f ? 2 : -1);
		assert_int_equal(h->local_rank, f == 1 ? 0 : -1);
		assert_string_equal(h->dist_backend, f == 2 ? "gloo" : "");
		assert_int_equal(h->pid, f ? scenario[f + 1].pid : P0);
		for (int i = 0; i < NSCEN; i++) {
			const struct sproc *sp = &scenario[i];
			int here = !strcmp(sp->want_file, files[f]);
			assert_int_equal(c.events[i], here ? 1 : 0);
			assert_int_equal(c.procs[i], here ? 1 + sp->exec : 0);
			if (here && c.status[i] != sp->want_status)
				fail_msg("%s: exit status %d, expected %d", sp->name, c.status[i], sp->want_status);
			total_events += c.events[i];
		}
		/* the system's counters in every file, the processes' (CPU and
		 * memory) in their rank's, under its root's pid */
		assert_true(c.system_counters >= 2);
		if (f)
			assert_int_equal(c.system_counters, system_counters);
		system_counters = c.system_counters;
		assert_true(c.counters >= 2 && c.counters % 2 == 0);
		trace_reader_close(tr);
	}
	assert_int_equal(total_events, NSCEN);
	for (int f = 0; f < 3; f++) {
		char p[160];
		snprintf(p, sizeof(p), "%s/%s", rdir, files[f]);
		unlink(p);
	}
}

/* A recorder of out, its ranks named by pattern (8 slots), begun and
 * attached: its shared memory in *shm (*len bytes), the pattern in *op. */
static struct recorder *pattern_recorder(const char *out, const char *pattern, struct outname **op,
					 struct ring_shm **shm, size_t *len)
{
	char err[256];
	*op = outname_parse(pattern, err, sizeof(err));
	assert_non_null(*op);
	struct recorder_opts ro = {out, 0, 8, 1u << 16, 1000000000ull, *op};
	struct recorder *r = recorder_create(&ro);
	assert_non_null(r);
	assert_int_equal(recorder_begin(r, (pid_t)P0, 0, NULL, 0), 0);
	*shm = attach(r, len);
	return r;
}

/* Records a process tree: procs[i] is a child of procs[parent[i]] (the
 * first: of no one we know), with rank rank[i] of 2 (-1: none), and RANK
 * as var[i]. Returns the stats of recorder_finish(). */
static void record_tree(const char *out, const char *pattern, uint32_t n, const int *parent,
			const int32_t *rank, const char *const *var, struct recorder **rp,
			struct outname **op)
{
	size_t len;
	struct ring_shm *shm;
	struct recorder *r = *rp = pattern_recorder(out, pattern, op, &shm, &len);
	for (uint32_t i = 0; i < n; i++) {
		struct ring_slot *s = ring_slot_claim(shm, P0 + i, P0 + i);
		put_string(shm, s, 1, "cmd");
		uint32_t ppid = parent[i] < 0 ? 1 : P0 + (uint32_t)parent[i];
		struct ring_process ps = {{RING_REC_PROCESS_START, sizeof(ps), 0}, 10 + i, P0 + i, ppid, 1, 0};
		assert_int_equal(ring_write(shm, s, &ps), 0);
		if (rank[i] >= 0)
			put_rank(shm, s, P0 + i, RING_RANK_ENV_TORCH, rank[i], -1, 2, 0);
		put_var(shm, s, P0 + i, 0, var[i]);
		put_thread(shm, s, 20 + i);
		put_exit(shm, s, P0 + i, 30 + i, RING_EXIT_KNOWN | i);
		recorder_poll(r);
		ring_slot_release(s);
		recorder_poll(r);
	}
	munmap(shm, len);
}

/* The rank and processes a file holds. */
static void check_file(const char *path, int32_t rank, uint32_t nprocs, uint32_t first_pid)
{
	char err[256];
	struct trace_reader *tr = trace_reader_open(path, err, sizeof(err));
	if (!tr)
		fail_msg("%s", err);
	assert_int_equal(trace_reader_run(tr, NULL, NULL), 0);
	assert_null(trace_reader_damage(tr, NULL));
	assert_int_equal(trace_reader_header(tr)->rank, rank);
	assert_int_equal(trace_reader_process_count(tr), nprocs);
	assert_int_equal(trace_reader_process(tr, 0)->pid, first_pid);
	trace_reader_close(tr);
}

/* A rank that a launcher forks, that sets RANK and execs (rank_launcher,
 * torchrun): its fork child reports the launcher's variables at the fork
 * (RING_VAR_FORKED), its new image its own. The launcher may drain the new
 * image's slot first (it took a lower slot, freed before): the fork's
 * report must not undo the image's own, in either order. */
static void test_exec_vars_drained_late(void **state)
{
	(void)state;
	for (int late = 0; late < 2; late++) {
		char out[128], pattern[128], p[160];
		snprintf(pattern, sizeof(pattern), "%s/v-%%q{RANK}.gpdl", rdir);
		snprintf(out, sizeof(out), "%s/v-.gpdl", rdir);
		struct outname *o;
		struct ring_shm *shm;
		size_t len;
		struct recorder *r = pattern_recorder(out, pattern, &o, &shm, &len);
		/* the launcher */
		struct ring_slot *s0 = ring_slot_claim(shm, P0, P0);
		put_string(shm, s0, 1, "cmd");
		struct ring_process ps0 = {{RING_REC_PROCESS_START, sizeof(ps0), 0}, 10, P0, 1, 1, 0};
		assert_int_equal(ring_write(shm, s0, &ps0), 0);
		put_var(shm, s0, P0, 0, NULL);
		put_thread(shm, s0, 10);
		recorder_poll(r);
		/* the rank: its exec'd image, RANK=0, and its fork child's
		 * report at the fork (RANK unset, forked), in the slot order
		 * late says: 1, the image's slot before the fork's */
		struct ring_slot *first = ring_slot_claim(shm, P0 + 1, P0 + 1);
		struct ring_slot *second = ring_slot_claim(shm, P0 + 1, P0 + 1);
		struct ring_slot *fork_slot = late ? second : first, *image_slot = late ? first : second;
		put_string(shm, fork_slot, 2, "launcher");
		struct ring_process pf = {{RING_REC_PROCESS_START, sizeof(pf), 0}, 20, P0 + 1, P0, 2, 0};
		assert_int_equal(ring_write(shm, fork_slot, &pf), 0);
		put_var_flags(shm, fork_slot, P0 + 1, 0, NULL, RING_VAR_FORKED); /* unset, at the fork */
		put_thread(shm, fork_slot, 20);
		put_string(shm, image_slot, 3, "rank");
		struct ring_process pi = {{RING_REC_PROCESS_START, sizeof(pi), 0}, 30, P0 + 1, P0, 3, 0};
		assert_int_equal(ring_write(shm, image_slot, &pi), 0);
		put_rank(shm, image_slot, P0 + 1, RING_RANK_ENV_TORCH, 0, 0, 1, 0);
		put_var(shm, image_slot, P0 + 1, 0, "0");
		put_thread(shm, image_slot, 30);
		put_exit(shm, image_slot, P0 + 1, 40, RING_EXIT_KNOWN | 0);
		recorder_poll(r);
		ring_slot_release(first);
		ring_slot_release(second);
		ring_slot_release(s0);
		recorder_poll(r);
		munmap(shm, len);
		struct recorder_stats st;
		assert_int_equal(recorder_finish(r, &st), 0);
		assert_int_equal(st.nranks, 1);
		snprintf(p, sizeof(p), "%s/v-0.gpdl", rdir);
		assert_string_equal(st.ranks[0].path, p); /* not the launcher's v-.gpdl */
		/* the rank's two images in either order: the fork child's from
		 * its start to the exec, then the program it exec'd, which exited */
		char err[256];
		struct trace_reader *tr = trace_reader_open(p, err, sizeof(err));
		assert_non_null(tr);
		assert_int_equal(trace_reader_run(tr, &(struct trace_visitor){0}, NULL), 0);
		const struct trace_process *img[2] = {NULL, NULL};
		for (size_t i = 0; i < trace_reader_process_count(tr); i++) {
			const struct trace_process *q = trace_reader_process(tr, i);
			if (q->pid == P0 + 1)
				img[q->start_ns == 30] = q;
		}
		assert_non_null(img[0]);
		assert_non_null(img[1]);
		assert_int_equal(img[0]->start_ns, 20);
		assert_int_equal(img[0]->end_ns, 30);
		assert_string_equal(trace_reader_string(tr, img[0]->cmdline_str), "launcher");
		assert_int_equal(img[1]->end_ns, 40);
		assert_int_equal(img[1]->exit_status, 0);
		assert_int_equal(img[1]->rank, 0);
		assert_string_equal(trace_reader_string(tr, img[1]->cmdline_str), "rank");
		trace_reader_close(tr);
		unlink(p);
		unlink(out);
		recorder_destroy(r);
		outname_free(o);
	}
}

/* Two ranks the pattern names alike, and a file already there: nothing of
 * either is overwritten. */
static void test_split_collisions(void **state)
{
	(void)state;
	char out[128], pattern[128], p[160];
	snprintf(pattern, sizeof(pattern), "%s/t-%%q{RANK}.gpdl", rdir);
	snprintf(out, sizeof(out), "%s/t-.gpdl", rdir);
	snprintf(p, sizeof(p), "%s/t-0-1.gpdl", rdir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("precious", f);
	fclose(f);
	static const int parent[] = {-1, 0, 0};
	static const int32_t rank[] = {-1, 0, 1};
	static const char *const var[] = {NULL, "0", "0"}; /* both say RANK=0 */
	struct recorder *r;
	struct outname *o;
	record_tree(out, pattern, 3, parent, rank, var, &r, &o);
	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	assert_int_equal(st.nranks, 2);
	assert_string_equal(st.launcher_path, out);
	snprintf(p, sizeof(p), "%s/t-0.gpdl", rdir);
	assert_string_equal(st.ranks[0].path, p);
	check_file(p, 0, 1, P0 + 1);
	unlink(p);
	snprintf(p, sizeof(p), "%s/t-0-2.gpdl", rdir);
	assert_string_equal(st.ranks[1].path, p);
	assert_int_equal(st.ranks[1].exit_status, 2);
	check_file(p, 1, 1, P0 + 2);
	unlink(p);
	check_file(out, -1, 1, P0);
	unlink(out);
	recorder_destroy(r);
	outname_free(o);
	snprintf(p, sizeof(p), "%s/t-0-1.gpdl", rdir);
	char buf[16] = "";
	f = fopen(p, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious");
	unlink(p);
}

/* The root is the rank (a copy of gprof-dl per rank, as mpirun starts
 * them): its file, the recorded one, is rewritten as the rank's, with its
 * DataLoader worker; no launcher file stays. */
static void test_split_root_is_rank(void **state)
{
	(void)state;
	char out[128], pattern[128];
	snprintf(pattern, sizeof(pattern), "%s/t-%%q{RANK}.gpdl", rdir);
	snprintf(out, sizeof(out), "%s/t-1.gpdl", rdir);
	static const int parent[] = {-1, 0};
	static const int32_t rank[] = {1, 1};
	static const char *const var[] = {"1", "1"};
	struct recorder *r;
	struct outname *o;
	record_tree(out, pattern, 2, parent, rank, var, &r, &o);
	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	assert_int_equal(st.nranks, 1);
	assert_null(st.launcher_path);
	assert_string_equal(st.ranks[0].path, out);
	assert_int_equal(st.ranks[0].pid, P0);
	check_file(out, 1, 2, P0);
	unlink(out);
	recorder_destroy(r);
	outname_free(o);
}

/* ---- processes that end before their records are drained ------------------- */

struct procs_seen {
	uint32_t n;
	struct trace_process p[8];
};

static int note_process(void *ctx, const struct trace_process *p)
{
	struct procs_seen *c = ctx;
	for (uint32_t i = 0; i < c->n; i++) {
		if (c->p[i].pid == p->pid && c->p[i].start_ns == p->start_ns) {
			c->p[i] = *p; /* written again: its end */
			return 0;
		}
	}
	if (c->n < 8)
		c->p[c->n] = *p;
	c->n++;
	return 0;
}

/* The processes of the trace at path, each as last written. */
static void read_processes(const char *path, struct procs_seen *c)
{
	char err[256];
	struct trace_reader *tr = trace_reader_open(path, err, sizeof(err));
	assert_non_null(tr);
	struct trace_visitor v = {.process = note_process};
	assert_int_equal(trace_reader_run(tr, &v, c), 0);
	trace_reader_close(tr);
}

/* A launcher starved of the CPU (16 runs on 2 cores): the root, a child
 * and an orphaned grandchild (which the launcher, their subreaper, reaps)
 * write their PROCESS_START and end before the launcher drains a thing.
 * Each process is in the trace once, with its parent and its status: the
 * reaped ones' records are drained before they are ended, not after (once
 * made a second root, and a grandchild of parent 0 beside its real one). */
static void test_reaped_before_drained(void **state)
{
	(void)state;
	const uint32_t root = P0 + 10, child = P0 + 11, grandchild = P0 + 12;
	size_t len;
	struct ring_shm *shm;
	struct recorder *r = start(root, &shm, &len);
	uint64_t t0 = clock_now_ns();
	struct ring_slot *sr = ring_slot_claim(shm, root, root);
	struct ring_slot *sc = ring_slot_claim(shm, child, child);
	struct ring_slot *sg = ring_slot_claim(shm, grandchild, grandchild);
	put_string(shm, sr, 1, "fork_tree");
	struct ring_process pr = {{RING_REC_PROCESS_START, sizeof(pr), 0}, t0, root, (uint32_t)getpid(), 1, 0};
	struct ring_process pc = {{RING_REC_PROCESS_START, sizeof(pc), 0}, t0 + 10, child, root, 1, 0};
	struct ring_process pg = {{RING_REC_PROCESS_START, sizeof(pg), 0}, t0 + 20, grandchild, child, 1, 0};
	assert_int_equal(ring_write(shm, sr, &pr), 0);
	assert_int_equal(ring_write(shm, sc, &pc), 0);
	assert_int_equal(ring_write(shm, sg, &pg), 0);
	put_exit(shm, sg, grandchild, t0 + 30, RING_EXIT_KNOWN | 13);
	put_exit(shm, sc, child, t0 + 40, RING_EXIT_KNOWN | 11);
	put_exit(shm, sr, root, t0 + 50, RING_EXIT_KNOWN | 4);
	ring_slot_release(sg);
	ring_slot_release(sc);
	ring_slot_release(sr);
	/* nothing drained yet: the orphan, then the root, are reaped */
	recorder_process_reaped(r, (pid_t)grandchild, 13 << 8, NULL);
	recorder_process_reaped(r, (pid_t)root, 4 << 8, NULL);
	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	assert_int_equal(st.processes, 3);
	assert_int_equal(st.root_exit_status, 4);
	recorder_destroy(r);
	munmap(shm, len);

	struct procs_seen c = {0};
	read_processes(path, &c);
	assert_int_equal(c.n, 3);
	const uint32_t pids[3] = {root, child, grandchild}, ppids[3] = {(uint32_t)getpid(), root, child};
	const int32_t status[3] = {4, 11, 13};
	for (int k = 0; k < 3; k++) {
		int found = 0;
		for (uint32_t i = 0; i < c.n; i++) {
			if (c.p[i].pid != pids[k])
				continue;
			found++;
			assert_int_equal(c.p[i].ppid, ppids[k]);
			assert_int_equal(c.p[i].exit_status, status[k]);
			assert_true(c.p[i].end_ns != 0);
		}
		assert_int_equal(found, 1);
	}
}

/* A process whose start the launcher drains only after it ended and its
 * pid went to a later process (here: this test's own pid, which a process
 * "started" long before this test ran can only have had before it): that
 * later process is not watched as if it were ours, so the one recorded
 * ends when the launcher looks, with the code it reported, not at the end
 * of the run with its status unknown. */
static void test_pid_reused(void **state)
{
	(void)state;
	const uint32_t root = P0 + 20, reused = (uint32_t)getpid();
	size_t len;
	struct ring_shm *shm;
	struct recorder *r = start(root, &shm, &len);
	uint64_t t0 = clock_now_ns();
	assert_true(t0 > 4000000000ull); /* 4 s after boot at least */
	struct ring_slot *sr = ring_slot_claim(shm, root, root);
	struct ring_slot *sx = ring_slot_claim(shm, reused, reused);
	put_string(shm, sr, 1, "cmd");
	struct ring_process px = {{RING_REC_PROCESS_START, sizeof(px), 0}, t0 - 3000000000ull, reused, root, 1, 0};
	assert_int_equal(ring_write(shm, sx, &px), 0);
	put_exit(shm, sx, reused, t0 - 2000000000ull, RING_EXIT_KNOWN | 3);
	ring_slot_release(sx);
	recorder_poll(r);
	recorder_process_reaped(r, (pid_t)root, 0, NULL);
	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	recorder_destroy(r);
	munmap(shm, len);

	struct procs_seen c = {0};
	read_processes(path, &c);
	assert_int_equal(c.n, 2);
	int found = 0;
	for (uint32_t i = 0; i < c.n; i++) {
		if (c.p[i].pid != reused)
			continue;
		found++;
		assert_int_equal(c.p[i].exit_status, 3);
		assert_int_equal(c.p[i].end_ns, t0 - 2000000000ull);
	}
	assert_int_equal(found, 1);
}

/* ---- names as the rings define them ---------------------------------------- */

#define DISTINCT_N 3000u

struct names_seen {
	const struct trace_reader *r;
	unsigned distinct[DISTINCT_N];
	unsigned steps, step_typed, cat_named, other;
};

static int names_event(void *ctx, const struct trace_event *e)
{
	struct names_seen *c = ctx;
	const struct trace_desc *d = trace_reader_desc(c->r, e->desc);
	const char *name = trace_reader_string(c->r, d->name_str);
	unsigned k;
	char tail;
	if (sscanf(name, "range %u%c", &k, &tail) == 1 && k < DISTINCT_N) {
		c->distinct[k]++;
	} else if (!strcmp(name, "step")) {
		c->steps++;
		c->step_typed += d->type == TRACE_EV_PROFILE_STEP;
	} else if (!strcmp(name, "in cat")) {
		const char *cat = trace_reader_category_name(c->r, d->domain_str, 7);
		c->cat_named += cat && !strcmp(cat, "seven");
	} else {
		c->other++;
	}
	return 0;
}

static void put_domain_range(struct ring_shm *shm, struct ring_slot *s, uint32_t name, uint32_t domain,
			     uint32_t category, uint64_t start)
{
	struct ring_range x = {{RING_REC_RANGE, sizeof(x), 0}, start, start + 50, name, domain, category, 0};
	assert_int_equal(ring_write(shm, s, &x), 0);
}

/* Every name a ring defines is a string of the file, with no lookup by
 * content: DISTINCT_N names, each once, each come out once with its text;
 * one text under several ring ids (two threads' caches, two processes'
 * domains) is one name to the analysis; a domain is one id in the file
 * whichever ring id named it, so the gprof-dl domain's types and a
 * category's name are found for all of its ring ids; a name defined after
 * the range that uses it (another thread's ring) still names it. */
static void test_ring_names(void **state)
{
	(void)state;
	uint32_t pid = (uint32_t)getpid();
	size_t len;
	struct ring_shm *shm;
	struct recorder *r = start(pid, &shm, &len);
	uint64_t t0 = clock_now_ns();
	struct ring_slot *a = ring_slot_claim(shm, pid, pid);
	struct ring_slot *b = ring_slot_claim(shm, pid, pid + 1);
	put_string(shm, a, 1, "prog");
	put_process(shm, a, pid, t0, 1);
	put_thread(shm, a, t0);
	put_thread(shm, b, t0);
	/* thread a: the domain as id 2, "step" as 3; thread b: 4 and 5 */
	put_string(shm, a, 2, GPROF_DL_NVTX_DOMAIN);
	put_string(shm, a, 3, "step");
	put_string(shm, b, 4, GPROF_DL_NVTX_DOMAIN);
	put_string(shm, b, 5, "step");
	put_domain_range(shm, a, 3, 2, GPROF_DL_CAT_PROFILE_STEP, t0 + 10);
	put_domain_range(shm, b, 5, 4, GPROF_DL_CAT_PROFILE_STEP, t0 + 20);
	/* a category named under b's id of the domain, used under a's; its
	 * name, id 7, comes in b's ring after a's range that uses it */
	put_string(shm, a, 6, "in cat");
	put_domain_range(shm, a, 6, 2, 7, t0 + 30);
	put_domain_range(shm, a, 7, 2, 7, t0 + 35);
	recorder_poll(r);
	put_string(shm, b, 7, "seven");
	struct ring_category cat = {{RING_REC_CATEGORY, sizeof(cat), 0}, 4, 7, 7, 0};
	assert_int_equal(ring_write(shm, b, &cat), 0);
	recorder_poll(r);
	for (uint32_t i = 0; i < DISTINCT_N; i++) {
		char name[32];
		snprintf(name, sizeof(name), "range %u", i);
		put_string(shm, a, 100 + i, name);
		put_range(shm, a, 100 + i, t0 + 100 + i * 200);
		if (i % 500 == 499)
			recorder_poll(r); /* 64 KiB rings */
	}
	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	recorder_destroy(r);
	munmap(shm, len);

	char err[256];
	struct trace_reader *tr = trace_reader_open(path, err, sizeof(err));
	assert_non_null(tr);
	struct names_seen *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	c->r = tr;
	struct trace_visitor v = {.event = names_event};
	assert_int_equal(trace_reader_run(tr, &v, c), 0);
	assert_null(trace_reader_damage(tr, NULL));
	unsigned once = 0;
	for (unsigned k = 0; k < DISTINCT_N; k++)
		once += c->distinct[k] == 1;
	assert_int_equal(once, DISTINCT_N);
	assert_int_equal(c->steps, 2);
	assert_int_equal(c->step_typed, 2);
	assert_int_equal(c->cat_named, 1); /* "in cat": "seven" was named under the other id */
	assert_int_equal(c->other, 1);     /* the range named "seven" */
	/* appended, not looked up: "step" has a desc under each of its two ids */
	unsigned step_ids = 0;
	for (uint32_t id = 1; id <= trace_reader_desc_count(tr); id++)
		step_ids += !strcmp(trace_reader_string(tr, trace_reader_desc(tr, id)->name_str), "step");
	assert_int_equal(step_ids, 2);
	trace_reader_close(tr);
	free(c);

	/* "step" is two strings of the file and one name of the analysis */
	struct store s;
	store_init(&s);
	assert_int_equal(store_load(&s, path, err, sizeof(err)), 0);
	store_finish(&s);
	unsigned step_descs = 0;
	for (uint32_t i = 0; i < s.ndescs; i++)
		step_descs += !strcmp(names_get(&s.names, s.descs[i].name), "step");
	assert_int_equal(step_descs, 1);
	store_free(&s);
}

/* ---- the spill ------------------------------------------------------------ */

#define SPILL_SLOTS 8u
#define SPILL_PAIRS 900u /* a STRING and a RANGE each, 64 bytes: 57,600 of a 64 KiB ring */

struct spill_seen {
	const struct trace_reader *r;
	uint32_t pid;
	unsigned seen[SPILL_SLOTS][SPILL_PAIRS];
	unsigned wrong_thread, late, unknown, other;
	uint64_t last_start[SPILL_SLOTS];
	unsigned out_of_order;
};

static int spill_event(void *ctx, const struct trace_event *e)
{
	struct spill_seen *c = ctx;
	const char *name = trace_reader_string(c->r, trace_reader_desc(c->r, e->desc)->name_str);
	const struct trace_thread *t = trace_reader_thread(c->r, e->thread);
	unsigned k, i;
	char tail;
	if (sscanf(name, "spill %u %u%c", &k, &i, &tail) == 2 && k < SPILL_SLOTS && i < SPILL_PAIRS) {
		c->seen[k][i]++;
		c->wrong_thread += t->tid != c->pid + k;
		c->out_of_order += e->start_ns < c->last_start[k];
		c->last_start[k] = e->start_ns;
	} else if (!strcmp(name, "late name")) {
		c->late++;
	} else if (!strncmp(name, "<unknown name", 13)) {
		c->unknown++;
	} else {
		c->other++;
	}
	return 0;
}

/* Eight rings filled past the backlog mark before one poll: they spill, the
 * newest chunks past the memory cap (4 rings) to the file, and come back
 * converted, each slot in its order, none dropped; a range of slot 7 named
 * by a string slot 0 defines at the end of its ring waits for it, and is not
 * given up on while the spill holds it. */
static void test_spill(void **state)
{
	(void)state;
	uint32_t pid = (uint32_t)getpid();
	size_t len;
	struct ring_shm *shm;
	struct recorder_opts o = {path, 1, SPILL_SLOTS, 1u << 16, 1000000000ull, NULL, 0, 4u << 16};
	struct recorder *r = recorder_create(&o);
	assert_non_null(r);
	assert_int_equal(recorder_begin(r, (pid_t)pid, 0, NULL, 0), 0);
	shm = attach(r, &len);
	uint64_t t0 = clock_now_ns();
	struct ring_slot *s[SPILL_SLOTS];
	for (uint32_t k = 0; k < SPILL_SLOTS; k++) {
		s[k] = ring_slot_claim(shm, pid, pid + k);
		assert_non_null(s[k]);
	}
	put_string(shm, s[0], 1, "prog");
	put_process(shm, s[0], pid, t0, 1);
	for (uint32_t k = 0; k < SPILL_SLOTS; k++)
		put_thread(shm, s[k], t0);
	put_range(shm, s[SPILL_SLOTS - 1], 2, t0 + 5); /* id 2: defined last, in slot 0 */
	for (uint32_t k = 0; k < SPILL_SLOTS; k++) {
		for (uint32_t i = 0; i < SPILL_PAIRS; i++) {
			char name[32];
			uint32_t id = 100 + k * SPILL_PAIRS + i;
			snprintf(name, sizeof(name), "spill %u %u", k, i);
			put_string(shm, s[k], id, name);
			put_range(shm, s[k], id, t0 + 10 + i * 200);
		}
	}
	put_string(shm, s[0], 2, "late name");
	for (int p = 0; p < 6; p++)
		recorder_poll(r);
	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	recorder_destroy(r);
	munmap(shm, len);
	assert_int_equal(st.dropped, 0);
	assert_true(st.spilled_bytes >= SPILL_SLOTS * SPILL_PAIRS * 64u);
	assert_true(st.spill_file_bytes >= (1u << 16)); /* past the cap of 4 rings */
	assert_true(st.spill_peak_bytes > (4u << 16));
	assert_int_equal(st.spill_lost, 0);

	char err[256];
	struct trace_reader *tr = trace_reader_open(path, err, sizeof(err));
	assert_non_null(tr);
	struct spill_seen *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	c->r = tr;
	c->pid = pid;
	struct trace_visitor v = {.event = spill_event};
	assert_int_equal(trace_reader_run(tr, &v, c), 0);
	assert_null(trace_reader_damage(tr, NULL));
	unsigned once = 0;
	for (unsigned k = 0; k < SPILL_SLOTS; k++)
		for (unsigned i = 0; i < SPILL_PAIRS; i++)
			once += c->seen[k][i] == 1;
	assert_int_equal(once, SPILL_SLOTS * SPILL_PAIRS);
	assert_int_equal(c->wrong_thread, 0);
	assert_int_equal(c->out_of_order, 0);
	assert_int_equal(c->late, 1);
	assert_int_equal(c->unknown, 0);
	assert_int_equal(c->other, 0);
	trace_reader_close(tr);
	free(c);
}

#define SPILLER_BURSTS 48u
#define SPILLER_PAIRS 734u /* 46,976 bytes a burst: with what a quarter less a byte leaves, a ring */

struct spiller_seen {
	const struct trace_reader *r;
	unsigned *seen;
	unsigned out_of_order, other;
	uint64_t last_start;
};

static int spiller_event(void *ctx, const struct trace_event *e)
{
	struct spiller_seen *c = ctx;
	const char *name = trace_reader_string(c->r, trace_reader_desc(c->r, e->desc)->name_str);
	unsigned i;
	char tail;
	if (sscanf(name, "burst %u%c", &i, &tail) == 1 && i < SPILLER_BURSTS * SPILLER_PAIRS) {
		c->seen[i]++;
		c->out_of_order += e->start_ns < c->last_start;
		c->last_start = e->start_ns;
	} else {
		c->other++;
	}
	return 0;
}

/* The spiller empties a ring that nobody polls: bursts of 47 KB into a 64
 * KiB ring (up to three quarters and more, which wakes it), each written
 * once the ring holds less than the quarter that makes it spill, 2.2 MB in
 * all, while the test never polls; then one poll loop converts it all:
 * every range once, in order, none dropped. Without the spiller the second
 * burst would not fit. */
static void test_spiller(void **state)
{
	(void)state;
	uint32_t pid = (uint32_t)getpid();
	size_t len;
	struct ring_shm *shm;
	struct recorder *r = start(pid, &shm, &len);
	recorder_spiller_start(r);
	struct ring_slot *s = ring_slot_claim(shm, pid, pid);
	assert_non_null(s);
	uint64_t t0 = clock_now_ns();
	put_string(shm, s, 1, "prog");
	put_process(shm, s, pid, t0, 1);
	put_thread(shm, s, t0);
	for (uint32_t b = 0; b < SPILLER_BURSTS; b++) {
		/* the ring emptied by the spiller alone (10 s at most), to less
		 * than the quarter that makes a ring spill */
		uint64_t wait0 = clock_now_ns();
		while (ring_pending(s) >= (16u << 10) && clock_now_ns() - wait0 < 10000000000ull)
			usleep(200);
		assert_true(ring_pending(s) < (16u << 10));
		for (uint32_t k = 0; k < SPILLER_PAIRS; k++) {
			uint32_t i = b * SPILLER_PAIRS + k;
			char name[32];
			snprintf(name, sizeof(name), "burst %u", i);
			put_string(shm, s, 100 + i, name);
			put_range(shm, s, 100 + i, t0 + 10 + (uint64_t)i * 200);
		}
	}
	struct recorder_stats st;
	for (int p = 0; p < 4; p++)
		recorder_poll(r);
	assert_int_equal(recorder_finish(r, &st), 0);
	recorder_destroy(r);
	munmap(shm, len);
	assert_int_equal(st.dropped, 0);
	assert_true(st.spilled_bytes >= (SPILLER_BURSTS - 1) * (uint64_t)SPILLER_PAIRS * 64u - (16u << 10));
	assert_int_equal(st.spill_lost, 0);

	char err[256];
	struct trace_reader *tr = trace_reader_open(path, err, sizeof(err));
	assert_non_null(tr);
	struct spiller_seen c = {.r = tr};
	c.seen = calloc(SPILLER_BURSTS * SPILLER_PAIRS, sizeof(*c.seen));
	assert_non_null(c.seen);
	struct trace_visitor v = {.event = spiller_event};
	assert_int_equal(trace_reader_run(tr, &v, &c), 0);
	assert_null(trace_reader_damage(tr, NULL));
	unsigned once = 0;
	for (unsigned i = 0; i < SPILLER_BURSTS * SPILLER_PAIRS; i++)
		once += c.seen[i] == 1;
	assert_int_equal(once, SPILLER_BURSTS * SPILLER_PAIRS);
	assert_int_equal(c.out_of_order, 0);
	assert_int_equal(c.other, 0);
	trace_reader_close(tr);
	free(c.seen);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpdl-test-recorder-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.gpdl", dir);
	snprintf(rdir, sizeof(rdir), "%s", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exec_with_records_pending_above, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_ext_and_mirror, setup, teardown),
		cmocka_unit_test_setup_teardown(test_communication, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ranks_and_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_collisions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_vars_drained_late, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_root_is_rank, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reaped_before_drained, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pid_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ring_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spiller, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
