/*
 * window.c - the recording window: when the collector records full detail.
 *
 * `gprof-dl run` says what it wants through the environment, read once per
 * process image (a fork child keeps its parent's window, an exec'd program
 * reads it again):
 *
 *   GPROF_DL_TIMER_ONLY=1     detail never (steps and Dataloader only)
 *   GPROF_DL_STEPS=A:B        detail while the current step n has A <= n < B
 *                             (B empty: no end); before the first step, none
 *   GPROF_DL_T0_NS=T          the launch, CLOCK_MONOTONIC ns (default: now)
 *   GPROF_DL_DELAY_NS=D       detail from T + D ...
 *   GPROF_DL_DURATION_NS=L    ... until T + D + L (absent: no end)
 *   GPROF_DL_PAUSED=1         detail off until start()
 *   GPROF_DL_SCHEDULE=W,U,A,R,S  detail in the active steps of
 *                             torch.profiler.schedule(wait=W, warmup=U,
 *                             active=A, repeat=R, skip_first=S); warmup steps
 *                             record nothing, as wait steps do (the collector
 *                             has nothing to warm: its strings are interned
 *                             as they come)
 *   GPROF_DL_CAPTURE=cudaProfilerApi|nvtx  detail only inside the capture
 *                             range: between cudaProfilerStart and Stop, or
 *                             inside the NVTX range GPROF_DL_NVTX_CAPTURE
 *                             names (NAME, NAME@DOMAIN, NAME@*); the first
 *                             such range only, as nsys, unless
 *                             GPROF_DL_CAPTURE_END=repeat
 *   GPROF_DL_RECORD_SHAPES=1, GPROF_DL_NO_PYTHON=1: reported by options() only
 *
 * detail = !timer_only && !paused && step window && time window. It is
 * process-wide: one atomic word of reasons to be off (coll_win.state), so that
 * a push with no window at all pays one load. The time reason follows the
 * clock: it is brought up to date by every event (which reads the clock
 * anyway) and by now(), step(), start() and stop(). coll_win.detail mirrors the state
 * for readers of gprof_dl_api.detail.
 *
 * The window asked for is said in the trace: a gprof-dl domain mark
 * "window: SPEC" at process start (a schedule, a capture range, else --steps
 * or --delay/--duration), "ProfilerCycle#N" (schedule) or
 * "Capture#N" (capture) when the window opens, "window off" when it closes
 * (lib/analysis/capture.c reads them back). Their changes are also kept
 * (coll_win.hist) so that GPU records, handed over by CUPTI later, are
 * written only when their start fell inside.
 */
#include "lib/collector/collector.h"
#include "lib/collector/gprof-dl-api.h"
#include "lib/collector/gprof-dl-nvtx.h"
#include "formats/trace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct coll_window coll_win = {.detail = 1};

/* Rewrites detail from state until no change raced the write. */
static void publish(void)
{
	uint32_t s;
	do {
		s = atomic_load_explicit(&coll_win.state, memory_order_acquire);
		coll_win.detail = !(s & COLL_WIN_OFF_MASK);
	} while (atomic_load_explicit(&coll_win.state, memory_order_acquire) != s);
}

/* Sets (on) or clears the bits in mask; the state after. */
static uint32_t set_bits(uint32_t mask, int on)
{
	uint32_t s;
	if (on)
		s = atomic_fetch_or_explicit(&coll_win.state, mask, memory_order_acq_rel) | mask;
	else
		s = atomic_fetch_and_explicit(&coll_win.state, ~mask, memory_order_acq_rel) & ~mask;
	publish();
	return s;
}

uint32_t coll_window_refresh(uint32_t state, uint64_t now)
{
	int out = now < coll_win.t_begin || now >= coll_win.t_end;
	if (!!(state & COLL_WIN_OFF_TIME) == out)
		return state;
	return set_bits(COLL_WIN_OFF_TIME, out);
}

void coll_window_refresh_now(uint64_t now)
{
	uint32_t s = coll_window_state();
	if (s & COLL_WIN_HAS_TIME)
		coll_window_refresh(s, now);
}

/* ---- the trace's marks and the window's history ---------------------------- */

/* A gprof-dl domain mark (category 0), recorded whatever the window. The
 * callers are the collector's own (an NVTX push under coll_busy, a step,
 * CUPTI's callback), never a signal handler in the middle of a record, so
 * that writing here while coll_busy is already set interleaves nothing. */
static void window_mark(const char *text, uint64_t now)
{
	struct coll_thread *t = coll_thread();
	struct coll_str *gpdl = coll_gpdl_domain();
	if (!gpdl) {
		struct coll_name n = {COLL_NAME_ASCII, GPROF_DL_NVTX_DOMAIN};
		gpdl = coll_str_register(COLL_DOMAIN_MAGIC, &n);
	}
	if (!t || !gpdl || !t->slot)
		return;
	int was = coll_busy;
	coll_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	uint32_t dom = coll_str_id(t, gpdl);
	uint32_t name = coll_intern(t, text, strlen(text));
	if (dom && name) {
		struct ring_mark m = {
			.h = {RING_REC_MARK, sizeof(m), TRACE_EVF_MARK},
			.ts_ns = now,
			.name_str = name,
			.domain_str = dom,
			.category = 0,
		};
		coll_emit(t, &m);
	}
	atomic_signal_fence(memory_order_seq_cst);
	coll_busy = was;
}

/* The tracked reasons: the capture's bit, and the step bit of a schedule. */
static uint32_t tracked_mask(void)
{
	return COLL_WIN_OFF_CAPTURE | (coll_win.has_schedule ? COLL_WIN_OFF_STEP : 0);
}

/* The window opened (name: the mark) or closed at now, if it changed. */
static void note(uint32_t state, uint64_t now, const char *name)
{
	int open = !(state & tracked_mask());
	if (!coll_win.tracked || atomic_exchange(&coll_win.open, open) == open)
		return;
	uint32_t i = atomic_fetch_add(&coll_win.nhist, 1) % COLL_WIN_HISTORY; /* a ring: the newest */
	coll_win.hist[i].ts = now;
	coll_win.hist[i].open = open;
	window_mark(open ? name : "window off", now);
}

int coll_window_open_at(uint64_t ts)
{
	if (!coll_win.tracked)
		return 1;
	uint32_t n = atomic_load(&coll_win.nhist);
	uint32_t kept = n < COLL_WIN_HISTORY ? n : COLL_WIN_HISTORY;
	/* nearly always the newest changes: from the end; a record older than
	 * every change kept takes the state before the oldest kept (changes
	 * alternate; a run of thousands of cycles: CUPTI hands records over
	 * within seconds, not cycles) */
	for (uint32_t k = 0; k < kept; k++) {
		uint32_t i = (n - 1 - k) % COLL_WIN_HISTORY;
		if (coll_win.hist[i].ts <= ts)
			return coll_win.hist[i].open;
	}
	return n > COLL_WIN_HISTORY ? !coll_win.hist[n % COLL_WIN_HISTORY].open : coll_win.open0;
}

/* torch.profiler.schedule's action for step n: 0 none (wait, past the
 * repeats, skipped), 1 warmup, 2 active; its cycle in *cycle. */
static int schedule_phase(uint64_t n, uint64_t *cycle)
{
	if (n < coll_win.sched_skip)
		return 0;
	n -= coll_win.sched_skip;
	uint64_t len = coll_win.sched_wait + coll_win.sched_warmup + coll_win.sched_active;
	uint64_t c = n / len, m = n % len;
	*cycle = c;
	if (coll_win.sched_repeat && c >= coll_win.sched_repeat)
		return 0;
	if (m < coll_win.sched_wait)
		return 0;
	return m < coll_win.sched_wait + coll_win.sched_warmup ? 1 : 2;
}

void coll_window_step(uint64_t n, uint64_t now)
{
	if (coll_win.has_steps)
		set_bits(COLL_WIN_OFF_STEP, n < coll_win.step_a || n >= coll_win.step_b);
	if (coll_win.has_schedule) {
		uint64_t cycle = 0;
		int active = schedule_phase(n, &cycle) == 2;
		uint32_t s = set_bits(COLL_WIN_OFF_STEP, !active);
		char name[48];
		snprintf(name, sizeof(name), "ProfilerCycle#%llu", (unsigned long long)cycle);
		note(s, now, name);
	}
	coll_window_refresh_now(now);
}

void coll_window_capture(int on, uint64_t now)
{
	if (!coll_win.capture)
		return;
	uint32_t s;
	char name[48];
	if (on) {
		if (atomic_load(&coll_win.capture_done) ||
		    !(coll_window_state() & COLL_WIN_OFF_CAPTURE))
			return; /* over, or open already: a nested start */
		uint32_t k = atomic_fetch_add(&coll_win.ncaptures, 1);
		snprintf(name, sizeof(name), "Capture#%u", k);
		s = set_bits(COLL_WIN_OFF_CAPTURE, 0);
	} else {
		if (coll_window_state() & COLL_WIN_OFF_CAPTURE)
			return; /* a stop with no start */
		if (!coll_win.capture_repeat)
			atomic_store(&coll_win.capture_done, 1);
		s = set_bits(COLL_WIN_OFF_CAPTURE, 1);
		name[0] = '\0';
	}
	note(s, now, name);
	coll_window_refresh_now(now);
}

void coll_window_pause(int paused, uint64_t now)
{
	set_bits(COLL_WIN_OFF_PAUSED, paused);
	coll_window_refresh_now(now);
}

/* NO_COMM is set before TORCH and cleared after it, so that a push never sees
 * TORCH without the NO_COMM it was asked with. */
void coll_window_torch(int on)
{
	if (on) {
		set_bits(COLL_WIN_TORCH_NO_COMM, (on & GPROF_DL_TORCH_NVTX_NO_COMM) != 0);
		set_bits(COLL_WIN_TORCH, 1);
	} else {
		set_bits(COLL_WIN_TORCH, 0);
		set_bits(COLL_WIN_TORCH_NO_COMM, 0);
	}
}

/* ---- the environment ----------------------------------------------------- */

static int env_flag(const char *name)
{
	const char *v = getenv(name);
	return v && !strcmp(v, "1");
}

/* A decimal u64 filling all of s (no sign, no blanks): 0, or -1. */
static int parse_u64(const char *s, const char *end, uint64_t *v)
{
	uint64_t x = 0;
	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

/* The variable name as a u64: 1 when set and valid, 0 when unset, -1 when bad. */
static int env_u64(const char *name, uint64_t *v)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return 0;
	if (parse_u64(s, s + strlen(s), v) != 0) {
		coll_log("%s='%s' is not a number of nanoseconds: ignored", name, s);
		return -1;
	}
	return 1;
}

/* "A:B" or "A:" into [a, b). */
static int parse_steps(const char *s, uint64_t *a, uint64_t *b)
{
	const char *colon = strchr(s, ':'), *end = s + strlen(s);
	if (!colon || parse_u64(s, colon, a) != 0)
		return -1;
	if (colon + 1 == end) {
		*b = UINT64_MAX;
		return 0;
	}
	return parse_u64(colon + 1, end, b);
}

/* "W,U,A,R,S" (as run.c writes it) into v; A must be > 0. */
static int parse_schedule(const char *s, uint64_t v[5])
{
	for (int i = 0; i < 5; i++) {
		const char *end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		if ((i < 4) != (*end == ',') || parse_u64(s, end, &v[i]) != 0)
			return -1;
		s = end + (*end == ',');
	}
	return v[2] ? 0 : -1;
}

static int env_flag_is(const char *name, const char *value)
{
	const char *v = getenv(name);
	return v && !strcmp(v, value);
}

/* The trace's first word on the window: what was asked for. */
static void describe(uint64_t now)
{
	char text[600];
	if (coll_win.has_schedule)
		snprintf(text, sizeof(text), "window: schedule wait=%llu,warmup=%llu,active=%llu,repeat=%llu,skip-first=%llu",
			 (unsigned long long)coll_win.sched_wait, (unsigned long long)coll_win.sched_warmup,
			 (unsigned long long)coll_win.sched_active, (unsigned long long)coll_win.sched_repeat,
			 (unsigned long long)coll_win.sched_skip);
	else if (coll_win.capture == COLL_CAPTURE_CUDA)
		snprintf(text, sizeof(text), "window: cudaProfilerApi%s", coll_win.capture_repeat ? " repeat" : "");
	else if (coll_win.capture == COLL_CAPTURE_NVTX)
		snprintf(text, sizeof(text), "window: nvtx %s%s%s%s", coll_win.nvtx_name,
			 *coll_win.nvtx_domain ? "@" : "", coll_win.nvtx_domain,
			 coll_win.capture_repeat ? " repeat" : "");
	else if (coll_win.has_steps && coll_win.step_b != UINT64_MAX)
		snprintf(text, sizeof(text), "window: steps %llu:%llu", (unsigned long long)coll_win.step_a,
			 (unsigned long long)coll_win.step_b);
	else if (coll_win.has_steps)
		snprintf(text, sizeof(text), "window: steps %llu:", (unsigned long long)coll_win.step_a);
	else if ((coll_win.options & GPROF_DL_OPT_TIME_WINDOW) && coll_win.duration_ns == UINT64_MAX)
		snprintf(text, sizeof(text), "window: time %llu:", (unsigned long long)coll_win.delay_ns);
	else if (coll_win.options & GPROF_DL_OPT_TIME_WINDOW)
		snprintf(text, sizeof(text), "window: time %llu:%llu", (unsigned long long)coll_win.delay_ns,
			 (unsigned long long)coll_win.duration_ns);
	else
		return;
	window_mark(text, now);
}

void coll_window_describe(void)
{
	describe(clock_now_ns());
}

void coll_window_init(void)
{
	uint32_t state = 0, options = 0;
	uint64_t now = clock_now_ns();

	coll_win.has_steps = 0;
	coll_win.t_begin = 0;
	coll_win.t_end = UINT64_MAX;
	atomic_store(&coll_win.nvtx_steps, 0);
	if (env_flag("GPROF_DL_TIMER_ONLY")) {
		state |= COLL_WIN_OFF_TIMER;
		options |= GPROF_DL_OPT_TIMER_ONLY;
	}
	if (env_flag("GPROF_DL_PAUSED")) {
		state |= COLL_WIN_OFF_PAUSED;
		options |= GPROF_DL_OPT_PAUSED;
	}
	if (env_flag("GPROF_DL_RECORD_SHAPES"))
		options |= GPROF_DL_OPT_RECORD_SHAPES;
	if (env_flag("GPROF_DL_NO_PYTHON"))
		options |= GPROF_DL_OPT_NO_PYTHON;

	const char *steps = getenv("GPROF_DL_STEPS");
	if (steps && *steps) {
		if (parse_steps(steps, &coll_win.step_a, &coll_win.step_b) == 0) {
			coll_win.has_steps = 1;
			state |= COLL_WIN_OFF_STEP; /* no step yet */
			options |= GPROF_DL_OPT_STEP_WINDOW;
		} else {
			coll_log("GPROF_DL_STEPS='%s' is not A:B: ignored", steps);
		}
	}

	const char *sched = getenv("GPROF_DL_SCHEDULE");
	coll_win.has_schedule = 0;
	if (sched && *sched && !coll_win.has_steps) {
		uint64_t v[5];
		if (parse_schedule(sched, v) == 0) {
			coll_win.sched_wait = v[0];
			coll_win.sched_warmup = v[1];
			coll_win.sched_active = v[2];
			coll_win.sched_repeat = v[3];
			coll_win.sched_skip = v[4];
			coll_win.has_schedule = 1;
			state |= COLL_WIN_OFF_STEP; /* no step yet */
			options |= GPROF_DL_OPT_STEP_WINDOW;
		} else {
			coll_log("GPROF_DL_SCHEDULE='%s' is not W,U,A,R,S with A > 0: ignored", sched);
		}
	}

	coll_win.capture = COLL_CAPTURE_NONE;
	coll_win.capture_repeat = 0;
	atomic_store(&coll_win.capture_done, 0);
	atomic_store(&coll_win.ncaptures, 0);
	const char *cap = getenv("GPROF_DL_CAPTURE");
	if (cap && !strcmp(cap, "cudaProfilerApi")) {
		coll_win.capture = COLL_CAPTURE_CUDA;
	} else if (cap && !strcmp(cap, "nvtx")) {
		const char *spec = getenv("GPROF_DL_NVTX_CAPTURE");
		const char *at = spec ? strrchr(spec, '@') : NULL;
		size_t n = spec ? (at ? (size_t)(at - spec) : strlen(spec)) : 0;
		if (n && n < sizeof(coll_win.nvtx_name) && (!at || strlen(at + 1) < sizeof(coll_win.nvtx_domain))) {
			memcpy(coll_win.nvtx_name, spec, n);
			coll_win.nvtx_name[n] = '\0';
			snprintf(coll_win.nvtx_domain, sizeof(coll_win.nvtx_domain), "%s", at ? at + 1 : "");
			coll_win.capture = COLL_CAPTURE_NVTX;
		} else {
			coll_log("GPROF_DL_NVTX_CAPTURE='%s' is not NAME[@DOMAIN]: ignored", spec ? spec : "");
		}
	} else if (cap && *cap) {
		coll_log("GPROF_DL_CAPTURE='%s' is not cudaProfilerApi or nvtx: ignored", cap);
	}
	if (coll_win.capture) {
		state |= COLL_WIN_OFF_CAPTURE; /* until the range begins */
		/* detail changes at calls the bindings do not see: they look
		 * again at each phase, as for a time window */
		options |= GPROF_DL_OPT_TIME_WINDOW;
		coll_win.capture_repeat = env_flag_is("GPROF_DL_CAPTURE_END", "repeat");
	}
	coll_win.tracked = coll_win.capture || coll_win.has_schedule;
	coll_win.open0 = !(state & (COLL_WIN_OFF_CAPTURE | (coll_win.has_schedule ? COLL_WIN_OFF_STEP : 0)));
	atomic_store(&coll_win.open, coll_win.open0);
	atomic_store(&coll_win.nhist, 0);

	uint64_t t0 = now, delay = 0, duration = 0;
	env_u64("GPROF_DL_T0_NS", &t0);
	int have_delay = env_u64("GPROF_DL_DELAY_NS", &delay) > 0;
	int have_duration = env_u64("GPROF_DL_DURATION_NS", &duration) > 0;
	coll_win.delay_ns = have_delay ? delay : 0;
	coll_win.duration_ns = have_duration ? duration : UINT64_MAX;
	if (have_delay || have_duration) {
		coll_win.t_begin = t0 + delay < t0 ? UINT64_MAX : t0 + delay;
		if (have_duration)
			coll_win.t_end = coll_win.t_begin + duration < coll_win.t_begin
						 ? UINT64_MAX
						 : coll_win.t_begin + duration;
		state |= COLL_WIN_HAS_TIME;
		if (now < coll_win.t_begin || now >= coll_win.t_end)
			state |= COLL_WIN_OFF_TIME;
		options |= GPROF_DL_OPT_TIME_WINDOW;
	}
	coll_win.options = options;
	atomic_store(&coll_win.state, state);
	publish();
	if (state)
		coll_log("recording window: state %x, options %x", state, options);
}
