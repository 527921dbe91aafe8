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
};

#endif
