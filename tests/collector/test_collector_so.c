/*
 * test_collector_so.c - libgprof-dl-collector.so as `gprof-dl run` uses it.
 *
 * Runs collector-target (a program with NVTX in it and in a library it links:
 * two NVTX instances) with the collector preloaded and named as the NVTX
 * injection, attached to a ring in a memfd through GPROF_DL_SHM, the way the
 * launcher does; then reads the slots back. Also checks that the collector is
 * inert, and changes nothing, without a ring.
 */
#include "gpdl-config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/collector/records.h"

#if GPDL_HAVE_NVTX


#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct run {
	struct ring_shm *shm;
	size_t len;
	int status;
	pid_t pid;
	char out[4096], err[8192];
	struct view v;
};

enum env_kind {
	ENV_BARE,      /* no collector at all */
	ENV_INERT,     /* collector injected, no ring */
	ENV_BAD_RING,  /* collector injected, GPROF_DL_SHM names no ring */
	ENV_DEBUG,     /* inert, with GPROF_DL_DEBUG=1 */
	ENV_RECORDING, /* as under gprof-dl run */
};

static void read_all(int fd, char *buf, size_t len)
{
	size_t n = 0;
	lseek(fd, 0, SEEK_SET);
	for (;;) {
		ssize_t r = read(fd, buf + n, len - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
}

static void run_target(struct run *r, const char *scenario, enum env_kind kind)
{
	memset(r, 0, sizeof(*r));
	int shm_fd = -1;
	if (kind == ENV_RECORDING) {
		r->len = ring_shm_size(16, 1u << 16);
		shm_fd = memfd_create("gprof-dl-test-ring", 0);
		assert_true(shm_fd >= 0);
		assert_int_equal(ftruncate(shm_fd, (off_t)r->len), 0);
		r->shm = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
		assert_true(r->shm != MAP_FAILED);
		ring_shm_init(r->shm, 16, 1u << 16, (uint32_t)getpid());
	}
	char shm_env[128], preload[4096], inject[4096];
	snprintf(shm_env, sizeof(shm_env), "%s=/proc/%d/fd/%d", RING_ENV, (int)getpid(), shm_fd);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", GPDL_TEST_COLLECTOR);
	snprintf(inject, sizeof(inject), "NVTX_INJECTION64_PATH=%s", GPDL_TEST_COLLECTOR);
	const char *env[8] = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
	int n = 2;
	if (kind != ENV_BARE) {
		env[n++] = preload;
		env[n++] = inject;
	}
	if (kind == ENV_RECORDING)
		env[n++] = shm_env;
	if (kind == ENV_BAD_RING)
		env[n++] = RING_ENV "=/nonexistent/gprof-dl-ring";
	if (kind == ENV_DEBUG)
		env[n++] = "GPROF_DL_DEBUG=1";
	env[n] = NULL;

	int out = memfd_create("out", 0), err = memfd_create("err", 0);
	assert_true(out >= 0 && err >= 0);
	fflush(NULL);
	r->pid = fork();
	assert_true(r->pid >= 0);
	if (r->pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		char *argv[] = {(char *)"collector-target", (char *)scenario, NULL};
		execve(GPDL_TEST_TARGET, argv, (char **)env);
		_exit(126);
	}
	assert_int_equal(waitpid(r->pid, &r->status, 0), r->pid);
	read_all(out, r->out, sizeof(r->out));
	read_all(err, r->err, sizeof(r->err));
	close(out);
	close(err);
	if (shm_fd >= 0) {
		close(shm_fd);
		view_load(&r->v, r->shm);
	}
}

static void run_free(struct run *r)
{
	if (r->shm) {
		view_free(&r->v);
		munmap(r->shm, r->len);
	}
}

static const struct view_slot *slot_of(const struct run *r, uint32_t pid, size_t nth)
{
	for (uint32_t i = 0; i < r->v.nslots; i++) {
		const struct ring_process *p = view_find(&r->v.slot[i], RING_REC_PROCESS_START, 0);
		if (p && p->pid == pid && nth-- == 0)
			return &r->v.slot[i];
	}
	return NULL;
}

static const struct ring_range *range_named(const struct run *r, const struct view_slot *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct ring_range *x = (const void *)s->r[i];
		const char *n = x->h.kind == RING_REC_RANGE ? view_str(&r->v, x->name_str) : NULL;
		if (n && !strcmp(n, name))
			return x;
	}
	return NULL;
}

static int slot_state(const struct run *r, const struct view_slot *s)
{
	return (int)atomic_load(&ring_shm_slot(r->shm, s->index)->state);
}

static void test_inert_without_ring(void **state)
{
	(void)state;
	struct run bare, inert, bad, debug;
	run_target(&bare, "basic", ENV_BARE);
	run_target(&inert, "basic", ENV_INERT);
	run_target(&bad, "basic", ENV_BAD_RING);
	run_target(&debug, "basic", ENV_DEBUG);
	assert_true(WIFEXITED(bare.status));
	assert_int_equal(WEXITSTATUS(bare.status), 0);
	assert_string_equal(bare.out, "hello from the target\nlevels no-op\nerrno kept\n");
	assert_string_equal(bare.err, "a line on stderr\n");
	struct run *same[] = {&inert, &bad, &debug};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(same[i]->status, bare.status);
		assert_string_equal(same[i]->out, bare.out);
	}
	assert_string_equal(inert.err, bare.err);
	assert_string_equal(bad.err, bare.err);
	assert_non_null(strstr(debug.err, "gprof-dl collector["));
	assert_non_null(strstr(debug.err, "inert"));
	assert_non_null(strstr(debug.err, "a line on stderr\n"));
}

static void test_recording_two_nvtx_instances(void **state)
{
	(void)state;
	struct run r;
	run_target(&r, "basic", ENV_RECORDING);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_string_equal(r.out, "hello from the target\nlevels tracked\nerrno kept\n");
	assert_string_equal(r.err, "a line on stderr\n");

	const struct view_slot *s = slot_of(&r, (uint32_t)r.pid, 0);
	assert_non_null(s);
	assert_int_equal(s->r[0]->kind, RING_REC_STRING);
	const struct ring_process *ps = view_find(s, RING_REC_PROCESS_START, 0);
	assert_int_equal(ps->ppid, getpid());
	assert_string_equal(view_str(&r.v, ps->cmdline_str), "collector-target basic");
	const struct ring_range *outer = range_named(&r, s, "exe outer");
	const struct ring_range *inner = range_named(&r, s, "lib inner");
	const struct ring_range *dom = range_named(&r, s, "in domain");
	assert_non_null(outer);
	assert_non_null(inner);
	assert_non_null(dom);
	assert_true(outer->start_ns <= inner->start_ns && inner->end_ns <= outer->end_ns);
	assert_string_equal(view_str(&r.v, dom->domain_str), "target domain");
	assert_int_equal(view_count(s, RING_REC_MARK), 1);
	const struct ring_process *pe = view_find(s, RING_REC_PROCESS_EXIT, 0);
	assert_non_null(pe);
	assert_int_equal(pe->h.aux, RING_EXIT_KNOWN | 0); /* main returned 0 */
	assert_int_equal(s->r[s->n - 1]->kind, RING_REC_PROCESS_EXIT);
	assert_int_equal(slot_state(&r, s), RING_SLOT_EXITED);
	assert_int_equal(view_check_defined_before_use(&r.v, s, 0), 0);
	assert_int_equal(atomic_load(&r.shm->no_slot_events), 0);
	run_free(&r);
}

static void test_exit_codes(void **state)
{
	(void)state;
	static const struct {
		const char *scenario;
		int code;
	} cases[] = {{"exit3", 3}, {"_exit5", 5}};
	for (int i = 0; i < 2; i++) {
		struct run r;
		run_target(&r, cases[i].scenario, ENV_RECORDING);
		assert_true(WIFEXITED(r.status));
		assert_int_equal(WEXITSTATUS(r.status), cases[i].code);
		const struct view_slot *s = slot_of(&r, (uint32_t)r.pid, 0);
		assert_non_null(s);
		const struct ring_process *pe = view_find(s, RING_REC_PROCESS_EXIT, 0);
		assert_non_null(pe);
		assert_int_equal(pe->h.aux, RING_EXIT_KNOWN | (unsigned)cases[i].code);
		assert_non_null(view_find(s, RING_REC_THREAD_END, 0));
		assert_int_equal(slot_state(&r, s), RING_SLOT_EXITED);
		run_free(&r);
	}
}

static void test_thread_created(void **state)
{
	(void)state;
	struct run r;
	run_target(&r, "thread", ENV_RECORDING);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	const struct view_slot *main_slot = slot_of(&r, (uint32_t)r.pid, 0);
	assert_non_null(main_slot);
	const struct view_slot *ts = NULL;
	for (uint32_t i = 0; i < r.v.nslots; i++) {
		const struct ring_thread *t = view_find(&r.v.slot[i], RING_REC_THREAD_START, 0);
		if (t && t->pid == (uint32_t)r.pid && t->tid != (uint32_t)r.pid)
			ts = &r.v.slot[i];
	}
	assert_non_null(ts);
	assert_non_null(range_named(&r, ts, "in thread"));
	assert_non_null(view_find(ts, RING_REC_THREAD_NAME, 0));
	assert_non_null(view_find(ts, RING_REC_THREAD_END, 0));
	assert_int_equal(slot_state(&r, ts), RING_SLOT_EXITED);
	run_free(&r);
}

static void test_fork_through_atfork(void **state)
{
	(void)state;
	struct run r;
	run_target(&r, "fork", ENV_RECORDING);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	const struct view_slot *ps = slot_of(&r, (uint32_t)r.pid, 0);
	assert_non_null(ps);
	const struct view_slot *cs = NULL;
	const struct ring_process *cp = NULL;
	for (uint32_t i = 0; i < r.v.nslots; i++) {
		const struct ring_process *p = view_find(&r.v.slot[i], RING_REC_PROCESS_START, 0);
		if (p && p->ppid == (uint32_t)r.pid) {
			cs = &r.v.slot[i];
			cp = p;
		}
	}
	assert_non_null(cs);
	assert_int_not_equal(cp->pid, r.pid);
	assert_non_null(range_named(&r, cs, "child"));
	/* "parent" was open across the fork: its parent's range, not the child's */
	assert_null(range_named(&r, cs, "parent"));
	assert_int_equal(atomic_load(&ring_shm_slot(r.shm, cs->index)->depth), 0);
	assert_non_null(range_named(&r, ps, "parent"));
	assert_non_null(view_find(cs, RING_REC_PROCESS_EXIT, 0));
	assert_int_equal(view_check_defined_before_use(&r.v, cs, 1), 0);
	run_free(&r);
}

static void test_exec_starts_again(void **state)
{
	(void)state;
	struct run r;
	run_target(&r, "exec", ENV_RECORDING);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_string_equal(r.out, "hello from the target\nlevels tracked\nerrno kept\n");
	const struct view_slot *first = slot_of(&r, (uint32_t)r.pid, 0);
	const struct view_slot *second = slot_of(&r, (uint32_t)r.pid, 1);
	assert_non_null(first);
	assert_non_null(second);
	assert_non_null(range_named(&r, first, "before exec"));
	assert_null(view_find(first, RING_REC_PROCESS_EXIT, 0));
	const struct ring_process *p2 = view_find(second, RING_REC_PROCESS_START, 0);
	assert_string_equal(view_str(&r.v, p2->cmdline_str), "collector-target basic");
	assert_non_null(range_named(&r, second, "lib inner"));
	assert_non_null(view_find(second, RING_REC_PROCESS_EXIT, 0));
	run_free(&r);
}

static void test_killed_keeps_open_ranges(void **state)
{
	(void)state;
	struct run r;
	run_target(&r, "kill", ENV_RECORDING);
	assert_true(WIFSIGNALED(r.status));
	assert_int_equal(WTERMSIG(r.status), SIGKILL);
	const struct view_slot *s = slot_of(&r, (uint32_t)r.pid, 0);
	assert_non_null(s);
	struct ring_slot *slot = ring_shm_slot(r.shm, s->index);
	assert_int_equal(atomic_load(&slot->state), RING_SLOT_ACTIVE);
	assert_int_equal(atomic_load(&slot->depth), 2);
	assert_string_equal(view_str(&r.v, slot->stack[0].name_str), "k0");
	assert_string_equal(view_str(&r.v, slot->stack[1].name_str), "k1");
	assert_true(slot->stack[0].start_ns <= slot->stack[1].start_ns);
	assert_int_equal(view_count(s, RING_REC_RANGE), 0);
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inert_without_ring),
		cmocka_unit_test(test_recording_two_nvtx_instances),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_thread_created),
		cmocka_unit_test(test_fork_through_atfork),
		cmocka_unit_test(test_exec_starts_again),
		cmocka_unit_test(test_killed_keeps_open_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !GPDL_HAVE_NVTX */

int main(void)
{
	return records_skip_without_nvtx();
}

#endif
