/*
 * gprof-dl-nvtx.h - how a program marks training phases for gprof-dl with plain
 * NVTX, in any language. Installed for users; see gprof-dl-run(1).
 *
 * Ranges pushed in the NVTX domain named GPROF_DL_NVTX_DOMAIN take their event
 * type from their category: give the category one of the values below. Ranges
 * in any other domain, or with any other category, are UserDefined.
 *
 *   nvtxDomainHandle_t d = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
 *   nvtxEventAttributes_t a = {0};
 *   a.version = NVTX_VERSION; a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
 *   a.category = GPROF_DL_CAT_FORWARD;
 *   a.messageType = NVTX_MESSAGE_TYPE_ASCII; a.message.ascii = "forward";
 *   nvtxDomainRangePushEx(d, &a); ... nvtxDomainRangePop(d);
 *
 * The values equal the trace format's event types and never change.
 *
 * Steps. Every ProfileStep range pushed in this domain (nvtxDomainRangePushEx)
 * begins a step: the collector numbers them 0, 1, 2, ... per process, so that
 * `gprof-dl run --steps A:B` records full detail only in steps A to B-1 of a
 * C or C++ program too. The step's number of samples (its batch size, for
 * throughput) is the push's payload when that is an integer:
 *
 *   a.category = GPROF_DL_CAT_PROFILE_STEP;
 *   a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;  (or INT64, UNSIGNED_INT32, INT32)
 *   a.payload.ullValue = batch_size;
 *
 * A payload of another type, or a negative one, means "unknown".
 *
 * The recording window. Under --timer-only, --steps, --delay/--duration or
 * --paused, ProfileStep and Dataloader ranges and marks of this domain are
 * always recorded; everything else only while the window is open (a range
 * according to the window at its push).
 *
 * Everything else NVTX offers works as NVTX documents it, in this domain and
 * any other: one push/pop stack per domain and thread, nvtxRangeStart/End
 * across threads, registered and wide-character strings, category and thread
 * names. Names are recorded as UTF-8, cut (and the event flagged) past 1024
 * bytes. Outside `gprof-dl run` the calls cost what NVTX without a tool costs.
 */
#ifndef GPROF_DL_NVTX_H
#define GPROF_DL_NVTX_H

#define GPROF_DL_NVTX_DOMAIN "gprof-dl"

enum gprof_dl_category {
	GPROF_DL_CAT_PROFILE_STEP = 1,
	GPROF_DL_CAT_DATALOADER = 2,
	GPROF_DL_CAT_FORWARD = 3,
	GPROF_DL_CAT_BACKWARD = 4,
	GPROF_DL_CAT_OPTIMIZATION = 5,
	GPROF_DL_CAT_OPERATOR = 6,
	GPROF_DL_CAT_OPERATOR_INNER = 7,
	GPROF_DL_CAT_PYTHON_OP = 8,
	/* 13: a collective or point-to-point call, as Paddle's TracerEventType
	 * numbers Communication (9 to 12 are GPU work, which NVTX does not mark) */
	GPROF_DL_CAT_COMMUNICATION = 13,
};

#endif
