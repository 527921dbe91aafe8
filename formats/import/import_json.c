/*
 * import_json.c - the importer's JSON side: yajl's callbacks, driven by a
 * small state machine over the few places of a chrome trace that matter
 * (see import_int.h for what the parts pass each other).
 *
 *   document := { "traceEvents": [event...], "deviceProperties": [device...],
 *                 "distributedInfo": {...}, "baseTimeNanoseconds": n,
 *                 "otherData": {...}, anything else }
 *             | [event...]                       (the older PyTorch profiler)
 *
 * Every value in a place the machine does not know is skipped by counting
 * its nesting, so unknown members and args cost no memory however large
 * (record_shapes' nested lists included). An event's strings are copied to a
 * per-event arena that is reused, so the parse holds one event at a time.
 */
#include "formats/export_writer.h"
#include "formats/import/import_classify.h"
#include "formats/import/import_int.h"
#include "formats/import/import_tell.h"
#include "formats/import/import_num.h"

#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define JSON_READ_CHUNK (1u << 20)
/* a mapped file is parsed, and its pages given back, this much at a time
 * (a power of two, a multiple of the page size) */
#define JSON_MAP_CHUNK (4u << 20)
/* Deeper nesting is refused: yajl's own stack grows with it, and no trace
 * nests beyond a handful of levels (record_shapes' lists of lists). */
#define JSON_MAX_DEPTH 1000

enum pstate {
	PS_TOP,        /* before the document */
	PS_ROOT,       /* in the top-level object: a key or its end */
	PS_ROOT_VAL,   /* the value of a top-level key */
	PS_EVENTS,     /* in traceEvents: an event or the array's end */
	PS_EVENT,      /* in an event: a key or the end */
	PS_EVENT_VAL,
	PS_ARGS,       /* in an event's args */
	PS_ARGS_VAL,
	PS_ARGS_DIM,   /* in args.grid or args.block */
	PS_ARGS_SHAPES, /* in args."Input Dims", an array of arrays of integers */
	PS_ARGS_TYPES, /* in args."Input type", an array of type names */
	PS_DEVS,       /* in deviceProperties */
	PS_DEV,
	PS_DEV_VAL,
	PS_DIST,       /* in distributedInfo */
	PS_DIST_VAL,
	PS_OTHER,      /* in otherData (gprof-dl's export) */
	PS_OTHER_VAL,
	PS_OSOURCES,   /* otherData.sources */
	PS_ODROPS,     /* otherData.drops_by_thread */
	PS_ODROP,
	PS_ODROP_VAL,
	PS_OPROCS,     /* otherData.processes */
	PS_OPROC,
	PS_OPROC_VAL,
	PS_OTHREADS,   /* otherData.threads */
	PS_OTHREAD,
	PS_OTHREAD_VAL,
	PS_DONE,
};

enum root_key { RK_OTHER, RK_EVENTS, RK_DEVPROPS, RK_DIST, RK_BASE, RK_OTHERDATA, RK_PADDLE };
enum event_key {
	EK_OTHER, EK_NAME, EK_CAT, EK_PH, EK_TS, EK_DUR, EK_PID, EK_TID, EK_ARGS, EK_SCOPE,
};
enum args_key {
	AK_OTHER, AK_EXTERNAL_ID, AK_CORRELATION, AK_DEVICE, AK_CONTEXT, AK_STREAM, AK_GRID,
	AK_BLOCK, AK_REGISTERS, AK_SMEM, AK_STATIC_SMEM, AK_DYNAMIC_SMEM, AK_BYTES, AK_ADDR,
	AK_DEVICE_ID, AK_DEVICE_TYPE, AK_TOTAL_ALLOC, AK_START_TIME, AK_TYPE, AK_DOMAIN,
	AK_CATEGORY, AK_NAME, AK_F_OPEN, AK_F_UNBALANCED, AK_F_START_END, AK_F_TRUNCATED,
	AK_RECORDED_NAME, AK_ASYNC, AK_SRC_KIND, AK_DST_KIND, AK_MEM_KIND, AK_SEQ, AK_INPUT_DIMS,
	AK_SAMPLES, AK_COLL_NAME, AK_DTYPE, AK_IN_NELEMS, AK_OUT_NELEMS, AK_GROUP_SIZE, AK_PG,
	AK_COLL_SEQ, AK_PEER, AK_SRC_RANK, AK_DST_RANK, AK_RANK, AK_INPUT_TYPE,
};
enum dev_key {
	DK_OTHER, DK_ID, DK_NAME, DK_MEM, DK_MAJOR, DK_MINOR, DK_THREADS_BLOCK, DK_THREADS_SM,
	DK_REGS_BLOCK, DK_REGS_SM, DK_WARP, DK_SMEM_BLOCK, DK_SMEM_SM, DK_SMS, DK_BLOCKS_SM,
	DK_CLOCK,
};
enum dist_key { DI_OTHER, DI_BACKEND, DI_RANK, DI_WORLD, DI_LOCAL };
enum other_key {
	OK_OTHER, OK_EXPORTED_BY, OK_RECORDED_BY, OK_HOST, OK_PID, OK_RANK, OK_CMDLINE,
	OK_CLOCK, OK_WALL, OK_START, OK_END, OK_NCPUS, OK_SOURCES, OK_DROPS, OK_WORLD,
	OK_BACKEND, OK_PROCS, OK_THREADS, OK_LOCAL,
};
enum drop_key { DR_OTHER, DR_PID, DR_TID, DR_DROPPED, DR_DEVICE, DR_STREAM };
enum oproc_key {
	OP_OTHER, OP_PID, OP_PPID, OP_START, OP_END, OP_EXIT, OP_RANK, OP_LOCAL, OP_WORLD,
	OP_BACKEND,
};
enum othread_key {
	OT_OTHER, OT_PID, OT_TID, OT_KIND, OT_OWNER, OT_DEVICE, OT_CONTEXT, OT_STREAM, OT_START,
	OT_END,
};

struct keydef {
	const char *key;
	int id;
	size_t len; /* filled on first use */
};

static struct keydef root_keys[] = {
	{"traceEvents", RK_EVENTS},       {"deviceProperties", RK_DEVPROPS},
	{"distributedInfo", RK_DIST},     {"baseTimeNanoseconds", RK_BASE},
	{"otherData", RK_OTHERDATA},      {"ExtraInfo", RK_PADDLE},
	{"span_indx", RK_PADDLE},
};
static struct keydef event_keys[] = {
	{"name", EK_NAME}, {"cat", EK_CAT}, {"ph", EK_PH},     {"ts", EK_TS}, {"dur", EK_DUR},
	{"pid", EK_PID},   {"tid", EK_TID}, {"args", EK_ARGS}, {"s", EK_SCOPE},
};
static struct keydef args_keys[] = {
	{"External id", AK_EXTERNAL_ID},
	{"external id", AK_EXTERNAL_ID}, /* Kineto before PyTorch 1.10, on GPU work */
	{"correlation", AK_CORRELATION},
	{"correlation id", AK_CORRELATION}, /* Paddle */
	{"device", AK_DEVICE},
	{"context", AK_CONTEXT},
	{"stream", AK_STREAM},
	{"grid", AK_GRID},
	{"block", AK_BLOCK},
	{"registers per thread", AK_REGISTERS},
	{"shared memory", AK_SMEM},
	{"static shared memory", AK_STATIC_SMEM},
	{"dynamic shared memory", AK_DYNAMIC_SMEM},
	{"bytes", AK_BYTES},
	{"Bytes", AK_BYTES},
	{"Addr", AK_ADDR},
	{"Device Id", AK_DEVICE_ID},
	{"Device Type", AK_DEVICE_TYPE},
	{"Total Allocated", AK_TOTAL_ALLOC},
	{"start_time", AK_START_TIME}, /* Paddle: "12.345 us" after its first event */
	{"type", AK_TYPE},             /* gprof-dl: the event type's name */
	{"domain", AK_DOMAIN},
	{"category", AK_CATEGORY},
	{"name", AK_NAME},             /* metadata: process_name, thread_name */
	{"open_at_exit", AK_F_OPEN},
	{"unbalanced_pop", AK_F_UNBALANCED},
	{"start_end", AK_F_START_END},
	{"name_truncated", AK_F_TRUNCATED},
	{"recorded_name", AK_RECORDED_NAME}, /* gprof-dl: the name before "Memcpy HtoD (...)" */
	{"async", AK_ASYNC},
	{"src kind", AK_SRC_KIND},
	{"dst kind", AK_DST_KIND},
	{"memory kind", AK_MEM_KIND},
	{"Sequence number", AK_SEQ},   /* Kineto: a forward op's and its backward's */
	{"Input Dims", AK_INPUT_DIMS}, /* Kineto, with record_shapes */
	{"samples", AK_SAMPLES},       /* gprof-dl: a step's */
	/* a collective's: record_param_comms', an NCCL kernel's, our export's */
	{"Collective name", AK_COLL_NAME},
	{"dtype", AK_DTYPE},
	{"In msg nelems", AK_IN_NELEMS},
	{"Out msg nelems", AK_OUT_NELEMS},
	{"Group size", AK_GROUP_SIZE},
	{"Process Group Name", AK_PG},
	{"Seq", AK_COLL_SEQ},
	{"peer", AK_PEER},             /* gprof-dl: a send's or receive's other rank */
	{"Src Rank", AK_SRC_RANK},
	{"Dst Rank", AK_DST_RANK},
	{"Rank", AK_RANK},
	{"Input type", AK_INPUT_TYPE}, /* Kineto, with record_shapes: per input */
};
static struct keydef dev_keys[] = {
	{"id", DK_ID},
	{"name", DK_NAME},
	{"totalGlobalMem", DK_MEM},
	{"computeMajor", DK_MAJOR},
	{"computeMinor", DK_MINOR},
	{"maxThreadsPerBlock", DK_THREADS_BLOCK},
	{"maxThreadsPerMultiprocessor", DK_THREADS_SM},
	{"maxThreadsPerMultiProcessor", DK_THREADS_SM},
	{"regsPerBlock", DK_REGS_BLOCK},
	{"regsPerMultiprocessor", DK_REGS_SM},
	{"warpSize", DK_WARP},
	{"sharedMemPerBlock", DK_SMEM_BLOCK},
	{"sharedMemPerMultiprocessor", DK_SMEM_SM},
	{"numSms", DK_SMS},
	{"smCount", DK_SMS}, /* Paddle */
	{"maxBlocksPerMultiprocessor", DK_BLOCKS_SM},
	{"maxBlocksPerMultiProcessor", DK_BLOCKS_SM},
	{"clockRate", DK_CLOCK},
};
static struct keydef dist_keys[] = {
	{"backend", DI_BACKEND}, {"rank", DI_RANK}, {"world_size", DI_WORLD},
	{"local_rank", DI_LOCAL},
};
static struct keydef other_keys[] = {
	{"exported_by", OK_EXPORTED_BY},
	{"recorded_by", OK_RECORDED_BY},
	{"host", OK_HOST},
	{"pid", OK_PID},
	{"rank", OK_RANK},
	{"command_line", OK_CMDLINE},
	{"clock_domain", OK_CLOCK},
	{"wall_offset_ns", OK_WALL},
	{"start_ns", OK_START},
	{"end_ns", OK_END},
	{"ncpus", OK_NCPUS},
	{"sources", OK_SOURCES},
	{"drops_by_thread", OK_DROPS},
	{"world_size", OK_WORLD},
	{"dist_backend", OK_BACKEND},
	{"backend", OK_BACKEND},
	{"processes", OK_PROCS},
	{"threads", OK_THREADS},
	{"local_rank", OK_LOCAL},
};
static struct keydef drop_keys[] = {
	{"pid", DR_PID}, {"tid", DR_TID}, {"dropped", DR_DROPPED},
	{"device", DR_DEVICE}, {"stream", DR_STREAM}, /* a GPU stream's drops */
};
static struct keydef oproc_keys[] = {
	{"pid", OP_PID}, {"ppid", OP_PPID}, {"start_ns", OP_START}, {"end_ns", OP_END},
	{"exit_status", OP_EXIT}, {"rank", OP_RANK}, {"local_rank", OP_LOCAL},
	{"world_size", OP_WORLD}, {"backend", OP_BACKEND},
};
static struct keydef othread_keys[] = {
	{"pid", OT_PID},       {"tid", OT_TID},         {"kind", OT_KIND},
	{"owner_pid", OT_OWNER}, {"device", OT_DEVICE}, {"context", OT_CONTEXT},
	{"stream", OT_STREAM}, {"start_ns", OT_START},  {"end_ns", OT_END},
};

/* Each table gets a small hash index on first use: a key's length and its
 * first and last bytes pick a bucket, and one comparison, inline (keys are
 * short), settles it. Every key of every event goes through here. */
#define KEY_BUCKETS 64

struct keytab {
	struct keydef *d;
	size_t n;
	int ready;
	uint8_t head[KEY_BUCKETS]; /* 1 + the first entry's index, 0 none */
	uint8_t next[64];          /* 1 + the next entry's index in the bucket */
};

static unsigned key_hash(const unsigned char *k, size_t len)
{
	return ((unsigned)len * 7u + k[0] + k[len - 1] * 3u) & (KEY_BUCKETS - 1);
}

static void key_index(struct keytab *t)
{
	/* from the last so that a bucket lists the table's order */
	for (size_t i = t->n; i-- > 0;) {
		struct keydef *d = &t->d[i];
		d->len = strlen(d->key);
		unsigned h = key_hash((const unsigned char *)d->key, d->len);
		t->next[i] = t->head[h];
		t->head[h] = (uint8_t)(i + 1);
	}
	t->ready = 1;
}

static uint32_t load32(const unsigned char *s)
{
	uint32_t v;
	memcpy(&v, s, sizeof(v));
	return v;
}

static uint64_t load64(const unsigned char *s)
{
	uint64_t v;
	memcpy(&v, s, sizeof(v));
	return v;
}

/* a and b, both len bytes, alike: two loads that overlap in the middle
 * instead of a loop (whose exit the branch predictor keeps missing) */
static int key_equal(const unsigned char *a, const unsigned char *b, size_t len)
{
	if (len >= 8 && len <= 16)
		return load64(a) == load64(b) && load64(a + len - 8) == load64(b + len - 8);
	if (len >= 4 && len < 8)
		return load32(a) == load32(b) && load32(a + len - 4) == load32(b + len - 4);
	if (len < 4)
		return a[0] == b[0] && a[len / 2] == b[len / 2] && a[len - 1] == b[len - 1];
	return memcmp(a, b, len) == 0;
}

static int key_lookup(struct keytab *t, const unsigned char *k, size_t len)
{
	if (len == 0)
		return 0;
	if (!t->ready)
		key_index(t);
	for (unsigned i = t->head[key_hash(k, len)]; i; i = t->next[i - 1]) {
		const struct keydef *d = &t->d[i - 1];
		if (d->len == len && key_equal((const unsigned char *)d->key, k, len))
			return d->id;
	}
	return 0;
}

#define KEYTAB(t) {t, sizeof(t) / sizeof(t[0]), 0, {0}, {0}}
static struct keytab root_tab = KEYTAB(root_keys), event_tab = KEYTAB(event_keys),
		     args_tab = KEYTAB(args_keys), dev_tab = KEYTAB(dev_keys),
		     dist_tab = KEYTAB(dist_keys), other_tab = KEYTAB(other_keys),
		     drop_tab = KEYTAB(drop_keys), oproc_tab = KEYTAB(oproc_keys),
		     othread_tab = KEYTAB(othread_keys);
_Static_assert(sizeof(args_keys) / sizeof(args_keys[0]) <= 64, "a key table holds <= 64");

enum jval { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING };

/* "Input Dims": inputs beyond this many count for no bytes; lists nested
 * deeper (which no torch type makes) make their input's size unknown. */
#define IMPORT_MAX_INPUTS 64
#define DIMS_MAX_DEPTH 16

struct jparser {
	struct import *im;
	enum pstate st, skip_ret;
	int skip;  /* nesting depth of a value being skipped */
	int depth; /* of the whole document */
	int too_deep;
	int key;   /* the pending key's id in the current state's table */
	int seen_events;
	struct jevent ev;
	char *arena;
	size_t arena_len, arena_cap;
	int dim; /* next index into grid or block */
	/* "Input Dims" being turned into torch's text, "[[32, 64], [64]]" */
	char *dims;
	size_t dims_len, dims_cap;
	int dims_depth; /* open arrays */
	int dims_sep;   /* a value came at this depth: the next one is after ", " */
	int dims_bad;   /* something not an integer or a list: no shapes */
	/* and its inputs' element counts, for a collective's bytes: per
	 * top-level item, the sum of its innermost lists' products */
	uint64_t in_numel[IMPORT_MAX_INPUTS];
	uint8_t in_ok[IMPORT_MAX_INPUTS];
	unsigned nin;
	uint64_t prod;   /* of the innermost list being read */
	int prod_ok;
	uint8_t dims_sub[DIMS_MAX_DEPTH + 2]; /* the list at this depth holds lists */
	/* "Input type": per input, its element size (0 unknown) and name */
	unsigned in_size[IMPORT_MAX_INPUTS];
	struct jspan in_type[IMPORT_MAX_INPUTS];
	unsigned ntypes;
	struct trace_device dev;
	struct import_drop drop;
	struct import_oproc oproc;
	struct import_othread othread;
};

/* ---- small helpers ------------------------------------------------------- */

static struct jspan arena_put(struct jparser *p, const void *s, size_t n)
{
	struct jspan sp = {0, 0, 1};
	if (n > UINT32_MAX / 2)
		n = UINT32_MAX / 2;
	if (p->arena_len + n + 1 > p->arena_cap) {
		size_t cap = p->arena_cap ? p->arena_cap : 4096;
		while (p->arena_len + n + 1 > cap)
			cap *= 2;
		p->arena = xrealloc(p->arena, cap);
		p->arena_cap = cap;
	}
	memcpy(p->arena + p->arena_len, s, n);
	p->arena[p->arena_len + n] = '\0';
	sp.off = (uint32_t)p->arena_len;
	sp.len = (uint32_t)n;
	p->arena_len += n + 1;
	return sp;
}

static int val_u64(enum jval k, const char *s, size_t n, uint64_t *v)
{
	return (k == JV_NUMBER || k == JV_STRING) && import_parse_u64(s, n, v) == 0;
}

static int val_i64(enum jval k, const char *s, size_t n, int64_t *v)
{
	return (k == JV_NUMBER || k == JV_STRING) && import_parse_i64(s, n, v) == 0;
}

static uint32_t clamp_u32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static void skip_value(struct jparser *p, enum pstate ret)
{
	p->skip = 1;
	p->skip_ret = ret;
}

/* ---- values, by place ---------------------------------------------------- */

static void root_value(struct jparser *p, enum jval k, const char *s, size_t n)
{
	struct import_header *h = &p->im->hdr;
	int64_t v;

	if (p->key == RK_BASE && val_i64(k, s, n, &v)) {
		h->have_base = 1;
		h->base_ns = v;
		h->saw_kineto = 1;
	} else if (p->key == RK_PADDLE) {
		h->saw_paddle = 1;
	}
}

static void event_value(struct jparser *p, enum jval k, const char *s, size_t n)
{
	struct jevent *e = &p->ev;
	struct jid *id;

	switch (p->key) {
	case EK_NAME:
		if (k == JV_STRING)
			e->name = arena_put(p, s, n);
		else if (k == JV_NUMBER)
			e->name = arena_put(p, s, n); /* a number as a name: keep its text */
		else
			e->have |= JE_NAME_BAD;
		break;
	case EK_CAT:
		if (k == JV_STRING)
			e->cat = arena_put(p, s, n);
		break;
	case EK_PH:
		if (k == JV_STRING)
			e->ph = arena_put(p, s, n);
		break;
	case EK_SCOPE:
		if (k == JV_STRING)
			e->scope = arena_put(p, s, n);
		break;
	case EK_TS:
	case EK_DUR:
		if (k == JV_NUMBER || k == JV_STRING) {
			int64_t ns;
			if (import_us_to_ns(s, n, &ns) == 0) {
				if (p->key == EK_TS) {
					e->ts = ns;
					e->have |= JE_TS;
				} else {
					e->dur = ns;
					e->have |= JE_DUR;
				}
			} else {
				int range = k == JV_NUMBER || import_is_number(s, n);
				if (p->key == EK_TS)
					e->have |= range ? JE_TS_RANGE : JE_TS_NAN;
				else
					e->have |= range ? JE_DUR_RANGE : JE_DUR_NAN;
			}
		} else {
			e->have |= p->key == EK_TS ? JE_TS_NAN : JE_DUR_NAN; /* null, a boolean */
		}
		break;
	case EK_PID:
	case EK_TID:
		id = p->key == EK_PID ? &e->pid : &e->tid;
		if (k == JV_NUMBER && import_parse_i64(s, n, &id->num) == 0) {
			id->kind = 1;
		} else if (k == JV_STRING) {
			id->kind = 2;
			id->s = arena_put(p, s, n);
		} else {
			e->have |= JE_ID_BAD; /* a fraction, null, a boolean */
		}
		break;
	case EK_ARGS:
		e->have |= JE_ARGS_BAD;
		break;
	default:
		break;
	}
}

/* A counter's sample is its first numeric arg: only a "C" event needs it
 * (or one whose "ph" comes after its args). */
static void args_number(struct jparser *p, const char *s, size_t n)
{
	struct jargs *a = &p->ev.a;
	if (a->have & JA_VALUE)
		return;
	if (p->ev.ph.set && !(p->ev.ph.len == 1 && p->arena[p->ev.ph.off] == 'C'))
		return;
	if (import_parse_double(s, n, &a->value) == 0)
		a->have |= JA_VALUE;
}

static void args_value(struct jparser *p, enum jval k, const char *s, size_t n, int b)
{
	struct jargs *a = &p->ev.a;
	uint64_t u;
	int64_t i;

	if (k == JV_NUMBER)
		args_number(p, s, n);
	switch (p->key) {
#define U64_ARG(key, field, bit)                     \
	case key:                                    \
		if (val_u64(k, s, n, &u)) {          \
			a->field = u;                \
			a->have |= bit;              \
		}                                    \
		break;
#define I64_ARG(key, field, bit)                     \
	case key:                                    \
		if (val_i64(k, s, n, &i)) {          \
			a->field = i;                \
			a->have |= bit;              \
		}                                    \
		break;
		U64_ARG(AK_EXTERNAL_ID, external_id, JA_EXTERNAL_ID)
		U64_ARG(AK_CORRELATION, correlation, JA_CORRELATION)
		U64_ARG(AK_DEVICE, device, JA_DEVICE)
		U64_ARG(AK_CONTEXT, context, JA_CONTEXT)
		U64_ARG(AK_STREAM, stream, JA_STREAM)
		U64_ARG(AK_REGISTERS, registers, JA_REGISTERS)
		U64_ARG(AK_SMEM, smem, JA_SMEM)
		U64_ARG(AK_STATIC_SMEM, static_smem, JA_STATIC_SMEM)
		U64_ARG(AK_DYNAMIC_SMEM, dynamic_smem, JA_DYNAMIC_SMEM)
		U64_ARG(AK_ADDR, addr, JA_ADDR)
		U64_ARG(AK_TOTAL_ALLOC, total_alloc, JA_TOTAL_ALLOC)
		U64_ARG(AK_SAMPLES, samples, JA_SAMPLES)
		U64_ARG(AK_IN_NELEMS, in_nelems, JA_IN_NELEMS)
		U64_ARG(AK_OUT_NELEMS, out_nelems, JA_OUT_NELEMS)
		U64_ARG(AK_GROUP_SIZE, group_size, JA_GROUP_SIZE)
		I64_ARG(AK_BYTES, bytes, JA_BYTES)
		I64_ARG(AK_DEVICE_ID, device_id, JA_DEVICE_ID)
		I64_ARG(AK_DEVICE_TYPE, device_type, JA_DEVICE_TYPE)
		I64_ARG(AK_SEQ, seq, JA_SEQ)
		I64_ARG(AK_COLL_SEQ, coll_seq, JA_COLL_SEQ)
		I64_ARG(AK_PEER, peer, JA_PEER)
		I64_ARG(AK_SRC_RANK, src_rank, JA_SRC_RANK)
		I64_ARG(AK_DST_RANK, dst_rank, JA_DST_RANK)
		I64_ARG(AK_RANK, rank, JA_RANK)
#undef U64_ARG
#undef I64_ARG
	case AK_START_TIME:
		/* Paddle: "12.345 us" */
		if (k == JV_STRING && n > 3 && memcmp(s + n - 3, " us", 3) == 0 &&
		    import_us_to_ns(s, n - 3, &i) == 0) {
			a->paddle_rel = i;
			a->have |= JA_PADDLE_REL;
		}
		break;
	case AK_TYPE:
		if (k == JV_STRING)
			a->type = arena_put(p, s, n);
		break;
	case AK_DOMAIN:
		if (k == JV_STRING)
			a->domain = arena_put(p, s, n);
		break;
	case AK_CATEGORY:
		if (k == JV_STRING)
			a->category = arena_put(p, s, n);
		else if (val_u64(k, s, n, &u)) {
			a->category_num = u;
			a->have |= JA_CATEGORY_NUM;
		}
		break;
	case AK_NAME:
		if (k == JV_STRING)
			a->meta_name = arena_put(p, s, n);
		break;
	case AK_RECORDED_NAME:
		if (k == JV_STRING)
			a->recorded_name = arena_put(p, s, n);
		break;
	case AK_ASYNC:
		if (k == JV_BOOL && b)
			a->have |= JA_ASYNC;
		break;
	case AK_INPUT_DIMS:
		if (k == JV_STRING) /* shapes that were not a list of lists: as they are */
			a->shapes = arena_put(p, s, n);
		break;
	case AK_COLL_NAME:
	case AK_DTYPE:
	case AK_PG:
		if (k == JV_STRING) {
			struct jspan sp = arena_put(p, s, n);
			*(p->key == AK_COLL_NAME ? &a->coll_name
			  : p->key == AK_DTYPE	 ? &a->dtype
						 : &a->pg) = sp;
		}
		break;
	case AK_SRC_KIND:
	case AK_DST_KIND:
	case AK_MEM_KIND:
		if (k == JV_STRING) {
			uint8_t kind = import_memory_kind(s, n);
			if (p->key == AK_SRC_KIND)
				a->src_kind = kind;
			else if (p->key == AK_DST_KIND)
				a->dst_kind = kind;
			else
				a->mem_kind = kind;
		}
		break;
	case AK_F_OPEN:
		a->flags |= (k == JV_BOOL && b) ? TRACE_EVF_OPEN_AT_EXIT : 0;
		break;
	case AK_F_UNBALANCED:
		a->flags |= (k == JV_BOOL && b) ? TRACE_EVF_UNBALANCED_POP : 0;
		break;
	case AK_F_START_END:
		a->flags |= (k == JV_BOOL && b) ? TRACE_EVF_START_END : 0;
		break;
	case AK_F_TRUNCATED:
		a->flags |= (k == JV_BOOL && b) ? TRACE_EVF_NAME_TRUNCATED : 0;
		break;
	case AK_OTHER:
		if (k == JV_STRING && n > 6 && memcmp(s, "Place(", 6) == 0)
			a->place = arena_put(p, s, n);
		break;
	default:
		break;
	}
}

/* ---- "Input Dims" --------------------------------------------------------- */

#define DIMS_MAX_LEN (64u << 10) /* longer shapes are dropped */

static void dims_put(struct jparser *p, const char *s, size_t n)
{
	if (p->dims_bad || p->dims_len + n > DIMS_MAX_LEN) {
		p->dims_bad = 1;
		return;
	}
	if (p->dims_len + n > p->dims_cap) {
		size_t cap = p->dims_cap ? p->dims_cap : 256;
		while (cap < p->dims_len + n)
			cap *= 2;
		p->dims = xrealloc(p->dims, cap);
		p->dims_cap = cap;
	}
	memcpy(p->dims + p->dims_len, s, n);
	p->dims_len += n;
}

/* Before a value or an inner list: the separator its place needs. */
static void dims_item(struct jparser *p)
{
	if (p->dims_sep)
		dims_put(p, ", ", 2);
	p->dims_sep = 1;
}

/* The input a list at depth d (1: the outer list) belongs to: an item of
 * the outer list is an input; what it holds counts for it. */
static void numel_open(struct jparser *p, int d)
{
	if (d == 1)
		p->nin = 0;
	if (d == 2 && p->nin < IMPORT_MAX_INPUTS) {
		p->in_numel[p->nin] = 0;
		p->in_ok[p->nin] = 1;
	}
	if (d >= 2 && d - 1 <= DIMS_MAX_DEPTH)
		p->dims_sub[d - 1] = 1;
	if (d <= DIMS_MAX_DEPTH)
		p->dims_sub[d] = 0;
	p->prod = 1;
	p->prod_ok = d <= DIMS_MAX_DEPTH;
}

static void numel_bad(struct jparser *p)
{
	if (p->nin < IMPORT_MAX_INPUTS)
		p->in_ok[p->nin] = 0;
}

/* A list at depth d closes: an innermost one adds its product (a tensor's
 * elements; [] is a scalar's one) to its input. */
static void numel_close(struct jparser *p, int d)
{
	if (d >= 2 && (d > DIMS_MAX_DEPTH || !p->dims_sub[d])) {
		if (!p->prod_ok)
			numel_bad(p);
		else if (p->nin < IMPORT_MAX_INPUTS &&
			 __builtin_add_overflow(p->in_numel[p->nin], p->prod, &p->in_numel[p->nin]))
			numel_bad(p);
	}
	if (d == 2)
		p->nin++;
}

static void numel_scalar(struct jparser *p, enum jval k, const char *s, size_t n)
{
	int d = p->dims_depth;
	uint64_t v;
	if (d == 1) { /* an input that is no list: a size unknown */
		if (p->nin < IMPORT_MAX_INPUTS)
			p->in_ok[p->nin] = 0;
		p->nin++;
		return;
	}
	if (k != JV_NUMBER || import_parse_u64(s, n, &v) != 0 ||
	    (d <= DIMS_MAX_DEPTH && p->dims_sub[d]) || __builtin_mul_overflow(p->prod, v, &p->prod))
		p->prod_ok = 0;
}

static void dims_open(struct jparser *p)
{
	if (p->dims_depth++)
		dims_item(p);
	dims_put(p, "[", 1);
	p->dims_sep = 0;
	numel_open(p, p->dims_depth);
}

/* A list ends; the outermost one makes the event's shapes. */
static void dims_close(struct jparser *p)
{
	dims_put(p, "]", 1);
	p->dims_sep = 1;
	numel_close(p, p->dims_depth);
	if (--p->dims_depth)
		return;
	if (!p->dims_bad)
		p->ev.a.shapes = arena_put(p, p->dims, p->dims_len);
	p->st = PS_ARGS;
}

static void dims_scalar(struct jparser *p, enum jval k, const char *s, size_t n)
{
	dims_item(p);
	numel_scalar(p, k, s, n);
	if (k == JV_NUMBER)
		dims_put(p, s, n); /* as written: an integer reads back as torch printed it */
	else
		p->dims_bad = 1;
}

/* ---- "Input type" --------------------------------------------------------- */

static void types_scalar(struct jparser *p, enum jval k, const char *s, size_t n)
{
	unsigned i = p->ntypes++;
	if (i >= IMPORT_MAX_INPUTS)
		return;
	p->in_size[i] = k == JV_STRING ? export_dtype_size(s, n) : 0;
	p->in_type[i] = p->in_size[i] ? arena_put(p, s, n) : (struct jspan){0, 0, 0};
}

/* When the args end: the input tensors' bytes, where "Input Dims" and
 * "Input type" say both an input's elements and their size (a
 * collective's bytes: gloo:all_reduce's, nccl:broadcast's). */
static void input_bytes(struct jparser *p)
{
	struct jargs *a = &p->ev.a;
	uint64_t total = 0;
	int any = 0;
	for (unsigned i = 0; i < p->nin && i < p->ntypes && i < IMPORT_MAX_INPUTS; i++) {
		uint64_t b;
		if (!p->in_ok[i] || !p->in_size[i] ||
		    __builtin_mul_overflow(p->in_numel[i], (uint64_t)p->in_size[i], &b) ||
		    __builtin_add_overflow(total, b, &total))
			continue;
		if (!any)
			a->input_dtype = p->in_type[i];
		any = 1;
	}
	if (any) {
		a->input_bytes = total;
		a->have |= JA_INPUT_BYTES;
	}
}

static void dim_value(struct jparser *p, enum jval k, const char *s, size_t n)
{
	struct jargs *a = &p->ev.a;
	uint64_t u;
	uint32_t *dims = p->key == AK_GRID ? a->grid : a->block;

	if (p->dim < 3 && val_u64(k, s, n, &u))
		dims[p->dim] = clamp_u32(u);
	p->dim++;
}

static void dev_value(struct jparser *p, enum jval k, const char *s, size_t n)
{
	struct trace_device *d = &p->dev;
	uint64_t u = 0;

	if (p->key == DK_NAME) {
		if (k == JV_STRING)
			d->name_str = istrings_intern(&p->im->strs, s, n);
		return;
	}
	if (!val_u64(k, s, n, &u))
		return;
	switch (p->key) {
	case DK_ID: d->id = clamp_u32(u); break;
	case DK_MEM: d->total_memory = u; break;
	case DK_MAJOR: d->cc_major = u > UINT16_MAX ? UINT16_MAX : (uint16_t)u; break;
	case DK_MINOR: d->cc_minor = u > UINT16_MAX ? UINT16_MAX : (uint16_t)u; break;
	case DK_THREADS_BLOCK: d->max_threads_per_block = clamp_u32(u); break;
	case DK_THREADS_SM: d->max_threads_per_sm = clamp_u32(u); break;
	case DK_REGS_BLOCK: d->regs_per_block = clamp_u32(u); break;
	case DK_REGS_SM: d->regs_per_sm = clamp_u32(u); break;
	case DK_WARP: d->warp_size = clamp_u32(u); break;
	case DK_SMEM_BLOCK: d->smem_per_block = clamp_u32(u); break;
	case DK_SMEM_SM: d->smem_per_sm = clamp_u32(u); break;
	case DK_SMS: d->sm_count = clamp_u32(u); break;
	case DK_BLOCKS_SM: d->max_blocks_per_sm = clamp_u32(u); break;
	case DK_CLOCK: d->clock_khz = clamp_u32(u); break;
	default: break;
	}
}

static void dist_value(struct jparser *p, enum jval k, const char *s, size_t n)
{
	struct import_header *h = &p->im->hdr;
	int64_t v;

	if (p->key == DI_BACKEND && k == JV_STRING) {
		h->backend_str = istrings_intern(&p->im->strs, s, n);
	} else if (p->key == DI_RANK && val_i64(k, s, n, &v) && v >= INT32_MIN && v <= INT32_MAX) {
		h->rank = (int32_t)v;
		h->have_rank = 1;
	} else if (p->key == DI_WORLD && val_i64(k, s, n, &v) && v >= INT32_MIN && v <= INT32_MAX) {
		h->world_size = (int32_t)v;
		h->have_world = 1;
	} else if (p->key == DI_LOCAL && val_i64(k, s, n, &v) && v >= INT32_MIN && v <= INT32_MAX) {
		h->local_rank = (int32_t)v;
		h->have_local = 1;
	}
}

static int starts_with(const char *s, size_t n, const char *prefix)
{
	size_t m = strlen(prefix);
	return n >= m && memcmp(s, prefix, m) == 0;
}

static void other_value(struct jparser *p, enum jval k, const char *s, size_t n)
{
	struct import_header *h = &p->im->hdr;
	struct istrings *strs = &p->im->strs;
	uint64_t u;
	int64_t v;

	switch (p->key) {
	case OK_EXPORTED_BY:
		if (k == JV_STRING && starts_with(s, n, "gprof-dl"))
			h->ours = 1;
		break;
	case OK_RECORDED_BY:
		if (k == JV_STRING)
			h->version_str = istrings_intern(strs, s, n);
		break;
	case OK_HOST:
		if (k == JV_STRING)
			h->host_str = istrings_intern(strs, s, n);
		break;
	case OK_CMDLINE:
		if (k == JV_STRING)
			h->cmdline_str = istrings_intern(strs, s, n);
		break;
	case OK_CLOCK:
		if (k == JV_STRING)
			h->clock_str = istrings_intern(strs, s, n);
		break;
	case OK_BACKEND:
		if (k == JV_STRING)
			h->backend_str = istrings_intern(strs, s, n);
		break;
	case OK_PID:
		if (val_u64(k, s, n, &u)) {
			h->pid = clamp_u32(u);
			h->have_pid = 1;
		}
		break;
	case OK_RANK:
	case OK_WORLD:
	case OK_LOCAL:
		if (val_i64(k, s, n, &v) && v >= INT32_MIN && v <= INT32_MAX) {
			if (p->key == OK_RANK) {
				h->rank = (int32_t)v;
				h->have_rank = 1;
			} else if (p->key == OK_LOCAL) {
				h->local_rank = (int32_t)v;
				h->have_local = 1;
			} else {
				h->world_size = (int32_t)v;
				h->have_world = 1;
			}
		}
		break;
	case OK_WALL:
		if (val_i64(k, s, n, &v)) {
			h->wall_offset_ns = v;
			h->have_wall = 1;
		}
		break;
	case OK_START:
		if (val_u64(k, s, n, &u)) {
			h->start_ns = u;
			h->have_start = 1;
		}
		break;
	case OK_END:
		if (val_u64(k, s, n, &u)) {
			h->end_ns = u;
			h->have_end = 1;
		}
		break;
	case OK_NCPUS:
		if (val_u64(k, s, n, &u)) {
			h->ncpus = clamp_u32(u);
			h->have_ncpus = 1;
		}
		break;
	default:
		break;
	}
}

static void source_value(struct jparser *p, enum jval k, const char *s, size_t n)
{
	struct import_header *h = &p->im->hdr;

	if (k != JV_STRING)
		return;
	if (n == 4 && !memcmp(s, "nvtx", 4))
		h->sources |= TRACE_SRC_NVTX;
	else if (n == 5 && !memcmp(s, "cupti", 5))
		h->sources |= TRACE_SRC_CUPTI;
	else if (n == 6 && !memcmp(s, "python", 6))
		h->sources |= TRACE_SRC_PYTHON;
}

static void drop_value(struct jparser *p, enum jval k, const char *s, size_t n)
{
	uint64_t u;

	if (!val_u64(k, s, n, &u))
		return;
	if (p->key == DR_PID)
		p->drop.pid = clamp_u32(u);
	else if (p->key == DR_TID)
		p->drop.tid = clamp_u32(u);
	else if (p->key == DR_DROPPED)
		p->drop.dropped = u;
	else if (p->key == DR_DEVICE)
		p->drop.device = clamp_u32(u);
	else if (p->key == DR_STREAM) {
		p->drop.stream = u;
		p->drop.on_stream = 1;
	}
}

static void oproc_value(struct jparser *p, enum jval k, const char *s, size_t n)
{
	struct import_oproc *o = &p->oproc;
	uint64_t u;
	int64_t v;

	if (p->key == OP_EXIT) {
		/* null: unknown; a code or 128 + signal otherwise; "killed" */
		if (val_i64(k, s, n, &v) && v >= 0 && v <= INT32_MAX)
			o->exit_status = (int32_t)v;
		else if (k == JV_STRING && n == 6 && !memcmp(s, "killed", 6))
			o->exit_status = TRACE_EXIT_KILLED;
		return;
	}
	if (p->key == OP_RANK || p->key == OP_LOCAL || p->key == OP_WORLD) {
		if (val_i64(k, s, n, &v) && v >= INT32_MIN && v <= INT32_MAX) {
			*(p->key == OP_RANK ? &o->rank : p->key == OP_LOCAL ? &o->local_rank
									 : &o->world_size) = (int32_t)v;
			o->have_rank = 1;
		}
		return;
	}
	if (p->key == OP_BACKEND) {
		if (k == JV_STRING)
			o->backend_str = istrings_intern(&p->im->strs, s, n);
		return;
	}
	if (!val_u64(k, s, n, &u))
		return;
	if (p->key == OP_PID)
		o->pid = clamp_u32(u);
	else if (p->key == OP_PPID)
		o->ppid = clamp_u32(u);
	else if (p->key == OP_START)
		o->start_ns = u;
	else if (p->key == OP_END)
		o->end_ns = u;
}

static void othread_value(struct jparser *p, enum jval k, const char *s, size_t n)
{
	struct import_othread *t = &p->othread;
	uint64_t u;
	int64_t v;

	switch (p->key) {
	case OT_PID:
	case OT_TID:
		/* as import_id() takes an event's pid and tid: the low 32 bits */
		if (k == JV_NUMBER && (import_parse_u64(s, n, &u) == 0 ||
				       (import_parse_i64(s, n, &v) == 0 && (u = (uint64_t)v, 1)))) {
			if (p->key == OT_PID)
				t->pid = (uint32_t)u;
			else
				t->tid = (uint32_t)u;
		}
		break;
	case OT_KIND:
		t->kind = k == JV_STRING && n == 6 && !memcmp(s, "stream", 6) ? TRACE_TRACK_STREAM
									  : TRACE_TRACK_HOST;
		break;
	case OT_OWNER:
		if (val_u64(k, s, n, &u)) {
			t->owner_pid = clamp_u32(u);
			t->have_owner = 1;
		}
		break;
	case OT_DEVICE:
		if (val_u64(k, s, n, &u))
			t->device = clamp_u32(u);
		break;
	case OT_CONTEXT:
		if (val_u64(k, s, n, &u))
			t->context = clamp_u32(u);
		break;
	case OT_STREAM:
		if (val_u64(k, s, n, &u))
			t->stream = u;
		break;
	case OT_START:
		if (val_u64(k, s, n, &u))
			t->start_ns = u;
		break;
	case OT_END:
		if (val_u64(k, s, n, &u))
			t->end_ns = u;
		break;
	default:
		break;
	}
}

/* ---- the state machine --------------------------------------------------- */

static int on_scalar(struct jparser *p, enum jval k, const char *s, size_t n, int b)
{
	if (p->skip)
		return 1;
	switch (p->st) {
	case PS_TOP:
		import_fail(p->im, "'%s': not a chrome trace (%s)", p->im->in_path,
			    "the JSON is not an object or an array");
		return 0;
	case PS_ROOT_VAL:
		root_value(p, k, s, n);
		p->st = PS_ROOT;
		break;
	case PS_EVENT_VAL:
		event_value(p, k, s, n);
		p->st = PS_EVENT;
		break;
	case PS_ARGS_VAL:
		args_value(p, k, s, n, b);
		p->st = PS_ARGS;
		break;
	case PS_ARGS_DIM:
		dim_value(p, k, s, n);
		break;
	case PS_ARGS_SHAPES:
		dims_scalar(p, k, s, n);
		break;
	case PS_ARGS_TYPES:
		types_scalar(p, k, s, n);
		break;
	case PS_DEV_VAL:
		dev_value(p, k, s, n);
		p->st = PS_DEV;
		break;
	case PS_DIST_VAL:
		dist_value(p, k, s, n);
		p->st = PS_DIST;
		break;
	case PS_OTHER_VAL:
		other_value(p, k, s, n);
		p->st = PS_OTHER;
		break;
	case PS_OSOURCES:
		source_value(p, k, s, n);
		break;
	case PS_ODROP_VAL:
		drop_value(p, k, s, n);
		p->st = PS_ODROP;
		break;
	case PS_OPROC_VAL:
		oproc_value(p, k, s, n);
		p->st = PS_OPROC;
		break;
	case PS_OTHREAD_VAL:
		othread_value(p, k, s, n);
		p->st = PS_OTHREAD;
		break;
	case PS_EVENTS:
	case PS_DEVS:
	case PS_ODROPS:
	case PS_OPROCS:
	case PS_OTHREADS:
		break; /* a stray scalar in an array of objects */
	default:
		break;
	}
	return 1;
}

static void begin_event(struct jparser *p)
{
	memset(&p->ev, 0, sizeof(p->ev));
	p->arena_len = 0;
	p->nin = p->ntypes = 0;
	p->st = PS_EVENT;
}

/* An object or array as a member of the top object: the events, the
 * devices, distributedInfo, otherData; anything else skipped. */
static void open_root_val(struct jparser *p, int is_map)
{
	if (!is_map && p->key == RK_EVENTS) {
		p->st = PS_EVENTS;
		p->seen_events = 1;
	} else if (!is_map && p->key == RK_DEVPROPS) {
		p->st = PS_DEVS;
		p->im->hdr.saw_kineto = 1;
	} else if (is_map && p->key == RK_DIST) {
		p->st = PS_DIST;
	} else if (is_map && p->key == RK_OTHERDATA) {
		p->st = PS_OTHER;
	} else {
		if (p->key == RK_PADDLE)
			p->im->hdr.saw_paddle = 1;
		skip_value(p, PS_ROOT);
	}
}

/* An object or array as a member of an event: its args, or a member that
 * wants a scalar (marked bad, skipped). */
static void open_event_val(struct jparser *p, int is_map)
{
	if (is_map && p->key == EK_ARGS) {
		p->st = PS_ARGS;
		return;
	}
	/* an object or array where a member wants a scalar */
	if (p->key == EK_NAME)
		p->ev.have |= JE_NAME_BAD;
	else if (p->key == EK_TS)
		p->ev.have |= JE_TS_NAN;
	else if (p->key == EK_DUR)
		p->ev.have |= JE_DUR_NAN;
	else if (p->key == EK_PID || p->key == EK_TID)
		p->ev.have |= JE_ID_BAD;
	else if (p->key == EK_ARGS)
		p->ev.have |= JE_ARGS_BAD;
	skip_value(p, PS_EVENT);
}

/* An object or array as a member of an event's args: grid, block, the
 * input shapes and types; anything else skipped. */
static void open_args_val(struct jparser *p, int is_map)
{
	if (!is_map && (p->key == AK_GRID || p->key == AK_BLOCK)) {
		p->st = PS_ARGS_DIM;
		p->dim = 0;
		p->ev.a.have |= p->key == AK_GRID ? JA_GRID : JA_BLOCK;
	} else if (!is_map && p->key == AK_INPUT_DIMS) {
		p->st = PS_ARGS_SHAPES;
		p->dims_len = 0;
		p->dims_depth = 0;
		p->dims_sep = 0;
		p->dims_bad = 0;
		dims_open(p);
	} else if (!is_map && p->key == AK_INPUT_TYPE) {
		p->st = PS_ARGS_TYPES;
	} else {
		skip_value(p, PS_ARGS);
	}
}

/* An object or array as a member of otherData: sources, drops, processes,
 * threads; anything else skipped. */
static void open_other_val(struct jparser *p, int is_map)
{
	if (!is_map && p->key == OK_SOURCES)
		p->st = PS_OSOURCES;
	else if (!is_map && p->key == OK_DROPS)
		p->st = PS_ODROPS;
	else if (!is_map && p->key == OK_PROCS) {
		p->st = PS_OPROCS;
		p->im->have_oprocs = 1;
	} else if (!is_map && p->key == OK_THREADS) {
		p->st = PS_OTHREADS;
		p->im->have_othreads = 1;
	} else
		skip_value(p, PS_OTHER);
}

static int on_open(struct jparser *p, int is_map)
{
	if (++p->depth > JSON_MAX_DEPTH) {
		p->too_deep = 1;
		return 0;
	}
	if (p->skip) {
		p->skip++;
		return 1;
	}
	switch (p->st) {
	case PS_TOP:
		if (is_map) {
			p->st = PS_ROOT;
		} else {
			p->st = PS_EVENTS;
			p->im->array_form = 1;
			p->seen_events = 1;
		}
		break;
	case PS_ROOT_VAL:
		open_root_val(p, is_map);
		break;
	case PS_EVENTS:
		if (is_map)
			begin_event(p);
		else
			skip_value(p, PS_EVENTS);
		break;
	case PS_EVENT_VAL:
		open_event_val(p, is_map);
		break;
	case PS_ARGS_VAL:
		open_args_val(p, is_map);
		break;
	case PS_ARGS_TYPES:
		types_scalar(p, JV_NULL, "", 0); /* a list's type: no size */
		skip_value(p, PS_ARGS_TYPES);
		break;
	case PS_ARGS_DIM:
		skip_value(p, PS_ARGS_DIM);
		break;
	case PS_ARGS_SHAPES:
		if (is_map) { /* not shapes: the whole value is dropped */
			p->dims_bad = 1;
			numel_bad(p);
			skip_value(p, PS_ARGS_SHAPES);
		} else {
			dims_open(p);
		}
		break;
	case PS_DEVS:
		if (is_map) {
			memset(&p->dev, 0, sizeof(p->dev));
			p->st = PS_DEV;
		} else {
			skip_value(p, PS_DEVS);
		}
		break;
	case PS_DEV_VAL:
		skip_value(p, PS_DEV);
		break;
	case PS_DIST_VAL:
		skip_value(p, PS_DIST);
		break;
	case PS_OTHER_VAL:
		open_other_val(p, is_map);
		break;
	case PS_OSOURCES:
		skip_value(p, PS_OSOURCES);
		break;
	case PS_ODROPS:
		if (is_map) {
			memset(&p->drop, 0, sizeof(p->drop));
			p->st = PS_ODROP;
		} else {
			skip_value(p, PS_ODROPS);
		}
		break;
	case PS_ODROP_VAL:
		skip_value(p, PS_ODROP);
		break;
	case PS_OPROCS:
		if (is_map) {
			memset(&p->oproc, 0, sizeof(p->oproc));
			p->oproc.exit_status = -1;
			p->oproc.rank = p->oproc.local_rank = p->oproc.world_size = -1;
			p->st = PS_OPROC;
		} else {
			skip_value(p, PS_OPROCS);
		}
		break;
	case PS_OPROC_VAL:
		skip_value(p, PS_OPROC);
		break;
	case PS_OTHREADS:
		if (is_map) {
			memset(&p->othread, 0, sizeof(p->othread));
			p->st = PS_OTHREAD;
		} else {
			skip_value(p, PS_OTHREADS);
		}
		break;
	case PS_OTHREAD_VAL:
		skip_value(p, PS_OTHREAD);
		break;
	case PS_DONE:
	default:
		/* yajl gives a key before every value in an object, and one value
		 * at the top: nothing else reaches here */
		skip_value(p, p->st);
		break;
	}
	return 1;
}

static int on_close(struct jparser *p)
{
	p->depth--;
	if (p->skip) {
		if (--p->skip == 0)
			p->st = p->skip_ret;
		return 1;
	}
	switch (p->st) {
	case PS_ROOT:
		p->st = PS_DONE;
		break;
	case PS_EVENTS:
		p->st = p->im->array_form ? PS_DONE : PS_ROOT;
		break;
	case PS_EVENT:
		p->st = PS_EVENTS;
		return import_event(p->im, &p->ev, p->arena, p->arena_len) == 0;
	case PS_ARGS:
		input_bytes(p);
		p->st = PS_EVENT;
		break;
	case PS_ARGS_DIM:
	case PS_ARGS_TYPES:
		p->st = PS_ARGS;
		break;
	case PS_ARGS_SHAPES:
		dims_close(p);
		break;
	case PS_DEVS:
		p->st = PS_ROOT;
		break;
	case PS_DEV:
		import_device(p->im, &p->dev);
		p->st = PS_DEVS;
		break;
	case PS_DIST:
		p->st = PS_ROOT;
		break;
	case PS_OTHER:
		p->st = PS_ROOT;
		break;
	case PS_OSOURCES:
	case PS_ODROPS:
	case PS_OPROCS:
	case PS_OTHREADS:
		p->st = PS_OTHER;
		break;
	case PS_OPROC:
		import_oproc(p->im, &p->oproc);
		p->st = PS_OPROCS;
		break;
	case PS_OTHREAD:
		import_othread(p->im, &p->othread);
		p->st = PS_OTHREADS;
		break;
	case PS_ODROP:
		import_drop(p->im, &p->drop);
		p->st = PS_ODROPS;
		break;
	default:
		break;
	}
	return 1;
}

static int on_key(struct jparser *p, const unsigned char *k, size_t n)
{
	if (p->skip)
		return 1;
	switch (p->st) {
	case PS_ROOT:
		p->key = key_lookup(&root_tab, k, n);
		p->st = PS_ROOT_VAL;
		break;
	case PS_EVENT:
		p->key = key_lookup(&event_tab, k, n);
		p->st = PS_EVENT_VAL;
		p->ev.have |= JE_MEMBERS;
		break;
	case PS_ARGS:
		p->key = key_lookup(&args_tab, k, n);
		p->st = PS_ARGS_VAL;
		break;
	case PS_DEV:
		p->key = key_lookup(&dev_tab, k, n);
		p->st = PS_DEV_VAL;
		break;
	case PS_DIST:
		p->key = key_lookup(&dist_tab, k, n);
		p->st = PS_DIST_VAL;
		break;
	case PS_OTHER:
		p->key = key_lookup(&other_tab, k, n);
		p->st = PS_OTHER_VAL;
		break;
	case PS_ODROP:
		p->key = key_lookup(&drop_tab, k, n);
		p->st = PS_ODROP_VAL;
		break;
	case PS_OPROC:
		p->key = key_lookup(&oproc_tab, k, n);
		p->st = PS_OPROC_VAL;
		break;
	case PS_OTHREAD:
		p->key = key_lookup(&othread_tab, k, n);
		p->st = PS_OTHREAD_VAL;
		break;
	default:
		break;
	}
	return 1;
}

/* ---- yajl's callbacks ---------------------------------------------------- */

static int cb_null(void *ctx)
{
	return on_scalar(ctx, JV_NULL, "", 0, 0);
}

static int cb_boolean(void *ctx, int b)
{
	return on_scalar(ctx, JV_BOOL, "", 0, b);
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	return on_scalar(ctx, JV_NUMBER, s, n, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	return on_scalar(ctx, JV_STRING, (const char *)s, n, 0);
}

static int cb_start_map(void *ctx)
{
	return on_open(ctx, 1);
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t n)
{
	return on_key(ctx, k, n);
}

static int cb_end(void *ctx)
{
	return on_close(ctx);
}

static int cb_start_array(void *ctx)
{
	return on_open(ctx, 0);
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end,
};

/* ---- the parse ----------------------------------------------------------- */

/* yajl's message, on one line, without its trailing blanks. */
static void json_error(struct import *im, yajl_handle h, uint64_t offset, int at_end)
{
	unsigned char *msg = yajl_get_error(h, 0, NULL, 0);
	char line[256] = "";
	if (msg) {
		size_t j = 0;
		for (size_t i = 0; msg[i] && j + 1 < sizeof(line); i++)
			line[j++] = msg[i] == '\n' || msg[i] == '\r' ? ' ' : (char)msg[i];
		while (j > 0 && (line[j - 1] == ' ' || line[j - 1] == '.'))
			j--;
		line[j] = '\0';
		yajl_free_error(h, msg);
	}
	if (at_end)
		import_fail(im, "'%s': the JSON ends early, at byte %llu (a truncated file?)",
			    im->in_path, (unsigned long long)offset);
	else
		import_fail(im, "'%s': invalid JSON at byte %llu: %s", im->in_path,
			    (unsigned long long)offset, line);
}

/* The next piece of the input: from the mapping when there is one (no
 * copy; the pages behind are given back as the parse passes them, so memory
 * stays flat), else from zlib. Its length, 0 at the end, -1 on an error
 * (reported). */
static long next_chunk(struct import *im, gzFile f, const unsigned char *map, size_t maplen,
		       uint64_t offset, unsigned char *buf, const unsigned char **out)
{
	int errnum;

	if (map) {
		size_t n = maplen - (size_t)offset;
		if (n > JSON_MAP_CHUNK)
			n = JSON_MAP_CHUNK;
		/* the whole pages already parsed: yajl keeps no pointer into
		 * them (a token cut by a chunk's end is copied into its own
		 * buffer) */
		size_t done = (size_t)offset & ~(size_t)(JSON_MAP_CHUNK - 1);
		if (done >= JSON_MAP_CHUNK)
			madvise((void *)(map + done - JSON_MAP_CHUNK), JSON_MAP_CHUNK,
				MADV_DONTNEED);
		*out = map + offset;
		return (long)n;
	}
	int n = gzread(f, buf, JSON_READ_CHUNK);
	if (n < 0) {
		const char *m = gzerror(f, &errnum);
		import_fail(im, "'%s': %s after %llu bytes",
			    im->in_path, errnum == Z_ERRNO ? strerror(errno) : m,
			    (unsigned long long)offset);
		return -1;
	}
	if (n == 0) {
		gzerror(f, &errnum);
		if (errnum == Z_BUF_ERROR) {
			import_fail(im, "'%s': the gzip data ends early, after %llu %s",
				    im->in_path, (unsigned long long)offset,
				    "bytes of JSON (a truncated file?)");
			return -1;
		}
	}
	*out = buf;
	return n;
}

int import_parse(struct import *im, void *gzfile, const void *mapped, size_t maplen)
{
	gzFile f = gzfile;
	const unsigned char *map = mapped;
	struct jparser p = {.im = im, .st = PS_TOP};
	yajl_handle h = yajl_alloc(&callbacks, NULL, &p);
	unsigned char *buf = map ? NULL : xmalloc(JSON_READ_CHUNK);
	uint64_t offset = 0;
	int rc = -1;

	if (!h)
		die("out of memory");
	yajl_config(h, yajl_dont_validate_strings, 1); /* names are bytes; writers escape them */
	for (;;) {
		const unsigned char *in;
		long n = next_chunk(im, f, map, maplen, offset, buf, &in);
		if (n < 0)
			goto out;
		if (n == 0)
			break;
		/* a UTF-8 byte order mark, as some editors and Windows tools
		 * write: no JSON, but the file's is JSON after it */
		size_t skip = offset == 0 && n >= 3 && !memcmp(in, "\xef\xbb\xbf", 3) ? 3 : 0;
		yajl_status s = yajl_parse(h, in + skip, (size_t)n - skip);
		if (s == yajl_status_client_canceled) {
			if (p.too_deep) {
				size_t used = yajl_get_bytes_consumed(h);
				import_fail(im, "'%s': JSON nested more than %d deep at byte %llu",
					    im->in_path, JSON_MAX_DEPTH,
					    (unsigned long long)(offset + skip + (used ? used - 1 : 0)));
			}
			goto out; /* otherwise the callback said why */
		}
		if (s != yajl_status_ok) {
			/* yajl has consumed the offending byte: name that byte */
			size_t used = yajl_get_bytes_consumed(h);
			json_error(im, h, offset + skip + (used ? used - 1 : 0), 0);
			goto out;
		}
		offset += (uint64_t)n;
	}
	im->st.json_bytes = offset;
	yajl_status s = yajl_complete_parse(h);
	if (s == yajl_status_client_canceled)
		goto out;
	if (s != yajl_status_ok) {
		json_error(im, h, offset, 1);
		goto out;
	}
	if (!p.seen_events) {
		import_fail(im, "'%s': not a chrome trace (no traceEvents array)", im->in_path);
		goto out;
	}
	rc = 0;
out:
	import_begins_end(im, rc == 0);
	yajl_free(h);
	free(buf);
	free(p.arena);
	free(p.dims);
	return rc;
}
