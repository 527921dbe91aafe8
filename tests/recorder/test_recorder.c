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
#include "lib/common/clock.h"
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
	struct recorder_opts o = {path, 1, 8, 1u << 16, 1000000000ull};
	struct recorder *r = recorder_create(&o);
	assert_non_null(r);
	uint32_t pid = (uint32_t)getpid();
	assert_int_equal(recorder_begin(r, (pid_t)pid, 0, NULL, 0), 0);
	size_t len;
	struct ring_shm *shm = attach(r, &len);
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
	struct recorder_opts o = {path, 1, 8, 1u << 16, 1000000000ull};
	struct recorder *r = recorder_create(&o);
	assert_non_null(r);
	uint32_t pid = (uint32_t)getpid();
	assert_int_equal(recorder_begin(r, (pid_t)pid, 0, NULL, 0), 0);
	size_t len;
	struct ring_shm *shm = attach(r, &len);
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

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpdl-test-recorder-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.gpdl", dir);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
