/*
 * test_collector.c - the collector driven in-process through real NVTX calls.
 *
 * The collector's static library is linked in and found by NVTX through the
 * static-injection pointer (inject.c). Each test attaches it to a fresh ring
 * in an anonymous shared mapping, calls NVTX, and reads the slots back with
 * ring_read to assert the exact records.
 */
#include "gpdl-config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/collector/records.h"

#if GPDL_HAVE_NVTX

#include <nvtx3/nvToolsExt.h>

#include "formats/trace/trace.h"
#include "lib/collector/collector-test.h"
#include "lib/collector/collector.h"
#include "lib/collector/gprof-dl-nvtx.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

struct fixture {
	struct ring_shm *shm;
	size_t len;
};

static int setup_ring(void **state, uint32_t nslots, uint64_t ring_bytes)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->shm = test_ring_new(nslots, ring_bytes, &f->len);
	if (collector_test_attach(f->shm, f->len) != 0)
		return -1;
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_ring(state, 8, 1u << 16);
}

static int setup_small(void **state)
{
	return setup_ring(state, 2, 4096);
}

static int setup_one_slot(void **state)
{
	return setup_ring(state, 1, 1u << 16);
}

static int setup_big(void **state)
{
	return setup_ring(state, 2, 1u << 20);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	collector_test_detach();
	test_ring_free(f->shm, f->len);
	free(f);
	return 0;
}

/* The signal test's timer must not outlive it, even when it fails. */
static int teardown_timer(void **state)
{
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	return teardown(state);
}

static uint32_t my_tid(void)
{
	return (uint32_t)gettid();
}

/* The text /proc/self/cmdline gives, arguments joined by spaces. */
static void own_cmdline(char *buf, size_t len)
{
	int fd = open("/proc/self/cmdline", O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	assert_true(n > 0);
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = '\0';
}

static void assert_kinds(const struct view_slot *s, const uint16_t *kinds, size_t n)
{
	for (size_t i = 0; i < n && i < s->n; i++)
		if (s->r[i]->kind != kinds[i])
			fail_msg("record %zu is of kind %u, expected %u", i, s->r[i]->kind, kinds[i]);
	assert_int_equal(s->n, n);
}

static void assert_name(const struct view *v, uint32_t id, const char *text)
{
	assert_int_not_equal(id, 0);
	assert_non_null(view_str(v, id));
	assert_string_equal(view_str(v, id), text);
}

static nvtxEventAttributes_t attr_ascii(const char *msg, uint32_t category)
{
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = category;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return a;
}

/* ---- the tests -------------------------------------------------------- */

static void test_process_and_nesting(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(nvtxRangePushA("outer"), 0);
	assert_int_equal(nvtxRangePushA("inner"), 1);
	assert_int_equal(nvtxRangePop(), 1);
	assert_int_equal(nvtxRangePop(), 0);
	collector_test_detach();

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	static const uint16_t kinds[] = {
		RING_REC_STRING, RING_REC_PROCESS_START, RING_REC_THREAD_START,
		RING_REC_STRING, RING_REC_STRING, RING_REC_RANGE, RING_REC_RANGE,
		RING_REC_STRING, RING_REC_THREAD_NAME, RING_REC_THREAD_END, RING_REC_PROCESS_EXIT,
	};
	assert_kinds(s, kinds, sizeof(kinds) / sizeof(kinds[0]));

	char cmdline[RING_NAME_MAX + 1];
	own_cmdline(cmdline, sizeof(cmdline));
	const struct ring_process *ps = view_find(s, RING_REC_PROCESS_START, 0);
	assert_int_equal(ps->pid, getpid());
	assert_int_equal(ps->ppid, getppid());
	assert_name(&v, ps->cmdline_str, cmdline);
	const struct ring_thread *ts = view_find(s, RING_REC_THREAD_START, 0);
	assert_int_equal(ts->pid, getpid());
	assert_int_equal(ts->tid, my_tid());
	assert_true(ts->ts_ns >= ps->ts_ns);

	const struct ring_range *inner = view_find(s, RING_REC_RANGE, 0);
	const struct ring_range *outer = view_find(s, RING_REC_RANGE, 1);
	assert_name(&v, inner->name_str, "inner");
	assert_name(&v, outer->name_str, "outer");
	assert_int_equal(inner->domain_str, 0);
	assert_int_equal(inner->category, 0);
	assert_int_equal(inner->h.aux, 0);
	assert_int_equal(inner->h.size, sizeof(*inner));
	assert_true(ts->ts_ns <= outer->start_ns);
	assert_true(outer->start_ns <= inner->start_ns);
	assert_true(inner->start_ns <= inner->end_ns);
	assert_true(inner->end_ns <= outer->end_ns);

	const struct ring_thread_name *tn = view_find(s, RING_REC_THREAD_NAME, 0);
	char comm[17] = {0};
	pthread_getname_np(pthread_self(), comm, sizeof(comm));
	assert_int_equal(tn->tid, my_tid());
	assert_name(&v, tn->name_str, comm);
	const struct ring_thread *te = view_find(s, RING_REC_THREAD_END, 0);
	const struct ring_process *pe = view_find(s, RING_REC_PROCESS_EXIT, 0);
	assert_true(te->ts_ns >= outer->end_ns);
	assert_int_equal(te->tid, my_tid());
	assert_int_equal(pe->pid, getpid());
	assert_true(pe->ts_ns >= te->ts_ns);

	struct ring_slot *slot = ring_shm_slot(f->shm, 0);
	assert_int_equal(atomic_load(&slot->state), RING_SLOT_EXITED);
	assert_int_equal(slot->pid, getpid());
	assert_int_equal(slot->tid, my_tid());
	assert_int_equal(atomic_load(&slot->depth), 0);
	assert_int_equal(atomic_load(&slot->dropped), 0);
	assert_int_equal(view_check_defined_before_use(&v, s, 0), 0);
	view_free(&v);
}

static void test_marks(void **state)
{
	struct fixture *f = *state;
	nvtxMarkA("a mark");
	nvtxMarkW(L"w mark");
	nvtxEventAttributes_t a = attr_ascii("ex mark", 5);
	nvtxMarkEx(&a);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_MARK), 3);
	static const char *names[] = {"a mark", "w mark", "ex mark"};
	uint64_t last = 0;
	for (int i = 0; i < 3; i++) {
		const struct ring_mark *m = view_find(s, RING_REC_MARK, (size_t)i);
		assert_name(&v, m->name_str, names[i]);
		assert_int_equal(m->h.aux, TRACE_EVF_MARK);
		assert_int_equal(m->domain_str, 0);
		assert_int_equal(m->category, i == 2 ? 5 : 0);
		assert_true(m->ts_ns >= last);
		last = m->ts_ns;
	}
	assert_int_equal(view_check_defined_before_use(&v, s, 0), 0);
	view_free(&v);
}

static void test_unbalanced_pop(void **state)
{
	struct fixture *f = *state;
	assert_true(nvtxRangePop() < 0);
	nvtxDomainHandle_t d = nvtxDomainCreateA("unbalanced-domain");
	assert_int_equal(nvtxRangePushA("kept"), 0);
	assert_true(nvtxDomainRangePop(d) < 0); /* "kept" is in another domain */
	assert_int_equal(atomic_load(&ring_shm_slot(f->shm, 0)->depth), 1);
	assert_int_equal(nvtxRangePop(), 0);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_POP_UNBALANCED), 2);
	const struct ring_mark *u0 = view_find(s, RING_REC_POP_UNBALANCED, 0);
	const struct ring_mark *u1 = view_find(s, RING_REC_POP_UNBALANCED, 1);
	assert_int_equal(u0->name_str, 0);
	assert_int_equal(u0->domain_str, 0);
	assert_int_equal(u0->h.aux, TRACE_EVF_UNBALANCED_POP);
	assert_int_equal(u1->name_str, 0);
	assert_name(&v, u1->domain_str, "unbalanced-domain");
	const struct ring_range *r = view_find(s, RING_REC_RANGE, 0);
	assert_name(&v, r->name_str, "kept");
	assert_int_equal(view_count(s, RING_REC_RANGE), 1);
	view_free(&v);
}

struct ender {
	nvtxRangeId_t id;
	uint32_t tid;
};

static void *end_range_thread(void *p)
{
	struct ender *e = p;
	e->tid = my_tid();
	nvtxRangeEnd(e->id);
	return NULL;
}

static void test_start_end_two_threads(void **state)
{
	struct fixture *f = *state;
	struct ender e = {nvtxRangeStartA("async"), 0};
	assert_int_not_equal(e.id, 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, end_range_thread, &e), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	nvtxEventAttributes_t a = attr_ascii("async2", 2);
	nvtxRangeId_t id2 = nvtxRangeStartEx(&a);
	assert_int_equal(id2, e.id + 1);
	nvtxRangeEnd(id2);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	const struct ring_range_start *rs = view_find(s, RING_REC_RANGE_START, 0);
	assert_non_null(rs);
	assert_int_equal(rs->id, e.id);
	assert_name(&v, rs->name_str, "async");
	assert_true(rs->h.aux & TRACE_EVF_START_END);
	const struct view_slot *ts = view_thread(&v, (uint32_t)getpid(), e.tid);
	assert_non_null(ts);
	assert_int_not_equal(ts->index, 0);
	const struct ring_range_end *re = view_find(ts, RING_REC_RANGE_END, 0);
	assert_non_null(re);
	assert_int_equal(re->id, e.id);
	assert_true(re->ts_ns >= rs->ts_ns);
	assert_int_equal(view_count(ts, RING_REC_RANGE_END), 1);

	const struct ring_range_start *rs2 = view_find(s, RING_REC_RANGE_START, 1);
	const struct ring_range_end *re2 = view_find(s, RING_REC_RANGE_END, 0);
	assert_int_equal(rs2->id, id2);
	assert_int_equal(rs2->category, 2);
	assert_name(&v, rs2->name_str, "async2");
	assert_int_equal(re2->id, id2);
	assert_true(re2->ts_ns >= rs2->ts_ns);
	view_free(&v);
}

static void test_wide_strings(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(nvtxRangePushW(L"wide \u00e9\u20ac\U0001D11E"), 0);
	assert_int_equal(nvtxRangePop(), 0);
	const wchar_t bad[] = {L'b', (wchar_t)0xd800, (wchar_t)0x110000, 0};
	nvtxMarkW(bad);
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	a.message.unicode = L"\u4e2d\u6587";
	nvtxRangePushEx(&a);
	nvtxRangePop();

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	const struct ring_range *r = view_find(s, RING_REC_RANGE, 0);
	assert_name(&v, r->name_str, "wide \xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e");
	const struct ring_mark *m = view_find(s, RING_REC_MARK, 0);
	assert_name(&v, m->name_str, "b\xef\xbf\xbd\xef\xbf\xbd");
	const struct ring_range *r2 = view_find(s, RING_REC_RANGE, 1);
	assert_name(&v, r2->name_str, "\xe4\xb8\xad\xe6\x96\x87");
	view_free(&v);
}

static void test_domains_and_registered_strings(void **state)
{
	struct fixture *f = *state;
	nvtxDomainHandle_t d = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
	assert_non_null(d);
	assert_ptr_equal(nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN), d);
	assert_ptr_equal(nvtxDomainCreateW(L"gprof-dl"), d);
	nvtxStringHandle_t step = nvtxDomainRegisterStringA(d, "step 1");
	nvtxStringHandle_t wreg = nvtxDomainRegisterStringW(d, L"wide reg");
	assert_non_null(step);
	assert_ptr_equal(nvtxDomainRegisterStringA(d, "step 1"), step);

	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = GPROF_DL_CAT_PROFILE_STEP;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = step;
	assert_int_equal(nvtxDomainRangePushEx(d, &a), 0);
	nvtxEventAttributes_t fwd = attr_ascii("forward", GPROF_DL_CAT_FORWARD);
	assert_int_equal(nvtxDomainRangePushEx(d, &fwd), 1);
	nvtxEventAttributes_t mk = a;
	mk.category = 0;
	mk.message.registered = wreg;
	nvtxDomainMarkEx(d, &mk);
	assert_int_equal(nvtxDomainRangePop(d), 1);
	assert_int_equal(nvtxDomainRangePop(d), 0);
	nvtxRangeId_t id = nvtxDomainRangeStartEx(d, &fwd);
	nvtxDomainRangeEnd(d, id);
	nvtxResourceAttributes_t ra = {0};
	nvtxResourceHandle_t res = nvtxDomainResourceCreate(d, &ra);
	assert_non_null(res);
	nvtxDomainResourceDestroy(res);
	nvtxDomainDestroy(d);
	nvtxInitialize(NULL);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	const struct ring_range *fr = view_find(s, RING_REC_RANGE, 0);
	const struct ring_step *sr = view_find(s, RING_REC_STEP, 0); /* the gprof-dl domain's step */
	assert_non_null(sr);
	assert_name(&v, fr->name_str, "forward");
	assert_name(&v, fr->domain_str, GPROF_DL_NVTX_DOMAIN);
	assert_int_equal(fr->category, GPROF_DL_CAT_FORWARD);
	assert_name(&v, sr->name_str, "step 1");
	assert_int_equal(sr->domain_str, fr->domain_str);
	assert_int_equal(sr->category, GPROF_DL_CAT_PROFILE_STEP);
	assert_true(sr->start_ns <= fr->start_ns && fr->end_ns <= sr->end_ns);
	const struct ring_mark *m = view_find(s, RING_REC_MARK, 0);
	assert_name(&v, m->name_str, "wide reg");
	assert_int_equal(m->domain_str, fr->domain_str);
	const struct ring_range_start *rs = view_find(s, RING_REC_RANGE_START, 0);
	assert_int_equal(rs->id, id);
	assert_int_equal(rs->domain_str, fr->domain_str);
	const struct ring_range_end *re = view_find(s, RING_REC_RANGE_END, 0);
	assert_int_equal(re->id, id);
	/* One STRING per text: the domain's name is written once, at its creation. */
	size_t domain_strings = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i]->kind == RING_REC_STRING && !strcmp((const char *)(s->r[i] + 1), GPROF_DL_NVTX_DOMAIN))
			domain_strings++;
	assert_int_equal(domain_strings, 1);
	assert_int_equal(view_check_defined_before_use(&v, s, 0), 0);
	view_free(&v);
}

static void test_domain_stacks_are_separate(void **state)
{
	struct fixture *f = *state;
	nvtxDomainHandle_t d = nvtxDomainCreateA("other");
	nvtxEventAttributes_t a = attr_ascii("in other", 0);
	assert_int_equal(nvtxDomainRangePushEx(d, &a), 0);
	assert_int_equal(nvtxRangePushA("in default"), 0); /* levels are per domain */
	assert_int_equal(nvtxDomainRangePushEx(d, &a), 1);
	assert_int_equal(nvtxDomainRangePop(d), 1);
	assert_int_equal(nvtxDomainRangePop(d), 0); /* ends "in other", under "in default" */
	struct ring_slot *slot = ring_shm_slot(f->shm, 0);
	assert_int_equal(atomic_load(&slot->depth), 1);
	uint32_t default_name = slot->stack[0].name_str;
	assert_int_equal(slot->stack[0].domain_str, 0);
	assert_int_equal(nvtxRangePop(), 0);
	assert_int_equal(atomic_load(&slot->depth), 0);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_RANGE), 3);
	const struct ring_range *r0 = view_find(s, RING_REC_RANGE, 0);
	const struct ring_range *r1 = view_find(s, RING_REC_RANGE, 1);
	const struct ring_range *r2 = view_find(s, RING_REC_RANGE, 2);
	assert_name(&v, r0->name_str, "in other");
	assert_name(&v, r1->name_str, "in other");
	assert_name(&v, r1->domain_str, "other");
	assert_true(r1->start_ns < r0->start_ns);
	assert_name(&v, r2->name_str, "in default");
	assert_int_equal(r2->name_str, default_name);
	assert_int_equal(r2->domain_str, 0);
	assert_int_equal(view_count(s, RING_REC_POP_UNBALANCED), 0);
	view_free(&v);
}

static void test_category_names(void **state)
{
	struct fixture *f = *state;
	nvtxDomainHandle_t d = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
	nvtxNameCategoryA(11, "eleven");
	nvtxNameCategoryW(12, L"twelve");
	nvtxDomainNameCategoryA(d, GPROF_DL_CAT_FORWARD, "Forward");
	nvtxDomainNameCategoryW(d, GPROF_DL_CAT_BACKWARD, L"Backward");

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_CATEGORY), 4);
	static const struct {
		uint32_t cat;
		const char *name;
		int in_domain;
	} want[] = {{11, "eleven", 0}, {12, "twelve", 0}, {GPROF_DL_CAT_FORWARD, "Forward", 1},
		    {GPROF_DL_CAT_BACKWARD, "Backward", 1}};
	for (size_t i = 0; i < 4; i++) {
		const struct ring_category *c = view_find(s, RING_REC_CATEGORY, i);
		assert_int_equal(c->category, want[i].cat);
		assert_name(&v, c->name_str, want[i].name);
		if (want[i].in_domain)
			assert_name(&v, c->domain_str, GPROF_DL_NVTX_DOMAIN);
		else
			assert_int_equal(c->domain_str, 0);
	}
	assert_int_equal(view_check_defined_before_use(&v, s, 0), 0);
	view_free(&v);
}

static void test_truncated_names(void **state)
{
	struct fixture *f = *state;
	static char big[3000], exact[RING_NAME_MAX + 1], straddle[RING_NAME_MAX + 8];
	static wchar_t wbig[2000];
	memset(big, 'x', sizeof(big) - 1);
	memset(exact, 'e', RING_NAME_MAX);
	memset(straddle, 'a', RING_NAME_MAX - 1);
	memcpy(straddle + RING_NAME_MAX - 1, "\xc3\xa9tail", 7); /* é at bytes 1023-1024 */
	for (size_t i = 0; i + 1 < sizeof(wbig) / sizeof(wbig[0]); i++)
		wbig[i] = L'y';

	nvtxRangePushA(big);
	nvtxRangePop();
	nvtxRangePushA(big); /* the same cut name: from the cache, flagged again */
	nvtxRangePop();
	nvtxMarkA(exact);
	nvtxMarkA(straddle);
	nvtxMarkW(wbig);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	const struct ring_range *r0 = view_find(s, RING_REC_RANGE, 0);
	const struct ring_range *r1 = view_find(s, RING_REC_RANGE, 1);
	assert_int_equal(r0->h.aux, TRACE_EVF_NAME_TRUNCATED);
	assert_int_equal(r1->h.aux, TRACE_EVF_NAME_TRUNCATED);
	assert_int_equal(r0->name_str, r1->name_str);
	const char *cut = view_str(&v, r0->name_str);
	assert_int_equal(strlen(cut), RING_NAME_MAX);
	assert_int_equal(strspn(cut, "x"), RING_NAME_MAX);

	const struct ring_mark *m_exact = view_find(s, RING_REC_MARK, 0);
	const struct ring_mark *m_straddle = view_find(s, RING_REC_MARK, 1);
	const struct ring_mark *m_wide = view_find(s, RING_REC_MARK, 2);
	assert_int_equal(m_exact->h.aux, TRACE_EVF_MARK);
	assert_name(&v, m_exact->name_str, exact);
	assert_int_equal(m_straddle->h.aux, TRACE_EVF_MARK | TRACE_EVF_NAME_TRUNCATED);
	assert_int_equal(strlen(view_str(&v, m_straddle->name_str)), RING_NAME_MAX - 1);
	assert_int_equal(m_wide->h.aux, TRACE_EVF_MARK | TRACE_EVF_NAME_TRUNCATED);
	assert_int_equal(strlen(view_str(&v, m_wide->name_str)), RING_NAME_MAX);

	/* A STRING record is never longer than a name may be. */
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i]->kind == RING_REC_STRING)
			assert_true(s->r[i]->size <= ring_rec_align(sizeof(struct ring_rec) + RING_NAME_MAX + 1));
	view_free(&v);
}

static void test_string_written_before_use_and_once(void **state)
{
	struct fixture *f = *state;
	char name[32];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 50; i++) {
			snprintf(name, sizeof(name), "name-%d", i);
			nvtxRangePushA(name); /* a buffer the program reuses: cached by content */
			nvtxRangePop();
		}
	}
	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_RANGE), 150);
	for (int i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "name-%d", i);
		size_t defs = 0;
		for (size_t k = 0; k < s->n; k++)
			if (s->r[k]->kind == RING_REC_STRING && !strcmp((const char *)(s->r[k] + 1), name))
				defs++;
		assert_int_equal(defs, 1);
		const struct ring_range *r = view_find(s, RING_REC_RANGE, (size_t)(100 + i));
		assert_name(&v, r->name_str, name);
	}
	assert_int_equal(view_check_defined_before_use(&v, s, 0), 0);
	view_free(&v);
}

struct worker {
	uint32_t tid;
	int use_exit;
	int nvtx_named; /* names itself through NVTX, not the kernel */
};

static void *worker_thread(void *p)
{
	struct worker *w = p;
	w->tid = my_tid();
	if (w->nvtx_named)
		nvtxNameOsThreadA(w->tid, "nvtx-named");
	else
		pthread_setname_np(pthread_self(), w->use_exit ? "exiter" : "worker-7");
	nvtxRangePushA(w->use_exit ? "left open" : "work");
	if (w->use_exit)
		pthread_exit(NULL);
	nvtxRangePop();
	return NULL;
}

static void check_thread_slot(struct fixture *f, const struct view *v, const struct worker *w)
{
	const struct view_slot *ts = view_thread(v, (uint32_t)getpid(), w->tid);
	assert_non_null(ts);
	struct ring_slot *slot = ring_shm_slot(f->shm, ts->index);
	assert_int_equal(atomic_load(&slot->state), RING_SLOT_EXITED);
	assert_int_equal(slot->tid, w->tid);
	/* One name: the NVTX one is not overwritten by the kernel's at the end. */
	assert_int_equal(view_count(ts, RING_REC_THREAD_NAME), 1);
	const struct ring_thread_name *tn = view_find(ts, RING_REC_THREAD_NAME, 0);
	assert_int_equal(tn->tid, w->tid);
	assert_name(v, tn->name_str, w->nvtx_named ? "nvtx-named" : w->use_exit ? "exiter" : "worker-7");
	const struct ring_thread *start = view_find(ts, RING_REC_THREAD_START, 0);
	const struct ring_thread *end = view_find(ts, RING_REC_THREAD_END, 0);
	assert_non_null(end);
	assert_true(end->ts_ns >= start->ts_ns);
	assert_int_equal(ts->r[0]->kind, RING_REC_THREAD_START);
	assert_int_equal(ts->r[ts->n - 1]->kind, RING_REC_THREAD_END);
	if (w->use_exit) {
		/* pthread_exit with a range open: the mirror keeps it for the launcher */
		assert_int_equal(view_count(ts, RING_REC_RANGE), 0);
		assert_int_equal(atomic_load(&slot->depth), 1);
		assert_name(v, slot->stack[0].name_str, "left open");
		assert_true(slot->stack[0].start_ns >= start->ts_ns);
	} else {
		const struct ring_range *r = view_find(ts, RING_REC_RANGE, 0);
		assert_name(v, r->name_str, "work");
		assert_int_equal(atomic_load(&slot->depth), 0);
	}
	assert_int_equal(view_check_defined_before_use(v, ts, 0), 0);
}

static void test_threads(void **state)
{
	struct fixture *f = *state;
	struct worker w[3] = {{0, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker_thread, &w[i]), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	nvtxNameOsThreadA(w[0].tid, "renamed");
	nvtxNameOsThreadW(w[1].tid, L"renamed-w");

	struct view v;
	view_load(&v, f->shm);
	for (int i = 0; i < 3; i++)
		check_thread_slot(f, &v, &w[i]);
	const struct view_slot *s = &v.slot[0];
	const struct ring_thread_name *n0 = view_find(s, RING_REC_THREAD_NAME, 0);
	const struct ring_thread_name *n1 = view_find(s, RING_REC_THREAD_NAME, 1);
	assert_int_equal(n0->tid, w[0].tid);
	assert_name(&v, n0->name_str, "renamed");
	assert_int_equal(n1->tid, w[1].tid);
	assert_name(&v, n1->name_str, "renamed-w");
	view_free(&v);
}

static void test_fork_child(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(nvtxRangePushA("around fork"), 0);
	pid_t parent = getpid();
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* Levels go on from the parent's stack; the mirror starts empty. */
		struct ring_slot *mine = NULL;
		for (uint32_t i = 0; i < f->shm->nslots; i++)
			if (ring_shm_slot(f->shm, i)->pid == (uint32_t)getpid())
				mine = ring_shm_slot(f->shm, i);
		int ok = mine && atomic_load(&mine->depth) == 0;
		ok = ok && nvtxRangePushA("child work") == 1 && atomic_load(&mine->depth) == 1;
		ok = ok && nvtxRangePop() == 1 && nvtxRangePop() == 0 && atomic_load(&mine->depth) == 0;
		ok = ok && nvtxRangePop() < 0; /* now nothing is left */
		_exit(ok ? 3 : 4);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);
	assert_int_equal(nvtxRangePop(), 0);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *ps = &v.slot[0];
	const struct view_slot *cs = view_thread(&v, (uint32_t)child, (uint32_t)child);
	assert_non_null(cs);
	assert_int_not_equal(cs->index, 0);
	/* The child pops "around fork" too, but that range is its parent's: the
	 * child records only its own. */
	static const uint16_t kinds[] = {
		RING_REC_PROCESS_START, RING_REC_THREAD_START, RING_REC_STRING, RING_REC_RANGE,
		RING_REC_POP_UNBALANCED, RING_REC_STRING, RING_REC_THREAD_NAME, RING_REC_THREAD_END,
		RING_REC_PROCESS_EXIT,
	};
	assert_kinds(cs, kinds, sizeof(kinds) / sizeof(kinds[0]));
	const struct ring_process *pst = view_find(cs, RING_REC_PROCESS_START, 0);
	const struct ring_process *parent_start = view_find(ps, RING_REC_PROCESS_START, 0);
	assert_int_equal(pst->pid, child);
	assert_int_equal(pst->ppid, parent);
	assert_int_equal(pst->cmdline_str, parent_start->cmdline_str); /* ids are global */
	const struct ring_range *work = view_find(cs, RING_REC_RANGE, 0);
	const struct ring_range *around = view_find(ps, RING_REC_RANGE, 0);
	assert_name(&v, work->name_str, "child work");
	assert_name(&v, around->name_str, "around fork");
	assert_true(around->start_ns < pst->ts_ns && pst->ts_ns < around->end_ns);
	assert_int_equal(view_count(ps, RING_REC_RANGE), 1);
	const struct ring_process *pex = view_find(cs, RING_REC_PROCESS_EXIT, 0);
	assert_int_equal(pex->pid, child);
	assert_int_equal(pex->h.aux, RING_EXIT_KNOWN | 3);
	assert_int_equal(atomic_load(&ring_shm_slot(f->shm, cs->index)->state), RING_SLOT_EXITED);
	assert_int_equal(view_check_defined_before_use(&v, cs, 1), 0);
	view_free(&v);
}

static void test_full_ring_counts_drops(void **state)
{
	struct fixture *f = *state;
	struct ring_slot *slot = ring_shm_slot(f->shm, 0);
	enum { PAIRS = 200 };
	for (int i = 0; i < PAIRS; i++) {
		nvtxRangePushA("r");
		nvtxRangePop();
	}
	uint64_t dropped = atomic_load(&slot->dropped);
	struct view v;
	view_load(&v, f->shm);
	size_t written = view_count(&v.slot[0], RING_REC_RANGE);
	assert_true(dropped > 0);
	assert_true(written > 0);
	assert_int_equal(written + dropped, PAIRS);
	view_free(&v);

	/* Drained: records fit again. */
	nvtxRangePushA("after");
	nvtxRangePop();
	assert_int_equal(atomic_load(&slot->dropped), dropped);
	view_load(&v, f->shm);
	const struct ring_range *r = view_find(&v.slot[0], RING_REC_RANGE, 0);
	assert_non_null(r);
	assert_name(&v, r->name_str, "after");
	view_free(&v);
}

static void test_stack_mirror(void **state)
{
	struct fixture *f = *state;
	struct ring_slot *slot = ring_shm_slot(f->shm, 0);
	nvtxRangePushA("m0");
	nvtxEventAttributes_t a = attr_ascii("m1", 6);
	nvtxRangePushEx(&a);
	nvtxRangePushA("m2");
	assert_int_equal(atomic_load(&slot->depth), 3);
	struct view v;
	view_load(&v, f->shm);
	static const char *names[] = {"m0", "m1", "m2"};
	for (int i = 0; i < 3; i++) {
		assert_name(&v, slot->stack[i].name_str, names[i]);
		assert_int_equal(slot->stack[i].category, i == 1 ? 6 : 0);
		assert_int_equal(slot->stack[i].domain_str, 0);
		if (i)
			assert_true(slot->stack[i].start_ns >= slot->stack[i - 1].start_ns);
	}
	view_free(&v);
	assert_int_equal(nvtxRangePop(), 2);
	assert_int_equal(atomic_load(&slot->depth), 2);

	/* Deeper than the mirror, and deeper than the collector keeps. */
	enum { DEEP = COLL_STACK_MAX + 4 };
	for (int i = 2; i < DEEP; i++)
		assert_int_equal(nvtxRangePushA("deep"), i);
	assert_int_equal(atomic_load(&slot->depth), RING_STACK_MAX);
	uint64_t dropped = atomic_load(&slot->dropped);
	assert_int_equal(dropped, DEEP - COLL_STACK_MAX);
	for (int i = DEEP - 1; i >= 0; i--)
		assert_int_equal(nvtxRangePop(), i);
	assert_int_equal(atomic_load(&slot->depth), 0);
	assert_int_equal(atomic_load(&slot->dropped), 2 * (DEEP - COLL_STACK_MAX));
	view_load(&v, f->shm);
	assert_int_equal(view_count(&v.slot[0], RING_REC_RANGE), COLL_STACK_MAX + 1);
	assert_int_equal(view_count(&v.slot[0], RING_REC_POP_UNBALANCED), 0);
	view_free(&v);
}

static void test_busy_thread_drops(void **state)
{
	struct fixture *f = *state;
	struct ring_slot *slot = ring_shm_slot(f->shm, 0);
	struct view v;
	view_load(&v, f->shm);
	view_free(&v);
	coll_busy = 1; /* as if a signal arrived in the middle of a ring write */
	assert_true(nvtxRangePushA("in handler") < 0);
	assert_true(nvtxRangePop() < 0);
	nvtxMarkA("in handler");
	coll_busy = 0;
	assert_int_equal(atomic_load(&slot->dropped), 3);
	assert_int_equal(atomic_load(&slot->depth), 0);
	view_load(&v, f->shm);
	assert_int_equal(v.slot[0].n, 0);
	view_free(&v);
}

static volatile sig_atomic_t handler_pairs;

static void nvtx_in_handler(int sig)
{
	(void)sig;
	int saved = errno;
	nvtxRangePushA("signal");
	nvtxMarkA("signal mark");
	nvtxRangePop();
	handler_pairs++;
	errno = saved;
}

/* Names are written once: their ids are learnt as their STRING records pass. */
static uint32_t main_id, signal_id;

static void check_records_sane(const struct view_slot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct ring_rec *h = s->r[i];
		assert_true(h->kind > RING_REC_PAD && h->kind < RING_REC_KIND_COUNT);
		assert_int_equal(h->size & 7u, 0);
		assert_int_not_equal(h->kind, RING_REC_POP_UNBALANCED);
		if (h->kind == RING_REC_STRING && !strcmp((const char *)(h + 1), "main"))
			main_id = h->aux;
		if (h->kind == RING_REC_STRING && !strcmp((const char *)(h + 1), "signal"))
			signal_id = h->aux;
		if (h->kind == RING_REC_RANGE) {
			const struct ring_range *r = (const void *)h;
			assert_true(r->start_ns <= r->end_ns);
			assert_true(r->name_str == main_id || r->name_str == signal_id);
			assert_int_not_equal(r->name_str, 0);
		}
	}
}

static void test_signal_handler_reentrancy(void **state)
{
	struct fixture *f = *state;
	struct sigaction sa = {0}, old;
	sa.sa_handler = nvtx_in_handler;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	struct itimerval it = {{0, 20}, {0, 20}};
	handler_pairs = 0;
	main_id = signal_id = 0;
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	struct view v;
	for (int round = 0; round < 40 || handler_pairs < 10; round++) {
		for (int i = 0; i < 2000; i++) {
			nvtxRangePushA("main");
			nvtxRangePop();
		}
		view_load(&v, f->shm);
		check_records_sane(&v.slot[0]);
		view_free(&v);
		if (round > 4000)
			break;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	assert_true(handler_pairs >= 10);
	assert_int_not_equal(signal_id, 0);
	assert_int_equal(atomic_load(&ring_shm_slot(f->shm, 0)->depth), 0);
	view_load(&v, f->shm);
	check_records_sane(&v.slot[0]);
	view_free(&v);
}

struct slotless {
	int push, pop;
};

static void *slotless_thread(void *p)
{
	struct slotless *s = p;
	s->push = nvtxRangePushA("unseen");
	s->pop = nvtxRangePop();
	nvtxMarkA("unseen mark");
	nvtxRangeEnd(nvtxRangeStartA("unseen start"));
	return NULL;
}

static void test_every_slot_taken(void **state)
{
	struct fixture *f = *state;
	struct slotless s = {-5, -5};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, slotless_thread, &s), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(s.push, 0);
	assert_int_equal(s.pop, 0);
	assert_int_equal(atomic_load(&f->shm->no_slot_threads), 1);
	assert_int_equal(atomic_load(&f->shm->no_slot_events), 4);
}

struct late {
	int fd[2]; /* the thread waits for a byte: the collector is attached by then */
	uint32_t tid;
};

static void *late_thread(void *p)
{
	struct late *l = p;
	char c;
	l->tid = my_tid();
	if (read(l->fd[0], &c, 1) != 1)
		return NULL;
	nvtxRangePushA("late");
	nvtxRangePop();
	return NULL;
}

static int setup_none(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->shm = test_ring_new(4, 1u << 16, &f->len);
	*state = f;
	return 0;
}

/* A thread the collector did not see start (created while it was inert, or
 * before it was loaded) is set up at its first event and still ended; its
 * name is written when it is first seen (it may have one already), and not
 * again at its end when it has not changed. */
static void test_thread_seen_first_at_its_first_event(void **state)
{
	struct fixture *f = *state;
	struct late l = {{-1, -1}, 0};
	assert_int_equal(pipe(l.fd), 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, late_thread, &l), 0);
	assert_int_equal(collector_test_attach(f->shm, f->len), 0);
	assert_int_equal(write(l.fd[1], "x", 1), 1);
	assert_int_equal(pthread_join(th, NULL), 0);
	close(l.fd[0]);
	close(l.fd[1]);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *ts = view_thread(&v, (uint32_t)getpid(), l.tid);
	assert_non_null(ts);
	static const uint16_t kinds[] = {
		RING_REC_THREAD_START, RING_REC_STRING, RING_REC_THREAD_NAME,
		RING_REC_STRING, RING_REC_RANGE, RING_REC_THREAD_END,
	};
	assert_kinds(ts, kinds, sizeof(kinds) / sizeof(kinds[0]));
	assert_int_equal(atomic_load(&ring_shm_slot(f->shm, ts->index)->state), RING_SLOT_EXITED);
	view_free(&v);
}

/* ---- a second NVTX instance, made by hand ---------------------------------- */

static NvtxFunctionPointer fake_core[NVTX_CBID_CORE_SIZE], fake_core2[NVTX_CBID_CORE2_SIZE];
static NvtxFunctionPointer *fake_core_tab[NVTX_CBID_CORE_SIZE + 1], *fake_core2_tab[NVTX_CBID_CORE2_SIZE + 1];
static uint32_t fake_version_set;
static int fake_no_core2; /* an old NVTX, without domains */

static int NVTX_API fake_module_table(NvtxCallbackModule m, NvtxFunctionTable *out, unsigned int *size)
{
	if (m == NVTX_CB_MODULE_CORE) {
		*out = fake_core_tab;
		*size = NVTX_CBID_CORE_SIZE;
	} else if (m == NVTX_CB_MODULE_CORE2 && !fake_no_core2) {
		*out = fake_core2_tab;
		*size = NVTX_CBID_CORE2_SIZE;
	} else {
		return 0;
	}
	return 1;
}

static void NVTX_API fake_set_version(uint32_t v)
{
	fake_version_set = v;
}

static const NvtxExportTableCallbacks fake_callbacks = {sizeof(NvtxExportTableCallbacks), fake_module_table};
static const NvtxExportTableVersionInfo fake_version = {sizeof(NvtxExportTableVersionInfo), NVTX_VERSION, 0,
							  fake_set_version};

static const void *NVTX_API fake_get_export_table(uint32_t id)
{
	if (id == NVTX_ETID_CALLBACKS)
		return &fake_callbacks;
	if (id == NVTX_ETID_VERSIONINFO)
		return &fake_version;
	return NULL;
}

static void fake_reset(void)
{
	memset(fake_core, 0, sizeof(fake_core));
	memset(fake_core2, 0, sizeof(fake_core2));
	for (int i = 1; i < NVTX_CBID_CORE_SIZE; i++)
		fake_core_tab[i] = &fake_core[i];
	for (int i = 1; i < NVTX_CBID_CORE2_SIZE; i++)
		fake_core2_tab[i] = &fake_core2[i];
	fake_version_set = 0;
	fake_no_core2 = 0;
}

static void test_second_nvtx_instance(void **state)
{
	struct fixture *f = *state;
	fake_reset();
	assert_int_equal(InitializeInjectionNvtx2(fake_get_export_table), 1);
	assert_int_equal(fake_version_set, NVTX_VERSION);
	for (int i = 1; i < NVTX_CBID_CORE_SIZE; i++)
		assert_non_null(fake_core[i]);
	for (int i = 1; i < NVTX_CBID_CORE2_SIZE; i++)
		assert_non_null(fake_core2[i]);

	/* Both instances share one push stack and one set of domains. */
	nvtxRangePushA("from the program");
	assert_int_equal(((nvtxRangePushA_impl_fntype)fake_core[NVTX_CBID_CORE_RangePushA])("from a library"), 1);
	nvtxDomainHandle_t d = ((nvtxDomainCreateA_impl_fntype)fake_core2[NVTX_CBID_CORE2_DomainCreateA])("shared");
	assert_ptr_equal(nvtxDomainCreateA("shared"), d);
	assert_int_equal(nvtxRangePop(), 1);
	assert_int_equal(((nvtxRangePop_impl_fntype)fake_core[NVTX_CBID_CORE_RangePop])(), 0);

	struct view v;
	view_load(&v, f->shm);
	assert_name(&v, ((const struct ring_range *)view_find(&v.slot[0], RING_REC_RANGE, 0))->name_str,
		    "from a library");
	assert_name(&v, ((const struct ring_range *)view_find(&v.slot[0], RING_REC_RANGE, 1))->name_str,
		    "from the program");
	view_free(&v);

	/* An NVTX without the CORE2 module still gets CORE. */
	fake_reset();
	fake_no_core2 = 1;
	assert_int_equal(InitializeInjectionNvtx2(fake_get_export_table), 1);
	assert_non_null(fake_core[NVTX_CBID_CORE_RangePushA]);
	assert_null(fake_core2[NVTX_CBID_CORE2_DomainCreateA]);

	/* Inert, the collector refuses an instance and leaves its table alone. */
	collector_test_detach();
	fake_reset();
	assert_int_equal(InitializeInjectionNvtx2(fake_get_export_table), 0);
	for (int i = 1; i < NVTX_CBID_CORE_SIZE; i++)
		assert_null(fake_core[i]);
	assert_int_equal(fake_version_set, 0);
}

static void test_errno_preserved(void **state)
{
	(void)state;
	errno = 4242;
	nvtxRangePushA("errno");
	nvtxMarkA("errno");
	nvtxRangePop();
	nvtxRangePop();
	nvtxDomainHandle_t d = nvtxDomainCreateA("errno domain");
	nvtxDomainRegisterStringA(d, "errno string");
	nvtxNameOsThreadA(my_tid(), "errno");
	assert_int_equal(errno, 4242);
}

/* ---- string ids, a block per thread ----------------------------------------- */

#define NAMES_PER_THREAD 50

static void define_names(const char *prefix)
{
	for (int i = 0; i < NAMES_PER_THREAD; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s %d", prefix, i);
		nvtxRangePushA(name);
		nvtxRangePop();
	}
}

static void *names_thread(void *p)
{
	define_names(p);
	return NULL;
}

/* Threads take string ids a block at a time: every id is defined once,
 * whichever thread or process defined it (a fork child takes blocks of its
 * own, not the rest of its parent's), and every range's name is its own. */
static void test_string_ids_unique(void **state)
{
	struct fixture *f = *state;
	define_names("main");
	pthread_t th[2];
	char *prefix[2] = {"one", "two"};
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, names_thread, prefix[i]), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		define_names("child");
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	define_names("parent");

	struct view v;
	view_load(&v, f->shm);
	static unsigned defined[VIEW_MAX_STRINGS];
	memset(defined, 0, sizeof(defined));
	unsigned twice = 0, ranges = 0, named = 0;
	for (uint32_t k = 0; k < v.nslots; k++) {
		const struct view_slot *s = &v.slot[k];
		for (size_t j = 0; j < s->n; j++) {
			const struct ring_rec *h = s->r[j];
			if (h->kind == RING_REC_STRING && h->aux < VIEW_MAX_STRINGS)
				twice += defined[h->aux]++ == 1;
			if (h->kind != RING_REC_RANGE)
				continue;
			const struct ring_range *x = (const void *)h;
			const char *name = view_str(&v, x->name_str);
			int i;
			char prefix[16];
			ranges++;
			named += name && sscanf(name, "%15s %d", prefix, &i) == 2 && i >= 0 && i < NAMES_PER_THREAD;
		}
	}
	assert_int_equal(twice, 0);
	assert_int_equal(ranges, 5 * NAMES_PER_THREAD);
	assert_int_equal(named, 5 * NAMES_PER_THREAD);
	view_free(&v);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	/* NVTX must find the collector linked in, not one named in the environment. */
	unsetenv("NVTX_INJECTION64_PATH");
	unsetenv(RING_ENV);
	const struct CMUnitTest tests[] = {
		T(test_process_and_nesting),
		T(test_marks),
		T(test_unbalanced_pop),
		T(test_start_end_two_threads),
		T(test_wide_strings),
		T(test_domains_and_registered_strings),
		T(test_domain_stacks_are_separate),
		T(test_category_names),
		T(test_truncated_names),
		T(test_string_written_before_use_and_once),
		T(test_threads),
		T(test_fork_child),
		T(test_string_ids_unique),
		cmocka_unit_test_setup_teardown(test_full_ring_counts_drops, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_stack_mirror, setup_big, teardown),
		T(test_busy_thread_drops),
		cmocka_unit_test_setup_teardown(test_signal_handler_reentrancy, setup_big, teardown_timer),
		cmocka_unit_test_setup_teardown(test_every_slot_taken, setup_one_slot, teardown),
		cmocka_unit_test_setup_teardown(test_thread_seen_first_at_its_first_event, setup_none, teardown),
		T(test_second_nvtx_instance),
		T(test_errno_preserved),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !GPDL_HAVE_NVTX */

int main(void)
{
	return records_skip_without_nvtx();
}

#endif
