/*
 * test_collector_trace.c - libgprof-dl-collector.so under the recorder, as
 * `gprof-dl run` has them: collector-target runs with the collector preloaded
 * and injected, attached to the recorder's rings, with the recording window's
 * variables the launcher sets; the recorder drains it into a trace, which is
 * read back. What the bindings' interface, torch's NVTX messages, NVTX steps
 * with payloads and the window do is checked in the events of the file.
 */
#include "gpdl-config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/collector/records.h"

#if GPDL_HAVE_NVTX

#include "formats/trace/trace.h"
#include "lib/collector/gprof-dl-api.h"
#include "common/clock.h"
#include "lib/recorder/recorder.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct ev {
	char name[128], domain[32], shapes[64];
	uint8_t type, flags;
	uint64_t start, dur;
	int has_seq;
	int64_t seq;
	uint64_t samples;
};

struct traced {
	int status;
	char out[1024];
	struct ev ev[256];
	size_t n;
	uint64_t dropped;
};

static char dir[64], path[96];

struct collect {
	struct traced *t;
	struct trace_reader *r;
};

static int on_event(void *ctx, const struct trace_event *e)
{
	struct collect *c = ctx;
	if (c->t->n == 256)
		return 0;
	struct ev *x = &c->t->ev[c->t->n++];
	const struct trace_desc *d = trace_reader_desc(c->r, e->desc);
	memset(x, 0, sizeof(*x));
	snprintf(x->name, sizeof(x->name), "%s", trace_reader_string(c->r, d->name_str));
	snprintf(x->domain, sizeof(x->domain), "%s", trace_reader_string(c->r, d->domain_str));
	x->type = d->type;
	x->flags = e->flags;
	x->start = e->start_ns;
	x->dur = e->dur_ns;
	if (e->ext) {
		x->has_seq = e->ext->has_seq;
		x->seq = e->ext->seq_nr;
		x->samples = e->ext->samples;
		snprintf(x->shapes, sizeof(x->shapes), "%s", trace_reader_string(c->r, e->ext->shapes_str));
	}
	return 0;
}

/* Runs collector-target SCENARIO under the collector and the recorder, with
 * the window variables in env ("NAME=value", NULL-ended); reads the trace. */
static void run_traced(struct traced *t, const char *scenario, const char *const *env_extra)
{
	memset(t, 0, sizeof(*t));
	struct recorder_opts o = {path, 1, 16, 1u << 16, 1000000000ull};
	struct recorder *r = recorder_create(&o);
	assert_non_null(r);
	char shm_env[128], preload[4096], inject[4096];
	snprintf(shm_env, sizeof(shm_env), "%s=%s", RING_ENV, recorder_shm_env(r));
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", GPDL_TEST_COLLECTOR);
	snprintf(inject, sizeof(inject), "NVTX_INJECTION64_PATH=%s", GPDL_TEST_COLLECTOR);
	const char *env[16] = {"PATH=/usr/bin:/bin", "LC_ALL=C", preload, inject, shm_env};
	int n = 5;
	for (; env_extra && *env_extra && n < 15; env_extra++)
		env[n++] = *env_extra;
	env[n] = NULL;

	int out = memfd_create("out", 0);
	assert_true(out >= 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out, 1);
		char *argv[] = {(char *)"collector-target", (char *)scenario, NULL};
		execve(GPDL_TEST_TARGET, argv, (char **)env);
		_exit(126);
	}
	char *argv[] = {(char *)"collector-target", (char *)scenario, NULL};
	assert_int_equal(recorder_begin(r, pid, 2, argv, TRACE_SRC_NVTX), 0);
	for (;;) {
		pid_t w = waitpid(pid, &t->status, WNOHANG);
		assert_true(w >= 0);
		if (w == pid)
			break;
		recorder_poll(r);
		usleep(1000);
	}
	recorder_process_reaped(r, pid, t->status, NULL);
	struct recorder_stats stats;
	assert_int_equal(recorder_finish(r, &stats), 0);
	recorder_destroy(r);
	t->dropped = stats.dropped;

	lseek(out, 0, SEEK_SET);
	ssize_t got = read(out, t->out, sizeof(t->out) - 1);
	t->out[got > 0 ? got : 0] = '\0';
	close(out);

	char err[256];
	struct trace_reader *tr = trace_reader_open(path, err, sizeof(err));
	if (!tr)
		fail_msg("%s", err);
	struct collect c = {t, tr};
	struct trace_visitor v = {.event = on_event};
	assert_int_equal(trace_reader_run(tr, &v, &c), 0);
	assert_null(trace_reader_damage(tr, NULL));
	trace_reader_close(tr);
}

static size_t count(const struct traced *t, const char *name, uint8_t type)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += !strcmp(t->ev[i].name, name) && t->ev[i].type == type;
	return n;
}

/* The nth event of that name and type, in file order. */
static const struct ev *find(const struct traced *t, const char *name, uint8_t type, size_t nth)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->ev[i].name, name) && t->ev[i].type == type && nth-- == 0)
			return &t->ev[i];
	fail_msg("no event '%s' of type %u", name, type);
	return NULL;
}

/* [a, b] within [outer] */
static void assert_within(const struct ev *in, const struct ev *out)
{
	assert_true(out->start <= in->start);
	assert_true(in->start + in->dur <= out->start + out->dur);
}

static void test_api_in_trace(void **state)
{
	(void)state;
	struct traced t;
	run_traced(&t, "api", NULL);
	assert_true(WIFEXITED(t.status));
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_string_equal(t.out, "api options 0 detail 1\n");
	assert_int_equal(t.dropped, 0);
	assert_int_equal(t.n, 16);
	assert_int_equal(count(&t, "nvtx inner", TRACE_EV_USER_DEFINED), 1);
	assert_int_equal(count(&t, "forward", TRACE_EV_FORWARD), 3);
	assert_int_equal(count(&t, "aten::mm", TRACE_EV_OPERATOR), 3);
	assert_int_equal(count(&t, "tick", TRACE_EV_OPTIMIZATION), 3);
	assert_int_equal(count(&t, "ProfileStep", TRACE_EV_PROFILE_STEP), 3);

	const struct ev *ns = find(&t, "nvtx step", TRACE_EV_PROFILE_STEP, 0);
	assert_int_equal(ns->samples, 16);
	assert_int_equal(ns->has_seq, 0);
	assert_string_equal(ns->domain, "gprof-dl");
	assert_within(find(&t, "nvtx inner", TRACE_EV_USER_DEFINED, 0), ns);
	for (size_t i = 0; i < 3; i++) {
		const struct ev *st = find(&t, "ProfileStep", TRACE_EV_PROFILE_STEP, i);
		const struct ev *fw = find(&t, "forward", TRACE_EV_FORWARD, i);
		const struct ev *op = find(&t, "aten::mm", TRACE_EV_OPERATOR, i);
		const struct ev *tk = find(&t, "tick", TRACE_EV_OPTIMIZATION, i);
		assert_int_equal(st->samples, 32);
		assert_int_equal(st->has_seq, 0);
		assert_string_equal(st->shapes, "");
		assert_int_equal(op->has_seq, 1);
		assert_int_equal(op->seq, 10 + (int64_t)i);
		assert_string_equal(op->shapes, "[[2, 3], [3, 4]]");
		assert_int_equal(op->samples, 0);
		assert_string_equal(op->domain, "gprof-dl");
		assert_int_equal(fw->has_seq, 0);
		assert_within(op, fw);
		assert_within(fw, st);
		assert_int_equal(tk->flags, TRACE_EVF_MARK);
		assert_true(tk->start >= fw->start + fw->dur && tk->start <= st->start + st->dur);
	}
	const struct ev *relu = find(&t, "aten::relu", TRACE_EV_OPERATOR, 0);
	assert_int_equal(relu->has_seq, 1);
	assert_int_equal(relu->seq, 7);
	assert_string_equal(relu->shapes, "[[4]]");
	assert_string_equal(relu->domain, "gprof-dl");
	const struct ev *plain = find(&t, "aten::relu, seq = 8, op_id = 100", TRACE_EV_USER_DEFINED, 0);
	assert_int_equal(plain->has_seq, 0);
	assert_string_equal(plain->domain, "");
}

/* What a window keeps of the same program: exact counts. */
static void test_window_in_trace(void **state)
{
	(void)state;
	struct traced t;

	static const char *const timer_only[] = {"GPROF_DL_TIMER_ONLY=1", NULL};
	run_traced(&t, "api", timer_only);
	assert_string_equal(t.out, "api options 1 detail 0\n");
	assert_int_equal(t.n, 4);
	assert_int_equal(count(&t, "ProfileStep", TRACE_EV_PROFILE_STEP), 3);
	assert_int_equal(find(&t, "nvtx step", TRACE_EV_PROFILE_STEP, 0)->samples, 16);
	assert_int_equal(find(&t, "ProfileStep", TRACE_EV_PROFILE_STEP, 2)->samples, 32);

	/* step 0 of NVTX, then steps 0 to 2 of the interface: only step 1 in full */
	static const char *const steps[] = {"GPROF_DL_STEPS=1:2", NULL};
	run_traced(&t, "api", steps);
	assert_string_equal(t.out, "api options 4 detail 0\n");
	assert_int_equal(t.n, 8); /* and the mark that says the window */
	assert_int_equal(count(&t, "window: steps 1:2", TRACE_EV_USER_DEFINED), 1);
	assert_int_equal(count(&t, "ProfileStep", TRACE_EV_PROFILE_STEP), 3);
	assert_int_equal(count(&t, "nvtx step", TRACE_EV_PROFILE_STEP), 1);
	assert_int_equal(count(&t, "nvtx inner", TRACE_EV_USER_DEFINED), 0);
	assert_int_equal(count(&t, "forward", TRACE_EV_FORWARD), 1);
	assert_int_equal(count(&t, "tick", TRACE_EV_OPTIMIZATION), 1);
	const struct ev *op = find(&t, "aten::mm", TRACE_EV_OPERATOR, 0);
	assert_int_equal(op->seq, 11);
	assert_within(op, find(&t, "ProfileStep", TRACE_EV_PROFILE_STEP, 1));
	assert_int_equal(count(&t, "aten::relu", TRACE_EV_OPERATOR), 0);

	/* a delay far past the run: steps only */
	char t0[64];
	snprintf(t0, sizeof(t0), "GPROF_DL_T0_NS=%" PRIu64, clock_now_ns());
	const char *const delay[] = {t0, "GPROF_DL_DELAY_NS=1000000000000", NULL};
	run_traced(&t, "api", delay);
	assert_string_equal(t.out, "api options 8 detail 0\n");
	assert_int_equal(t.n, 5);
	assert_int_equal(count(&t, "window: time 1000000000000:", TRACE_EV_USER_DEFINED), 1);
	assert_int_equal(count(&t, "ProfileStep", TRACE_EV_PROFILE_STEP), 3);

	/* a window that is open from the launch on */
	const char *const open[] = {t0, "GPROF_DL_DELAY_NS=0", NULL};
	run_traced(&t, "api", open);
	assert_string_equal(t.out, "api options 8 detail 1\n");
	assert_int_equal(t.n, 17);
}

/* --paused, start()/stop() between a push and its pop, and a kill with ranges
 * open: the one pushed while paused is not recovered, the others are, with
 * their details. */
static void test_window_kill_in_trace(void **state)
{
	(void)state;
	struct traced t;
	static const char *const paused[] = {"GPROF_DL_PAUSED=1", NULL};
	run_traced(&t, "window-kill", paused);
	assert_true(WIFSIGNALED(t.status));
	assert_int_equal(WTERMSIG(t.status), SIGKILL);
	assert_int_equal(t.n, 3);
	const struct ev *r = find(&t, "pushed on, popped off", TRACE_EV_USER_DEFINED, 0);
	assert_int_equal(r->flags, 0);
	const struct ev *op = find(&t, "open on", TRACE_EV_OPERATOR, 0);
	assert_int_equal(op->flags, TRACE_EVF_OPEN_AT_EXIT);
	assert_int_equal(op->has_seq, 1);
	assert_int_equal(op->seq, 5);
	assert_string_equal(op->shapes, "[[8]]");
	const struct ev *st = find(&t, "open step", TRACE_EV_PROFILE_STEP, 0);
	assert_int_equal(st->flags, TRACE_EVF_OPEN_AT_EXIT);
	assert_int_equal(st->samples, 8);
	assert_int_equal(st->has_seq, 0);
	assert_within(st, op);
	assert_int_equal(count(&t, "open off", TRACE_EV_OPERATOR), 0);
	assert_int_equal(count(&t, "pushed off, popped on", TRACE_EV_USER_DEFINED), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpdl-test-coll-trace-XXXXXX");
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
		cmocka_unit_test(test_api_in_trace),
		cmocka_unit_test(test_window_in_trace),
		cmocka_unit_test(test_window_kill_in_trace),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

#else /* !GPDL_HAVE_NVTX */

int main(void)
{
	return records_skip_without_nvtx();
}

#endif
