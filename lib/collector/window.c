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
 *   GPROF_DL_RECORD_SHAPES=1, GPROF_DL_NO_PYTHON=1: reported by options() only
 *
 * detail = !timer_only && !paused && step window && time window. It is
 * process-wide: one atomic word of reasons to be off (coll_win.state), so that
 * a push with no window at all pays one load. The time reason follows the
 * clock: it is brought up to date by every event (which reads the clock
 * anyway) and by now(), step(), start() and stop(). coll_win.detail mirrors the state
 * for readers of gprof_dl_api.detail.
 */
#include "lib/collector/collector.h"
#include "lib/collector/gprof-dl-api.h"

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

void coll_window_step(uint64_t n, uint64_t now)
{
	if (coll_win.has_steps)
		set_bits(COLL_WIN_OFF_STEP, n < coll_win.step_a || n >= coll_win.step_b);
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

	uint64_t t0 = now, delay = 0, duration = 0;
	env_u64("GPROF_DL_T0_NS", &t0);
	int have_delay = env_u64("GPROF_DL_DELAY_NS", &delay) > 0;
	int have_duration = env_u64("GPROF_DL_DURATION_NS", &duration) > 0;
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
