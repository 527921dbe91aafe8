/* The shared-memory ring: claim, write, read across the wrap, full-ring drops,
 * a scribbled header, free and reuse; and a producer thread racing the reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "lib/ring/ring.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define RING 4096u

static struct ring_shm *make_shm(uint32_t nslots, size_t *len)
{
	*len = ring_shm_size(nslots, RING);
	struct ring_shm *shm = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(shm != MAP_FAILED);
	ring_shm_init(shm, nslots, RING, 1);
	assert_int_equal(ring_shm_check(shm, *len), 0);
	return shm;
}

static struct ring_range range(uint64_t i)
{
	struct ring_range r = {{RING_REC_RANGE, sizeof(struct ring_range), 0}, i, i + 10, (uint32_t)i, 0, 0, 0};
	return r;
}

static void test_claim_until_full(void **state)
{
	(void)state;
	size_t len;
	struct ring_shm *shm = make_shm(3, &len);
	struct ring_slot *a = ring_slot_claim(shm, 10, 11), *b = ring_slot_claim(shm, 10, 12);
	struct ring_slot *c = ring_slot_claim(shm, 20, 21);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_true(a != b && b != c);
	assert_int_equal(atomic_load(&shm->slots_used), 3);
	assert_null(ring_slot_claim(shm, 30, 31));
	ring_slot_release(b);
	assert_null(ring_slot_claim(shm, 30, 31)); /* exited but not yet drained */
	ring_slot_free(b);
	struct ring_slot *d = ring_slot_claim(shm, 30, 31);
	assert_ptr_equal(d, b);
	assert_int_equal(atomic_load(&shm->slots_used), 3); /* the lowest free slot was reused */
	assert_int_equal(d->pid, 30);
	assert_int_equal(d->generation, 2);
	assert_int_equal(ring_shm_check(shm, len - 1), -1);
	munmap(shm, len);
}

static void test_write_read_wrap_and_drop(void **state)
{
	(void)state;
	size_t len;
	struct ring_shm *shm = make_shm(1, &len);
	struct ring_slot *s = ring_slot_claim(shm, 1, 1);
	unsigned char buf[RING];
	uint64_t next_read = 0, written = 0;
	/* 40-byte records through a 4096-byte ring, many times round. */
	for (uint64_t round = 0; round < 50; round++) {
		for (int k = 0; k < 60; k++) {
			struct ring_range r = range(written);
			if (ring_write(shm, s, &r) == 0)
				written++;
		}
		size_t n = ring_read(shm, s, buf, sizeof(buf));
		for (size_t off = 0; off < n; off += sizeof(struct ring_range)) {
			struct ring_range r;
			memcpy(&r, buf + off, sizeof(r));
			assert_int_equal(r.start_ns, next_read);
			assert_int_equal(r.name_str, (uint32_t)next_read);
			next_read++;
		}
	}
	assert_int_equal(next_read, written);
	/* 60 records a round, 102 fit: nothing dropped so far. */
	assert_int_equal(atomic_load(&s->dropped), 0);
	for (int k = 0; k < 200; k++) {
		struct ring_range r = range(k);
		ring_write(shm, s, &r);
	}
	assert_int_equal(atomic_load(&s->dropped), 200 - RING / sizeof(struct ring_range));
	munmap(shm, len);
}

static void test_read_stops_at_buffer_and_garbage(void **state)
{
	(void)state;
	size_t len;
	struct ring_shm *shm = make_shm(1, &len);
	struct ring_slot *s = ring_slot_claim(shm, 1, 1);
	unsigned char buf[100];
	for (int k = 0; k < 5; k++) {
		struct ring_range r = range(k);
		assert_int_equal(ring_write(shm, s, &r), 0);
	}
	/* Only whole records: two of 40 bytes fit in 100. */
	assert_int_equal(ring_read(shm, s, buf, sizeof(buf)), 80);
	/* A scribbled size drops what is pending and counts it. */
	unsigned char *data = ring_slot_data(s);
	struct ring_rec bad = {RING_REC_RANGE, 3, 0};
	memcpy(data + 80, &bad, sizeof(bad));
	assert_int_equal(ring_read(shm, s, buf, sizeof(buf)), 0);
	assert_int_equal(atomic_load(&s->dropped), 1);
	assert_int_equal(atomic_load(&s->head), atomic_load(&s->tail));
	munmap(shm, len);
}

struct race {
	struct ring_shm *shm;
	struct ring_slot *slot;
	uint64_t n;
};

static void *producer(void *arg)
{
	struct race *r = arg;
	for (uint64_t i = 0; i < r->n;) {
		struct ring_range x = range(i);
		if (ring_write(r->shm, r->slot, &x) == 0)
			i++;
	}
	return NULL;
}

static void test_concurrent_producer(void **state)
{
	(void)state;
	size_t len;
	struct ring_shm *shm = make_shm(1, &len);
	struct race r = {shm, ring_slot_claim(shm, 1, 1), 200000};
	pthread_t t;
	unsigned char buf[RING];
	uint64_t expect = 0;
	pthread_create(&t, NULL, producer, &r);
	while (expect < r.n) {
		size_t n = ring_read(shm, r.slot, buf, sizeof(buf));
		for (size_t off = 0; off < n; off += sizeof(struct ring_range)) {
			struct ring_range x;
			memcpy(&x, buf + off, sizeof(x));
			assert_int_equal(x.start_ns, expect);
			assert_int_equal(x.end_ns, expect + 10);
			expect++;
		}
	}
	pthread_join(t, NULL);
	munmap(shm, len);
}

/* Version 7 (2 added RANGE_EXT, 3 the GPU records, 4 ranks and
 * communication, 5 steps' CPU time, 6 the device record, 7 the spiller's
 * futex): a header of another version is refused (a collector and a
 * launcher that disagree on records do not attach); RANGE_EXT records and
 * the mirror's details round-trip. */
static void test_version_2_records(void **state)
{
	(void)state;
	size_t len;
	struct ring_shm *shm = make_shm(1, &len);
	assert_int_equal(shm->version, 7);
	for (uint32_t old = 1; old <= 6; old++) {
		shm->version = old;
		assert_int_equal(ring_shm_check(shm, len), -1);
	}
	shm->version = 7;
	assert_int_equal(ring_shm_check(shm, len), 0);
	assert_int_equal(sizeof(struct ring_process_rank), 32);
	assert_int_equal(sizeof(struct ring_comm), 64);
	assert_int_equal(sizeof(struct ring_process_var), 16);
	assert_int_equal(sizeof(struct ring_range_ext), 56);
	assert_int_equal(sizeof(struct ring_step), 64);
	/* every record a multiple of 8 bytes, as ring_read requires */
	assert_int_equal(sizeof(struct ring_gpu_api) % 8, 0);
	assert_int_equal(sizeof(struct ring_gpu_work) % 8, 0);
	assert_int_equal(sizeof(struct ring_gpu_memory) % 8, 0);
	assert_int_equal(sizeof(struct ring_gpu_sync) % 8, 0);
	assert_int_equal(sizeof(struct ring_gpu_overhead) % 8, 0);
	assert_int_equal(sizeof(struct ring_gpu_extcorr) % 8, 0);
	assert_int_equal(sizeof(struct ring_gpu_device) % 8, 0);
	assert_int_equal(sizeof(struct ring_gpu_drops) % 8, 0);
	assert_int_equal(sizeof(struct ring_gpu_status) % 8, 0);
	assert_int_equal(sizeof(struct ring_open_range), 48);

	struct ring_slot *s = ring_slot_claim(shm, 1, 2);
	struct ring_range_ext x = {{RING_REC_RANGE_EXT, sizeof(x), 0}, 100, 200, 3, 4, 6, 5, -1, 0};
	for (int i = 0; i < 100; i++) { /* across the wrap */
		x.seq = i % 3 ? i : -1;
		x.samples = (uint64_t)i * 7;
		x.start_ns = (uint64_t)i;
		assert_int_equal(ring_write(shm, s, &x), 0);
		unsigned char buf[256];
		assert_int_equal(ring_read(shm, s, buf, sizeof(buf)), sizeof(x));
		struct ring_range_ext y;
		memcpy(&y, buf, sizeof(y));
		assert_int_equal(y.h.kind, RING_REC_RANGE_EXT);
		assert_int_equal(y.start_ns, (uint64_t)i);
		assert_int_equal(y.seq, i % 3 ? i : -1);
		assert_int_equal(y.samples, (uint64_t)i * 7);
		assert_int_equal(y.shapes_str, 5);
		assert_int_equal(y.category, 6);
	}
	s->stack[0] = (struct ring_open_range){10, 1, 2, 6, RING_OPEN_SKIP, 42, 8, 9, 0};
	assert_int_equal(s->stack[0].seq, 42);
	assert_int_equal(s->stack[0].samples, 8);
	assert_int_equal(s->stack[0].shapes_str, 9);
	assert_true(RING_OPEN_SKIP > 0xffu); /* above the trace's flag bits */
	munmap(shm, len);
}

/* A fake environment: "NAME=value" strings, NULL-ended. */
static const char *fake_get(const char *name, void *ctx)
{
	size_t n = strlen(name);
	for (const char *const *e = ctx; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

struct env_case {
	const char *env[12];
	unsigned source;
	int32_t rank, local_rank, world_size;
};

/* The launchers' variables, highest source last; Slurm's only in a step. */
static void test_rank_from_env(void **state)
{
	(void)state;
	static const struct env_case cases[] = {
		{{NULL}, 0, -1, -1, -1},
		{{"RANK=3", "WORLD_SIZE=8", "LOCAL_RANK=1", NULL}, RING_RANK_ENV_TORCH, 3, 1, 8},
		{{"RANK=0", NULL}, RING_RANK_ENV_TORCH, 0, -1, -1},
		{{"WORLD_SIZE=8", "LOCAL_RANK=1", NULL}, 0, -1, -1, -1}, /* no rank: none */
		{{"SLURM_PROCID=5", "SLURM_NTASKS=6", "SLURM_LOCALID=2", NULL}, 0, -1, -1, -1},
		{{"SLURM_PROCID=5", "SLURM_NTASKS=6", "SLURM_LOCALID=2", "SLURM_STEP_ID=0", NULL},
		 RING_RANK_ENV_SLURM, 5, 2, 6},
		{{"SLURM_PROCID=5", "SLURM_STEPID=1", "PADDLE_TRAINER_ID=1", "PADDLE_TRAINERS_NUM=4",
		  "PADDLE_LOCAL_RANK=1", NULL},
		 RING_RANK_ENV_PADDLE, 1, 1, 4},
		{{"PMI_RANK=2", "PMI_SIZE=4", "MPI_LOCALRANKID=0", "PADDLE_TRAINER_ID=1", NULL},
		 RING_RANK_ENV_PMI, 2, 0, 4},
		{{"OMPI_COMM_WORLD_RANK=7", "OMPI_COMM_WORLD_SIZE=16", "OMPI_COMM_WORLD_LOCAL_RANK=3",
		  "PMI_RANK=2", NULL},
		 RING_RANK_ENV_OMPI, 7, 3, 16},
		/* torchrun under srun under mpirun: torch's variables win */
		{{"OMPI_COMM_WORLD_RANK=7", "SLURM_PROCID=1", "SLURM_STEP_ID=3", "RANK=9", "WORLD_SIZE=10",
		  NULL},
		 RING_RANK_ENV_TORCH, 9, -1, 10},
		/* not numbers: not there */
		{{"RANK=", "OMPI_COMM_WORLD_RANK=4", NULL}, RING_RANK_ENV_OMPI, 4, -1, -1},
		{{"RANK=-1", "WORLD_SIZE=2", NULL}, 0, -1, -1, -1},
		{{"RANK=1x", NULL}, 0, -1, -1, -1},
		{{"RANK=2", "WORLD_SIZE=two", "LOCAL_RANK=99999999999", NULL}, RING_RANK_ENV_TORCH, 2, -1, -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int32_t rank = 42, local = 42, world = 42;
		unsigned src = ring_rank_from_env(fake_get, (void *)cases[i].env, &rank, &local, &world);
		if (src != cases[i].source || rank != cases[i].rank || local != cases[i].local_rank ||
		    world != cases[i].world_size)
			fail_msg("case %zu: source %u rank %d local %d world %d", i, src, rank, local, world);
	}
}

/* The job the launchers' variables name: the first that applies, in
 * ring_job_from_env()'s order; empty values name nothing; cut to fit. */
static void test_job_from_env(void **state)
{
	(void)state;
	static const struct {
		const char *env[8];
		const char *job;
	} cases[] = {
		{{NULL}, ""},
		{{"TORCHELASTIC_RUN_ID=1f2e", "SLURM_JOB_ID=77", "MASTER_ADDR=h", "MASTER_PORT=1", NULL},
		 "torchelastic:1f2e"},
		/* torchrun's default run id names no run: the rendezvous does */
		{{"TORCHELASTIC_RUN_ID=none", "MASTER_ADDR=node-3", "MASTER_PORT=29500", NULL},
		 "master:node-3:29500"},
		{{"TORCHELASTIC_RUN_ID=", "SLURM_JOB_ID=77", NULL}, "slurm:77"},
		{{"SLURM_JOB_ID=77", "SLURM_STEP_ID=2", "PMIX_NAMESPACE=prterun-x-1@1", NULL}, "slurm:77.2"},
		{{"SLURM_JOB_ID=77", "SLURM_STEPID=0", NULL}, "slurm:77.0"},
		{{"PMIX_NAMESPACE=prterun-x-1@1", "MASTER_ADDR=h", "MASTER_PORT=1", NULL},
		 "pmix:prterun-x-1@1"},
		{{"MASTER_ADDR=127.0.0.1", NULL}, ""}, /* an address without its port: none */
		{{"MASTER_PORT=1234", "MASTER_ADDR=", NULL}, ""},
	};
	char buf[64];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = ring_job_from_env(fake_get, (void *)cases[i].env, buf, sizeof(buf));
		if (strcmp(buf, cases[i].job) != 0 || n != strlen(cases[i].job))
			fail_msg("case %zu: '%s' (%zu)", i, buf, n);
	}
	static const char *const long_env[] = {"MASTER_ADDR=a-rather-long-host-name.example.org",
					       "MASTER_PORT=29500", NULL};
	char small[16];
	assert_int_equal(ring_job_from_env(fake_get, (void *)long_env, small, sizeof(small)), 15);
	assert_string_equal(small, "master:a-rather");
	assert_int_equal(ring_job_from_env(fake_get, (void *)long_env, small, 0), 0);
}

/* Back-pressure (RING_SHM_WAIT): a full ring's producer waits for a reader
 * that comes 30 ms later, and writes (nothing dropped, the wait counted);
 * with no reader its wait runs out after RING_WAIT_MAX_NS, the record
 * drops and the flag is cleared, so the next full write drops at once.
 * A half-full ring wakes a launcher waiting in ring_wait(). */
struct late_reader {
	struct ring_shm *shm;
	struct ring_slot *slot;
};

static void *read_late(void *arg)
{
	struct late_reader *lr = arg;
	unsigned char buf[RING];
	struct timespec ts = {0, 30000000};
	nanosleep(&ts, NULL);
	assert_true(ring_read(lr->shm, lr->slot, buf, sizeof(buf)) > 0);
	return NULL;
}

static void *wait_launcher(void *arg)
{
	struct ring_shm *shm = arg;
	ring_wait(shm, 5000000000ull); /* 5 s unless woken */
	return NULL;
}

/* A thread running fn(shm), returned once it sleeps (its flag is set). */
static pthread_t sleeper(void *(*fn)(void *), struct ring_shm *shm, _Atomic uint32_t *flag)
{
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, fn, shm), 0);
	while (!atomic_load(flag))
		sched_yield();
	return th;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_backpressure_and_wake(void **state)
{
	(void)state;
	size_t len;
	struct ring_shm *shm = make_shm(1, &len);
	struct ring_slot *s = ring_slot_claim(shm, 1, 1);
	assert_non_null(s);

	/* a launcher asleep is woken when the ring reaches half full */
	pthread_t th = sleeper(wait_launcher, shm, &shm->launcher_waiting);
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < RING / sizeof(struct ring_range); i++) {
		struct ring_range r = range(i);
		ring_write(shm, s, &r);
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(now_ns() - t0 < 2000000000ull);
	assert_int_equal(atomic_load(&shm->launcher_waiting), 0);
	assert_int_equal(atomic_load(&s->dropped), 0); /* filled exactly */

	atomic_fetch_or(&shm->flags, RING_SHM_WAIT);
	struct late_reader lr = {shm, s};
	assert_int_equal(pthread_create(&th, NULL, read_late, &lr), 0);
	struct ring_range r = range(1000);
	assert_int_equal(ring_write(shm, s, &r), 0); /* waited for the reader */
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(atomic_load(&s->dropped), 0);
	assert_true(atomic_load(&s->waited_ns) >= 20000000ull);

	while (ring_space(shm, s) >= sizeof(r))
		assert_int_equal(ring_write(shm, s, &r), 0);
	uint64_t waited = atomic_load(&s->waited_ns);
	assert_int_equal(ring_write(shm, s, &r), -1); /* nobody reads: the wait runs out */
	assert_true(atomic_load(&s->waited_ns) - waited >= RING_WAIT_MAX_NS);
	assert_int_equal(atomic_load(&shm->flags) & RING_SHM_WAIT, 0);
	t0 = now_ns();
	assert_int_equal(ring_write(shm, s, &r), -1); /* and the next drops at once */
	assert_true(now_ns() - t0 < RING_WAIT_MAX_NS / 2);
	assert_int_equal(atomic_load(&s->dropped), 2);
	munmap(shm, len);
}

static void *wait_spiller(void *arg)
{
	ring_wait_spiller(arg, 5000000000ull);
	return NULL;
}

/* The spiller sleeps until a ring is three quarters full: the writes that
 * fill half of it wake the converting thread's futex, not the spiller's; the
 * one that reaches three quarters wakes it. */
static void test_spiller_wake(void **state)
{
	(void)state;
	size_t len;
	struct ring_shm *shm = make_shm(1, &len);
	struct ring_slot *s = ring_slot_claim(shm, 1, 1);
	assert_non_null(s);
	pthread_t th = sleeper(wait_spiller, shm, &shm->spiller_waiting);
	atomic_store(&shm->launcher_waiting, 1); /* a converting thread asleep too */
	uint64_t t0 = now_ns(), i = 0;
	while (ring_pending(s) + sizeof(struct ring_range) <= RING / 2 + RING / 8) {
		struct ring_range r = range(i++);
		assert_int_equal(ring_write(shm, s, &r), 0);
	}
	assert_int_equal(atomic_load(&shm->launcher_waiting), 0);
	assert_int_equal(atomic_load(&shm->spiller_waiting), 1);
	while (ring_pending(s) + sizeof(struct ring_range) <= RING) {
		struct ring_range r = range(i++);
		assert_int_equal(ring_write(shm, s, &r), 0);
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(now_ns() - t0 < 2000000000ull); /* woken, not timed out */
	assert_int_equal(atomic_load(&shm->spiller_waiting), 0);
	assert_int_equal(atomic_load(&s->dropped), 0);
	/* a ring that is three quarters full already: no sleep at all */
	t0 = now_ns();
	ring_wait_spiller(shm, 5000000000ull);
	assert_true(now_ns() - t0 < 1000000000ull);
	munmap(shm, len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claim_until_full),
		cmocka_unit_test(test_write_read_wrap_and_drop),
		cmocka_unit_test(test_read_stops_at_buffer_and_garbage),
		cmocka_unit_test(test_concurrent_producer),
		cmocka_unit_test(test_version_2_records),
		cmocka_unit_test(test_rank_from_env),
		cmocka_unit_test(test_job_from_env),
		cmocka_unit_test(test_backpressure_and_wake),
		cmocka_unit_test(test_spiller_wake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
