/* ring.c - the collector-launcher shared-memory ring: its layout, slots and records (ring.h). */
#include "lib/ring/ring.h"

#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_VERSION 7u /* 2: RING_REC_RANGE_EXT, details in the stack mirror; 3: GPU activity;
			   4: ranks, output variables, communication; 5: steps with their
			   CPU and run-queue time; 6: the GPU device record is the
			   file's struct trace_device; 7: the spiller's futex */
#define RING_ALIGN 64u

static size_t header_size(void)
{
	return (sizeof(struct ring_shm) + RING_ALIGN - 1) & ~(size_t)(RING_ALIGN - 1);
}

size_t ring_shm_size(uint32_t nslots, uint64_t ring_bytes)
{
	return header_size() + (size_t)nslots * (RING_SLOT_HEADER + (size_t)ring_bytes);
}

void ring_shm_init(struct ring_shm *shm, uint32_t nslots, uint64_t ring_bytes, uint32_t launcher_pid)
{
	memcpy(shm->magic, RING_MAGIC, sizeof(shm->magic));
	shm->version = RING_VERSION;
	shm->nslots = nslots;
	shm->ring_bytes = ring_bytes;
	shm->slot_stride = RING_SLOT_HEADER + ring_bytes;
	shm->launcher_pid = launcher_pid;
	atomic_store(&shm->next_string_id, 1);
	atomic_store(&shm->next_range_id, 1);
}

int ring_shm_check(const struct ring_shm *shm, size_t len)
{
	if (len < sizeof(*shm) || memcmp(shm->magic, RING_MAGIC, sizeof(shm->magic)) != 0)
		return -1;
	if (shm->version != RING_VERSION || shm->ring_bytes < 4096 ||
	    (shm->ring_bytes & (shm->ring_bytes - 1)) != 0 ||
	    shm->slot_stride != RING_SLOT_HEADER + shm->ring_bytes)
		return -1;
	if (ring_shm_size(shm->nslots, shm->ring_bytes) > len)
		return -1;
	return 0;
}

struct ring_slot *ring_shm_slot(struct ring_shm *shm, uint32_t i)
{
	return (struct ring_slot *)((unsigned char *)shm + header_size() + (size_t)i * shm->slot_stride);
}

struct ring_slot *ring_slot_claim(struct ring_shm *shm, uint32_t pid, uint32_t tid)
{
	for (uint32_t i = 0; i < shm->nslots; i++) {
		struct ring_slot *s = ring_shm_slot(shm, i);
		uint32_t expect = RING_SLOT_FREE;
		if (atomic_load_explicit(&s->state, memory_order_relaxed) != RING_SLOT_FREE)
			continue;
		if (!atomic_compare_exchange_strong_explicit(&s->state, &expect, RING_SLOT_CLAIMING,
							     memory_order_acquire, memory_order_relaxed))
			continue;
		s->pid = pid;
		s->tid = tid;
		s->generation++;
		s->tail_seen = 0;
		s->wake_at = 0;
		atomic_store_explicit(&s->waited_ns, 0, memory_order_relaxed);
		atomic_store_explicit(&s->depth, 0, memory_order_relaxed);
		/* The launcher drained and reset the positions before freeing it. */
		uint32_t used = atomic_load_explicit(&shm->slots_used, memory_order_relaxed);
		while (used < i + 1 && !atomic_compare_exchange_weak_explicit(&shm->slots_used, &used, i + 1,
									     memory_order_release,
									     memory_order_relaxed))
			;
		atomic_store_explicit(&s->state, RING_SLOT_ACTIVE, memory_order_release);
		return s;
	}
	return NULL;
}

uint64_t ring_space(const struct ring_shm *shm, struct ring_slot *slot)
{
	uint64_t head = atomic_load_explicit(&slot->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_acquire);
	return shm->ring_bytes - (head - tail);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wakes the launcher's thread sleeping on *w (ring_wait(),
 * ring_wait_spiller()): the first producer to see the flag clears it, so a
 * sleep costs one system call at most. */
static void futex_wake_one(_Atomic uint32_t *w)
{
	if (atomic_load_explicit(w, memory_order_relaxed) && atomic_exchange_explicit(w, 0, memory_order_acq_rel))
		syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void launcher_wake(struct ring_shm *shm)
{
	futex_wake_one(&shm->launcher_waiting);
}

/* Back-pressure (RING_SHM_WAIT): the producer sleeps in short steps,
 * waking the launcher, until the ring has room for size bytes, for
 * RING_WAIT_MAX_NS at most (a launcher stopped or gone must not hang the
 * program). The time is counted in the slot. 0: room; -1: none came. */
static int ring_wait_room(struct ring_shm *shm, struct ring_slot *slot, uint64_t head, uint64_t size)
{
	uint64_t cap = shm->ring_bytes, t0 = mono_ns(), now = t0;
	int rc = -1;
	while (now - t0 < RING_WAIT_MAX_NS) {
		struct timespec step = {0, 20000};
		launcher_wake(shm);
		nanosleep(&step, NULL);
		uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_acquire);
		now = mono_ns();
		if (cap - (head - tail) >= size) {
			slot->tail_seen = tail;
			rc = 0;
			break;
		}
	}
	atomic_fetch_add_explicit(&slot->waited_ns, now - t0, memory_order_relaxed);
	if (rc)
		atomic_fetch_and_explicit(&shm->flags, ~RING_SHM_WAIT, memory_order_relaxed);
	return rc;
}

/* The producer's look, when its head reaches wake_at: how much room the
 * consumer left (its tail, a cache line the launcher writes: read no more
 * often than this), and, when the ring is half full while the launcher
 * sleeps, a wake (a system call, at most once a sleep: the first producer
 * to see it clears the flag). The next look is due an eighth of a ring on,
 * or where the room known now would run out. -1: no room for size. */
static int __attribute__((noinline)) ring_look(struct ring_shm *shm, struct ring_slot *slot, uint64_t head,
					       uint64_t size)
{
	uint64_t cap = shm->ring_bytes;
	uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_acquire);
	slot->tail_seen = tail;
	if (cap - (head - tail) < size) {
		slot->wake_at = head; /* look again at the next record */
		launcher_wake(shm);
		if (!(atomic_load_explicit(&shm->flags, memory_order_relaxed) & RING_SHM_WAIT) ||
		    ring_wait_room(shm, slot, head, size) != 0) {
			atomic_fetch_add_explicit(&slot->dropped, 1, memory_order_relaxed);
			return -1;
		}
		tail = slot->tail_seen;
	}
	if (head - tail >= cap / 2)
		launcher_wake(shm);
	if (head - tail >= RING_SPILLER_WAKE(shm))
		futex_wake_one(&shm->spiller_waiting);
	uint64_t next = head + cap / 8, full = tail + cap;
	slot->wake_at = next < full ? next : full;
	return 0;
}

int ring_write_slow(struct ring_shm *shm, struct ring_slot *slot, const void *rec)
{
	const struct ring_rec *h = rec;
	uint64_t size = h->size, cap = shm->ring_bytes;
	uint64_t head = atomic_load_explicit(&slot->head, memory_order_relaxed);
	if (head + size > slot->wake_at && ring_look(shm, slot, head, size) != 0)
		return -1;
	unsigned char *data = ring_slot_data(slot);
	uint64_t off = head & (cap - 1);
	uint64_t first = cap - off < size ? cap - off : size;
	memcpy(data + off, rec, first);
	if (first < size)
		memcpy(data, (const unsigned char *)rec + first, size - first);
	atomic_store_explicit(&slot->head, head + size, memory_order_release);
	return 0;
}

void ring_slot_release(struct ring_slot *slot)
{
	atomic_store_explicit(&slot->state, RING_SLOT_EXITED, memory_order_release);
}

size_t ring_read(struct ring_shm *shm, struct ring_slot *slot, void *buf, size_t buf_len)
{
	uint64_t cap = shm->ring_bytes;
	uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&slot->head, memory_order_acquire);
	unsigned char *data = ring_slot_data(slot), *out = buf;
	size_t n = 0;

	/* Whole records only: a record's header says its size. The headers are
	 * walked first, then what they span is copied at once (twice where it
	 * wraps): a record is 24 to 80 bytes, a copy each would cost more than
	 * the bytes. A size that makes no sense means the target scribbled on
	 * the ring; drop everything pending. */
	while (tail + n < head) {
		struct ring_rec h;
		uint64_t off = (tail + n) & (cap - 1);
		if (cap - off >= sizeof(h)) {
			memcpy(&h, data + off, sizeof(h));
		} else {
			memcpy(&h, data + off, cap - off);
			memcpy((unsigned char *)&h + (cap - off), data, sizeof(h) - (cap - off));
		}
		if (h.size < sizeof(h) || (h.size & 7u) || tail + n + h.size > head) {
			atomic_fetch_add_explicit(&slot->dropped, 1, memory_order_relaxed);
			atomic_store_explicit(&slot->tail, head, memory_order_release);
			return 0;
		}
		if (n + h.size > buf_len)
			break;
		n += h.size;
	}
	uint64_t off = tail & (cap - 1);
	uint64_t first = cap - off < n ? cap - off : n;
	memcpy(out, data + off, first);
	if (first < n)
		memcpy(out + first, data, n - first);
	atomic_store_explicit(&slot->tail, tail + n, memory_order_release);
	return n;
}

uint64_t ring_pending(struct ring_slot *slot)
{
	uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&slot->head, memory_order_acquire);
	return head - tail;
}

int ring_any_pending(struct ring_shm *shm, uint64_t bytes)
{
	uint32_t used = atomic_load_explicit(&shm->slots_used, memory_order_acquire);
	for (uint32_t i = 0; i < used && i < shm->nslots; i++)
		if (ring_pending(ring_shm_slot(shm, i)) >= bytes)
			return 1;
	return 0;
}

/* Sleeps on *w until a producer's ring holds at least `full` bytes (which
 * wakes it) or timeout_ns pass. */
static void futex_sleep(struct ring_shm *shm, _Atomic uint32_t *w, uint64_t full, uint64_t timeout_ns)
{
	atomic_store_explicit(w, 1, memory_order_seq_cst);
	if (ring_any_pending(shm, full)) {
		atomic_store_explicit(w, 0, memory_order_relaxed);
		return;
	}
	struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
	syscall(SYS_futex, w, FUTEX_WAIT, 1, &ts, NULL, 0);
	atomic_store_explicit(w, 0, memory_order_relaxed);
}

void ring_wait(struct ring_shm *shm, uint64_t timeout_ns)
{
	futex_sleep(shm, &shm->launcher_waiting, shm->ring_bytes / 2, timeout_ns);
}

void ring_wait_spiller(struct ring_shm *shm, uint64_t timeout_ns)
{
	futex_sleep(shm, &shm->spiller_waiting, RING_SPILLER_WAKE(shm), timeout_ns);
}

void ring_wake_spiller(struct ring_shm *shm)
{
	atomic_store_explicit(&shm->spiller_waiting, 0, memory_order_relaxed);
	syscall(SYS_futex, &shm->spiller_waiting, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void ring_slot_free(struct ring_slot *slot)
{
	atomic_store_explicit(&slot->head, 0, memory_order_relaxed);
	atomic_store_explicit(&slot->tail, 0, memory_order_relaxed);
	atomic_store_explicit(&slot->dropped, 0, memory_order_relaxed);
	atomic_store_explicit(&slot->depth, 0, memory_order_relaxed);
	atomic_store_explicit(&slot->state, RING_SLOT_FREE, memory_order_release);
}

/* ---- ranks from the environment ------------------------------------------ */

/* A variable holding a number >= 0 (and < 2^31), or -1. */
static int32_t env_number(const char *(*get)(const char *, void *), void *ctx, const char *name)
{
	const char *v = name ? get(name, ctx) : NULL;
	char *end;
	if (!v || *v < '0' || *v > '9')
		return -1;
	unsigned long n = strtoul(v, &end, 10);
	return *end || n > INT32_MAX ? -1 : (int32_t)n;
}

/* The launchers' variables, by enum ring_rank_source, highest last: the
 * last one present wins. */
static const struct {
	unsigned source;
	const char *rank, *local_rank, *world_size;
} srcs[] = {
	{RING_RANK_ENV_SLURM, "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
	{RING_RANK_ENV_PADDLE, "PADDLE_TRAINER_ID", "PADDLE_LOCAL_RANK", "PADDLE_TRAINERS_NUM"},
	{RING_RANK_ENV_PMI, "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
	{RING_RANK_ENV_OMPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
	{RING_RANK_ENV_TORCH, "RANK", "LOCAL_RANK", "WORLD_SIZE"},
};

const char *ring_rank_var(unsigned source)
{
	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++)
		if (srcs[i].source == source)
			return srcs[i].rank;
	return NULL;
}

int ring_is_rank_var(const char *name)
{
	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++)
		if (!strcmp(name, srcs[i].rank) || !strcmp(name, srcs[i].local_rank) ||
		    !strcmp(name, srcs[i].world_size))
			return 1;
	return 0;
}

unsigned ring_rank_from_env(const char *(*get)(const char *name, void *ctx), void *ctx,
			    int32_t *rank, int32_t *local_rank, int32_t *world_size)
{
	unsigned found = 0;
	*rank = *local_rank = *world_size = -1;
	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		/* Slurm's variables are set in a whole allocation (sbatch's
		 * script too): they name a task only inside an srun step */
		if (srcs[i].source == RING_RANK_ENV_SLURM && !get("SLURM_STEP_ID", ctx) &&
		    !get("SLURM_STEPID", ctx))
			continue;
		int32_t r = env_number(get, ctx, srcs[i].rank);
		if (r < 0)
			continue;
		found = srcs[i].source;
		*rank = r;
		*local_rank = env_number(get, ctx, srcs[i].local_rank);
		*world_size = env_number(get, ctx, srcs[i].world_size);
	}
	return found;
}

/* Appends s to buf (len bytes, pos used), cut where it would not fit with
 * its NUL: no snprintf, for a fork child's handler. */
static size_t job_append(char *buf, size_t len, size_t pos, const char *s)
{
	while (*s && pos + 1 < len)
		buf[pos++] = *s++;
	buf[pos] = '\0';
	return pos;
}

/* A variable's value when it is set and not empty. */
static const char *env_value(const char *(*get)(const char *name, void *ctx), void *ctx, const char *name)
{
	const char *v = get(name, ctx);
	return v && *v ? v : NULL;
}

size_t ring_job_from_env(const char *(*get)(const char *name, void *ctx), void *ctx, char *buf, size_t len)
{
	const char *a, *b;
	size_t n = 0;
	if (!len)
		return 0;
	buf[0] = '\0';
	if ((a = env_value(get, ctx, "TORCHELASTIC_RUN_ID")) && strcmp(a, "none") != 0) {
		n = job_append(buf, len, job_append(buf, len, 0, "torchelastic:"), a);
	} else if ((a = env_value(get, ctx, "SLURM_JOB_ID"))) {
		n = job_append(buf, len, job_append(buf, len, 0, "slurm:"), a);
		if ((b = env_value(get, ctx, "SLURM_STEP_ID")) || (b = env_value(get, ctx, "SLURM_STEPID")))
			n = job_append(buf, len, job_append(buf, len, n, "."), b);
	} else if ((a = env_value(get, ctx, "PMIX_NAMESPACE"))) {
		n = job_append(buf, len, job_append(buf, len, 0, "pmix:"), a);
	} else if ((a = env_value(get, ctx, "MASTER_ADDR")) && (b = env_value(get, ctx, "MASTER_PORT"))) {
		n = job_append(buf, len, job_append(buf, len, 0, "master:"), a);
		n = job_append(buf, len, job_append(buf, len, n, ":"), b);
	}
	return n;
}
