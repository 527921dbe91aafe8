/*
 * nvtx.c - the NVTX v3 injection: InitializeInjectionNvtx2 and the functions it
 * installs.
 *
 * Every copy of the header-only NVTX in a process (the program's, each
 * library's) is an instance with its own table of function pointers; each
 * loads the collector (NVTX_INJECTION64_PATH, or a static injection) and calls
 * InitializeInjectionNvtx2 with its getExportTable. All instances get the same
 * functions, so that domains, registered strings and push stacks are shared
 * whichever copy of NVTX the program called through.
 *
 * Handles given to the program (domains, registered strings, resources) are
 * the collector's own objects, checked by magic before use. The tables are
 * filled only while attached to a ring: inert, InitializeInjectionNvtx2 says
 * no and NVTX turns every call into a no-op.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "lib/collector/collector-test.h"
#include "lib/collector/collector.h"

#include <errno.h>
#include <string.h>

/* ---- decoding ------------------------------------------------------------ */

static struct coll_name ascii(const char *s)
{
	return (struct coll_name){s ? COLL_NAME_ASCII : COLL_NAME_NONE, s};
}

static struct coll_name wide(const wchar_t *s)
{
	return (struct coll_name){s ? COLL_NAME_WIDE : COLL_NAME_NONE, s};
}

static struct coll_str *domain_of(nvtxDomainHandle_t d)
{
	struct coll_str *s = (struct coll_str *)d;
	return s && s->magic == COLL_DOMAIN_MAGIC ? s : NULL;
}

/* An attribute structure as far as its size says it goes (a size of 0, a
 * common mistake, is taken as the full structure). */
static uint32_t decode(const nvtxEventAttributes_t *a, struct coll_name *n)
{
	*n = (struct coll_name){COLL_NAME_NONE, NULL};
	if (!a)
		return 0;
	size_t size = a->size ? a->size : sizeof(*a);
	uint32_t category = 0;
	if (size >= offsetof(nvtxEventAttributes_t, category) + sizeof(a->category))
		category = a->category;
	if (size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return category;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		*n = ascii(a->message.ascii);
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		*n = wide(a->message.unicode);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED: {
		const struct coll_str *s = (const struct coll_str *)a->message.registered;
		if (s && s->magic == COLL_STR_MAGIC)
			*n = (struct coll_name){COLL_NAME_REG, s};
		break;
	}
	default:
		break;
	}
	return category;
}

/* An integer payload as a count (a ProfileStep's samples, gprof-dl-nvtx.h);
 * 0 for none, a negative one or another type. */
static uint64_t payload_count(const nvtxEventAttributes_t *a)
{
	size_t size = a && a->size ? a->size : sizeof(*a);
	if (!a || size < offsetof(nvtxEventAttributes_t, payload) + sizeof(a->payload))
		return 0;
	switch (a->payloadType) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
		return a->payload.ullValue;
	case NVTX_PAYLOAD_TYPE_INT64:
		return a->payload.llValue > 0 ? (uint64_t)a->payload.llValue : 0;
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		return a->payload.uiValue;
	case NVTX_PAYLOAD_TYPE_INT32:
		return a->payload.iValue > 0 ? (uint64_t)a->payload.iValue : 0;
	default:
		return 0;
	}
}

/* ---- --capture-range=nvtx ------------------------------------------------
 * The range --nvtx-capture names opens the capture as it is pushed (or
 * started) and closes it as it is popped (or ended): the range itself is in
 * the trace. A push's pop is known by its level on its thread's stack of its
 * domain; a start's end by its id. Without the option, one load per call. */

static __thread int cap_level __attribute__((tls_model("initial-exec"))) = -1; /* the capture push's level here */
static __thread struct coll_str *cap_domain __attribute__((tls_model("initial-exec"))); /* and its domain */
static _Atomic uint64_t cap_range_id;         /* the capture start's id, 0: none */

static int capture_match(const struct coll_str *d, const struct coll_name *n)
{
	if (COLL_LIKELY(coll_win.capture != COLL_CAPTURE_NVTX))
		return 0;
	const char *want = coll_win.nvtx_domain;
	if (strcmp(want, "*") != 0) {
		if (!*want ? d != NULL : !d || strcmp(d->text, want) != 0)
			return 0;
	}
	char buf[RING_NAME_MAX + 1];
	const char *text = NULL;
	uint32_t cut = 0;
	switch (n->kind) {
	case COLL_NAME_ASCII:
		text = n->p;
		break;
	case COLL_NAME_WIDE:
		buf[coll_wide_to_utf8(n->p, buf, &cut)] = '\0';
		text = buf;
		break;
	case COLL_NAME_REG:
		text = ((const struct coll_str *)n->p)->text;
		break;
	default:
		return 0;
	}
	return text && !strcmp(text, coll_win.nvtx_name);
}

/* A push of n in d: the capture opens first when it is the named range. */
static int capture_push(struct coll_str *d, const struct coll_name *n, uint32_t c, uint64_t samples)
{
	if (COLL_UNLIKELY(capture_match(d, n))) {
		coll_window_capture(1, coll_clock_now());
		int level = coll_push(d, n, c, samples);
		if (!(coll_window_state() & COLL_WIN_OFF_CAPTURE) && cap_level < 0) {
			cap_level = level;
			cap_domain = d;
		}
		return level;
	}
	return coll_push(d, n, c, samples);
}

static int capture_pop(struct coll_str *d)
{
	int level = coll_pop(d);
	if (COLL_UNLIKELY(coll_win.capture == COLL_CAPTURE_NVTX) && cap_level >= 0 && level == cap_level &&
	    d == cap_domain) {
		cap_level = -1;
		coll_window_capture(0, coll_clock_now());
	}
	return level;
}

static nvtxRangeId_t capture_start(struct coll_str *d, const struct coll_name *n, uint32_t c)
{
	if (COLL_UNLIKELY(capture_match(d, n))) {
		uint64_t none = 0;
		coll_window_capture(1, coll_clock_now());
		nvtxRangeId_t id = coll_range_start(d, n, c);
		if (id && !(coll_window_state() & COLL_WIN_OFF_CAPTURE))
			atomic_compare_exchange_strong(&cap_range_id, &none, id);
		return id;
	}
	return coll_range_start(d, n, c);
}

static void capture_end(nvtxRangeId_t id)
{
	coll_range_end(id);
	uint64_t want = id;
	if (COLL_UNLIKELY(coll_win.capture == COLL_CAPTURE_NVTX) && id &&
	    atomic_load_explicit(&cap_range_id, memory_order_relaxed) == id &&
	    atomic_compare_exchange_strong(&cap_range_id, &want, 0))
		coll_window_capture(0, coll_clock_now());
}

/* ---- CORE --------------------------------------------------------------- */

static void NVTX_API markEx(const nvtxEventAttributes_t *a)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n;
	uint32_t c = decode(a, &n);
	coll_mark(NULL, &n, c);
	KEEP_ERRNO_END;
}

static void NVTX_API markA(const char *m)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = ascii(m);
	coll_mark(NULL, &n, 0);
	KEEP_ERRNO_END;
}

static void NVTX_API markW(const wchar_t *m)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = wide(m);
	coll_mark(NULL, &n, 0);
	KEEP_ERRNO_END;
}

static nvtxRangeId_t NVTX_API rangeStartEx(const nvtxEventAttributes_t *a)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n;
	uint32_t c = decode(a, &n);
	nvtxRangeId_t id = capture_start(NULL, &n, c);
	KEEP_ERRNO_END;
	return id;
}

static nvtxRangeId_t NVTX_API rangeStartA(const char *m)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = ascii(m);
	nvtxRangeId_t id = capture_start(NULL, &n, 0);
	KEEP_ERRNO_END;
	return id;
}

static nvtxRangeId_t NVTX_API rangeStartW(const wchar_t *m)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = wide(m);
	nvtxRangeId_t id = capture_start(NULL, &n, 0);
	KEEP_ERRNO_END;
	return id;
}

static void NVTX_API rangeEnd(nvtxRangeId_t id)
{
	KEEP_ERRNO_BEGIN;
	capture_end(id);
	KEEP_ERRNO_END;
}

static int NVTX_API rangePushEx(const nvtxEventAttributes_t *a)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n;
	uint32_t c = decode(a, &n);
	int level = capture_push(NULL, &n, c, 0);
	KEEP_ERRNO_END;
	return level;
}

static int NVTX_API rangePushA(const char *m)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = ascii(m);
	int level = capture_push(NULL, &n, 0, 0);
	KEEP_ERRNO_END;
	return level;
}

static int NVTX_API rangePushW(const wchar_t *m)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = wide(m);
	int level = capture_push(NULL, &n, 0, 0);
	KEEP_ERRNO_END;
	return level;
}

static int NVTX_API rangePop(void)
{
	KEEP_ERRNO_BEGIN;
	int level = capture_pop(NULL);
	KEEP_ERRNO_END;
	return level;
}

static void NVTX_API nameCategoryA(uint32_t category, const char *name)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = ascii(name);
	coll_name_category(NULL, category, &n);
	KEEP_ERRNO_END;
}

static void NVTX_API nameCategoryW(uint32_t category, const wchar_t *name)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = wide(name);
	coll_name_category(NULL, category, &n);
	KEEP_ERRNO_END;
}

static void NVTX_API nameOsThreadA(uint32_t tid, const char *name)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = ascii(name);
	coll_name_thread(tid, &n);
	KEEP_ERRNO_END;
}

static void NVTX_API nameOsThreadW(uint32_t tid, const wchar_t *name)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = wide(name);
	coll_name_thread(tid, &n);
	KEEP_ERRNO_END;
}

/* ---- CORE2: domains ------------------------------------------------------- */

static void NVTX_API domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n;
	uint32_t c = decode(a, &n);
	coll_mark(domain_of(d), &n, c);
	KEEP_ERRNO_END;
}

static nvtxRangeId_t NVTX_API domainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n;
	uint32_t c = decode(a, &n);
	nvtxRangeId_t id = capture_start(domain_of(d), &n, c);
	KEEP_ERRNO_END;
	return id;
}

static void NVTX_API domainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;
	rangeEnd(id);
}

static int NVTX_API domainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n;
	uint32_t c = decode(a, &n);
	uint64_t samples = c == GPROF_DL_CAT_PROFILE_STEP ? payload_count(a) : 0;
	int level = capture_push(domain_of(d), &n, c, samples);
	KEEP_ERRNO_END;
	return level;
}

static int NVTX_API domainRangePop(nvtxDomainHandle_t d)
{
	KEEP_ERRNO_BEGIN;
	int level = capture_pop(domain_of(d));
	KEEP_ERRNO_END;
	return level;
}

/* Resources (naming pointers, handles) have no place in the trace yet: a
 * handle is given so that the program carries on as with any tool. */
static struct {
	uint32_t magic;
} resource_handle = {0x52445047u};

static nvtxResourceHandle_t NVTX_API domainResourceCreate(nvtxDomainHandle_t d, nvtxResourceAttributes_t *attribs)
{
	(void)d;
	(void)attribs;
	return (nvtxResourceHandle_t)(void *)&resource_handle;
}

static void NVTX_API domainResourceDestroy(nvtxResourceHandle_t r)
{
	(void)r;
}

static void NVTX_API domainNameCategoryA(nvtxDomainHandle_t d, uint32_t category, const char *name)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = ascii(name);
	coll_name_category(domain_of(d), category, &n);
	KEEP_ERRNO_END;
}

static void NVTX_API domainNameCategoryW(nvtxDomainHandle_t d, uint32_t category, const wchar_t *name)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = wide(name);
	coll_name_category(domain_of(d), category, &n);
	KEEP_ERRNO_END;
}

static struct coll_str *register_str(uint32_t magic, const struct coll_name *n)
{
	struct coll_str *s = coll_str_register(magic, n);
	if (s)
		coll_announce(s);
	return s;
}

static nvtxStringHandle_t NVTX_API domainRegisterStringA(nvtxDomainHandle_t d, const char *text)
{
	KEEP_ERRNO_BEGIN;
	(void)d; /* string ids are global: the same text is the same string in every domain */
	struct coll_name n = ascii(text);
	struct coll_str *s = register_str(COLL_STR_MAGIC, &n);
	KEEP_ERRNO_END;
	return (nvtxStringHandle_t)(void *)s;
}

static nvtxStringHandle_t NVTX_API domainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *text)
{
	KEEP_ERRNO_BEGIN;
	(void)d;
	struct coll_name n = wide(text);
	struct coll_str *s = register_str(COLL_STR_MAGIC, &n);
	KEEP_ERRNO_END;
	return (nvtxStringHandle_t)(void *)s;
}

static nvtxDomainHandle_t NVTX_API domainCreateA(const char *name)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = ascii(name);
	struct coll_str *s = name ? register_str(COLL_DOMAIN_MAGIC, &n) : NULL;
	KEEP_ERRNO_END;
	return (nvtxDomainHandle_t)(void *)s;
}

static nvtxDomainHandle_t NVTX_API domainCreateW(const wchar_t *name)
{
	KEEP_ERRNO_BEGIN;
	struct coll_name n = wide(name);
	struct coll_str *s = name ? register_str(COLL_DOMAIN_MAGIC, &n) : NULL;
	KEEP_ERRNO_END;
	return (nvtxDomainHandle_t)(void *)s;
}

/* A domain outlives its destruction: another thread, or another NVTX
 * instance, may still be using the handle. */
static void NVTX_API domainDestroy(nvtxDomainHandle_t d)
{
	(void)d;
}

static void NVTX_API initialize(const void *reserved)
{
	(void)reserved;
}

/* ---- the injection ------------------------------------------------------- */

struct table_entry {
	unsigned id;
	NvtxFunctionPointer fn;
};

#define ENTRY(cbid, f) {cbid, (NvtxFunctionPointer)(f)}

static const struct table_entry core_table[] = {
	ENTRY(NVTX_CBID_CORE_MarkEx, markEx),
	ENTRY(NVTX_CBID_CORE_MarkA, markA),
	ENTRY(NVTX_CBID_CORE_MarkW, markW),
	ENTRY(NVTX_CBID_CORE_RangeStartEx, rangeStartEx),
	ENTRY(NVTX_CBID_CORE_RangeStartA, rangeStartA),
	ENTRY(NVTX_CBID_CORE_RangeStartW, rangeStartW),
	ENTRY(NVTX_CBID_CORE_RangeEnd, rangeEnd),
	ENTRY(NVTX_CBID_CORE_RangePushEx, rangePushEx),
	ENTRY(NVTX_CBID_CORE_RangePushA, rangePushA),
	ENTRY(NVTX_CBID_CORE_RangePushW, rangePushW),
	ENTRY(NVTX_CBID_CORE_RangePop, rangePop),
	ENTRY(NVTX_CBID_CORE_NameCategoryA, nameCategoryA),
	ENTRY(NVTX_CBID_CORE_NameCategoryW, nameCategoryW),
	ENTRY(NVTX_CBID_CORE_NameOsThreadA, nameOsThreadA),
	ENTRY(NVTX_CBID_CORE_NameOsThreadW, nameOsThreadW),
};

static const struct table_entry core2_table[] = {
	ENTRY(NVTX_CBID_CORE2_DomainMarkEx, domainMarkEx),
	ENTRY(NVTX_CBID_CORE2_DomainRangeStartEx, domainRangeStartEx),
	ENTRY(NVTX_CBID_CORE2_DomainRangeEnd, domainRangeEnd),
	ENTRY(NVTX_CBID_CORE2_DomainRangePushEx, domainRangePushEx),
	ENTRY(NVTX_CBID_CORE2_DomainRangePop, domainRangePop),
	ENTRY(NVTX_CBID_CORE2_DomainResourceCreate, domainResourceCreate),
	ENTRY(NVTX_CBID_CORE2_DomainResourceDestroy, domainResourceDestroy),
	ENTRY(NVTX_CBID_CORE2_DomainNameCategoryA, domainNameCategoryA),
	ENTRY(NVTX_CBID_CORE2_DomainNameCategoryW, domainNameCategoryW),
	ENTRY(NVTX_CBID_CORE2_DomainRegisterStringA, domainRegisterStringA),
	ENTRY(NVTX_CBID_CORE2_DomainRegisterStringW, domainRegisterStringW),
	ENTRY(NVTX_CBID_CORE2_DomainCreateA, domainCreateA),
	ENTRY(NVTX_CBID_CORE2_DomainCreateW, domainCreateW),
	ENTRY(NVTX_CBID_CORE2_DomainDestroy, domainDestroy),
	ENTRY(NVTX_CBID_CORE2_Initialize, initialize),
};

static int fill_module(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
		       const struct table_entry *e, size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;
	if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
		return 0;
	/* size entries (0 unused), then a NULL: a newer NVTX may have more (left
	 * as no-ops), an older one fewer. */
	for (size_t i = 0; i < n; i++)
		if (e[i].id < size && table[e[i].id])
			*table[e[i].id] = e[i].fn;
	return 1;
}

COLL_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	KEEP_ERRNO_BEGIN;
	int ok = 0;
	coll_init();
	if (coll_active() && get_export_table) {
		const NvtxExportTableCallbacks *cb = get_export_table(NVTX_ETID_CALLBACKS);
		/* CORE is what every NVTX has; an old one may lack CORE2 (domains). */
		if (cb && cb->struct_size >= sizeof(*cb) && cb->GetModuleFunctionTable &&
		    fill_module(cb, NVTX_CB_MODULE_CORE, core_table, sizeof(core_table) / sizeof(core_table[0]))) {
			ok = 1;
			fill_module(cb, NVTX_CB_MODULE_CORE2, core2_table, sizeof(core2_table) / sizeof(core2_table[0]));
		}
		const NvtxExportTableVersionInfo *v = get_export_table(NVTX_ETID_VERSIONINFO);
		if (ok && v && v->struct_size >= sizeof(*v) && v->SetInjectionNvtxVersion)
			v->SetInjectionNvtxVersion(NVTX_VERSION);
		coll_log("%s", ok ? "NVTX instance attached" : "NVTX instance refused: no usable callback table");
	}
	KEEP_ERRNO_END;
	return ok;
}
