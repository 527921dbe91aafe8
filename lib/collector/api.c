/*
 * api.c - gprof_dl_api(), the collector's interface for language bindings
 * (gprof-dl-api.h): the one symbol the library exports besides the NVTX
 * entry point and the functions it interposes.
 *
 * Each call is a thin wrapper that keeps errno as the caller left it; the
 * work is in record.c (ranges, marks, strings, collectives and ranks: the
 * NVTX hot path's code, on the same per-thread stack and rings) and
 * window.c (the recording window).
 */
#include "lib/collector/gprof-dl-api.h"

#include "lib/collector/collector-test.h"
#include "lib/collector/collector.h"
#include "lib/collector/sched.h"
#include "lib/collector/memory.h"

#include <errno.h>

/* Also brings the time window up to date, so that a binding that reads the
 * clock before it reads *detail sees --delay/--duration take effect. */
static uint64_t api_now(void)
{
	uint64_t now = coll_clock_now(); /* the clock NVTX ranges are stamped with */
	coll_window_refresh_now(now);
	return now;
}

static uint32_t api_string(const char *s, size_t len)
{
	KEEP_ERRNO_BEGIN;
	uint32_t id = coll_api_string(s, len);
	KEEP_ERRNO_END;
	return id;
}

static void api_push(uint32_t category, uint32_t name)
{
	KEEP_ERRNO_BEGIN;
	coll_api_push(category, name, -1, 0);
	KEEP_ERRNO_END;
}

static void api_op_push(uint32_t name, int64_t seq, uint32_t shapes)
{
	KEEP_ERRNO_BEGIN;
	coll_api_push(GPROF_DL_CAT_OPERATOR, name, seq, shapes);
	KEEP_ERRNO_END;
}

static void api_pop(void)
{
	KEEP_ERRNO_BEGIN;
	coll_api_pop();
	KEEP_ERRNO_END;
}

static void api_range(uint32_t category, uint32_t name, uint64_t start_ns, uint64_t end_ns,
		      uint64_t samples)
{
	KEEP_ERRNO_BEGIN;
	coll_api_range(category, name, start_ns, end_ns, samples);
	KEEP_ERRNO_END;
}

static void api_mark(uint32_t category, uint32_t name)
{
	KEEP_ERRNO_BEGIN;
	coll_api_mark(category, name);
	KEEP_ERRNO_END;
}

static void api_step(uint64_t n)
{
	uint64_t now = clock_now_ns();
	coll_window_step(n, now);
	coll_sched_step(now); /* a step begins: the previous one ended */
}

static void api_start(void)
{
	coll_window_pause(0, clock_now_ns());
}

static void api_stop(void)
{
	coll_window_pause(1, clock_now_ns());
}

static uint32_t api_options(void)
{
	return coll_win.options | coll_memory_options();
}

static void api_torch_nvtx(int on)
{
	coll_window_torch(on);
}

static void api_comm(const struct gprof_dl_comm *c)
{
	KEEP_ERRNO_BEGIN;
	coll_api_comm(c);
	KEEP_ERRNO_END;
}

static void api_rank(int32_t rank, int32_t local_rank, int32_t world_size, uint32_t backend)
{
	KEEP_ERRNO_BEGIN;
	coll_api_rank(rank, local_rank, world_size, backend);
	KEEP_ERRNO_END;
}

static const struct gprof_dl_api api = {
	.version = GPROF_DL_API_VERSION,
	.size = sizeof(struct gprof_dl_api),
	.now = api_now,
	.string = api_string,
	.push = api_push,
	.op_push = api_op_push,
	.pop = api_pop,
	.range = api_range,
	.mark = api_mark,
	.detail = &coll_win.detail,
	.step = api_step,
	.start = api_start,
	.stop = api_stop,
	.options = api_options,
	.torch_nvtx = api_torch_nvtx,
	.comm = api_comm,
	.rank = api_rank,
	.memory = coll_api_memory,
};

COLL_EXPORT const struct gprof_dl_api *gprof_dl_api(uint32_t version)
{
	KEEP_ERRNO_BEGIN;
	const struct gprof_dl_api *a = NULL;
	coll_init();
	if (coll_active() && version == GPROF_DL_API_VERSION) {
		/* The interface's ranges live in the gprof-dl domain: make it exist
		 * (the registry hands it out by name, so it is NVTX's too). */
		static const char domain[] = GPROF_DL_NVTX_DOMAIN;
		struct coll_name n = {COLL_NAME_ASCII, domain};
		struct coll_str *d = coll_str_register(COLL_DOMAIN_MAGIC, &n);
		if (d) {
			coll_announce(d);
			a = &api;
		}
	}
	KEEP_ERRNO_END;
	return a;
}
