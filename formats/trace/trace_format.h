/*
 * trace_format.h - the on-disk constants of trace format 1.x, shared by the
 * writer, the reader and the tests. formats/TRACE-FORMAT.md is the prose
 * version of this file; when they disagree, fix both.
 *
 * Invariants:
 *  - every multi-byte integer on disk is little-endian, whatever the host; the
 *    trace_le* helpers below are the only way code here touches one;
 *  - offsets in this file are from the start of the structure they describe;
 *  - a record size stored in a chunk is never smaller than the size given
 *    here for the version that introduced the record (1.0's for THRD, so a
 *    1.0 THRD record reads as a host thread): newer minor versions may append
 *    fields, never move them, so a reader strides by the stored size and
 *    reads the prefix it knows.
 */
#ifndef GPDL_FORMATS_TRACE_FORMAT_H
#define GPDL_FORMATS_TRACE_FORMAT_H

#include <stdint.h>
#include <string.h>

/* ---- file header: 32 bytes at offset 0 ---------------------------------- */

#define TRACE_MAGIC "GPRFDL\r\n"      /* \r\n catches text-mode mangling, as PNG's does */
#define TRACE_MAGIC_LEN 8
#define TRACE_ENDIAN_TAG 0x01020304u /* reads 04 03 02 01 in a little-endian file */
#define TRACE_FILE_HEADER_SIZE 32    /* v1; a later minor version may grow it */
#define TRACE_FILE_HEADER_MAX 4096   /* a larger header_size is garbage */
#define TRACE_FORMAT_VERSION_MIN_MAJOR 1

#define TRACE_FH_MAGIC 0          /* u8[8]  TRACE_MAGIC */
#define TRACE_FH_VERSION_MAJOR 8  /* u16 */
#define TRACE_FH_VERSION_MINOR 10 /* u16 */
#define TRACE_FH_HEADER_SIZE 12   /* u32    bytes from 0 to the first chunk */
#define TRACE_FH_ENDIAN 16        /* u32    TRACE_ENDIAN_TAG */
#define TRACE_FH_FEATURES 20      /* u32    enum trace_feature mask */
#define TRACE_FH_RESERVED 24      /* u32    0 */
#define TRACE_FH_CRC 28           /* u32    crc32 of bytes 0..27, then 32..header_size-1 */

/* Optional features: a reader ignores bits it does not know. None in v1.0;
 * anything that would change how a v1 reader must decode a chunk is a major
 * version instead. */
enum trace_feature {
	TRACE_FEAT_NONE = 0,
};

/* ---- chunk header: 16 bytes, then `length` bytes of payload -------------- */

#define TRACE_CHUNK_HEADER_SIZE 16
#define TRACE_CHUNK_MAX_PAYLOAD (16u << 20) /* a larger length is garbage */

#define TRACE_CH_TYPE 0   /* u32 fourcc, enum trace_chunk_type */
#define TRACE_CH_LENGTH 4 /* u32 payload bytes */
#define TRACE_CH_FLAGS 8  /* u32 0 in v1; readers ignore it (it is checksummed) */
#define TRACE_CH_CRC 12   /* u32 crc32 of header bytes 0..11, then the payload */

/* Chunk types are four ASCII characters, so a hex dump names them. */
#define TRACE_FOURCC(a, b, c, d) \
	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

enum trace_chunk_type {
	TRACE_CHUNK_META = TRACE_FOURCC('M', 'E', 'T', 'A'),
	TRACE_CHUNK_STRINGS = TRACE_FOURCC('S', 'T', 'R', 'S'),
	TRACE_CHUNK_DESCS = TRACE_FOURCC('D', 'E', 'S', 'C'),
	TRACE_CHUNK_CATEGORIES = TRACE_FOURCC('C', 'A', 'T', 'G'),
	TRACE_CHUNK_PROCESSES = TRACE_FOURCC('P', 'R', 'O', 'C'),
	TRACE_CHUNK_THREADS = TRACE_FOURCC('T', 'H', 'R', 'D'),
	TRACE_CHUNK_EVENTS = TRACE_FOURCC('E', 'V', 'N', 'T'),
	TRACE_CHUNK_COUNTERS = TRACE_FOURCC('C', 'N', 'T', 'R'),
	TRACE_CHUNK_DROPS = TRACE_FOURCC('D', 'R', 'O', 'P'),
	TRACE_CHUNK_END = TRACE_FOURCC('E', 'N', 'D', '!'),
	/* 1.1 */
	TRACE_CHUNK_EVENTS_EXT = TRACE_FOURCC('E', 'V', 'N', 'X'),
	TRACE_CHUNK_DEVICES = TRACE_FOURCC('D', 'E', 'V', 'P'),
	TRACE_CHUNK_LAUNCHES = TRACE_FOURCC('L', 'C', 'F', 'G'),
	/* 2.0 */
	TRACE_CHUNK_EVENTS_SHORT = TRACE_FOURCC('E', 'V', 'N', 'S'),
	/* 3.0 */
	TRACE_CHUNK_EVENTS_EXT_Z = TRACE_FOURCC('E', 'V', 'N', 'Z'),
};

/* ---- META payload (48 bytes in v1) --------------------------------------- */

#define TRACE_META_SIZE 48
#define TRACE_META_SOURCES 0       /* u32 enum trace_source mask */
#define TRACE_META_PID 4           /* u32 */
#define TRACE_META_RANK 8          /* i32, -1: not distributed */
#define TRACE_META_NCPUS 12        /* u32 */
#define TRACE_META_WALL_OFFSET 16  /* i64 ns */
#define TRACE_META_START 24        /* u64 ns */
#define TRACE_META_CLOCK_STR 32    /* u32 string id */
#define TRACE_META_HOST_STR 36     /* u32 string id */
#define TRACE_META_CMDLINE_STR 40  /* u32 string id */
#define TRACE_META_VERSION_STR 44  /* u32 string id */
/* 1.1 appends: */
#define TRACE_META_SIZE_1_1 56
#define TRACE_META_WORLD_SIZE 48   /* i32, -1: not distributed */
#define TRACE_META_BACKEND_STR 52  /* u32 string id, 0: unknown */
/* 1.3 appends: */
#define TRACE_META_SIZE_1_3 60
#define TRACE_META_LOCAL_RANK 56   /* i32, -1: unknown or not distributed */
/* 2.1 appends: */
#define TRACE_META_SIZE_2_1 64
#define TRACE_META_JOB_STR 60      /* u32 string id of the job's identity, 0: unknown */

/* ---- STRS payload: u32 first_id, u32 count, then count x {u32 len, bytes} - */

#define TRACE_STRINGS_HEADER_SIZE 8
#define TRACE_STRING_MAX (1u << 20) /* the writer truncates longer strings */

/* ---- table payloads: u32 count, u32 record_size, then the records -------- */

#define TRACE_TABLE_HEADER_SIZE 8

#define TRACE_DESC_SIZE 20 /* u32 id, name_str, domain_str, category; u8 type; u8[3] 0 */
#define TRACE_CATEGORY_SIZE 12 /* u32 domain_str, category, name_str */
#define TRACE_PROCESS_SIZE 32 /* u32 pid, ppid; u64 start, end; i32 exit; u32 cmdline_str */
/* 1.3 appends: i32 rank, local_rank, world_size (-1: none); u32 backend_str (0: unknown) */
#define TRACE_PROCESS_SIZE_1_3 48
#define TRACE_PROC_RANK 32
#define TRACE_PROC_LOCAL_RANK 36
#define TRACE_PROC_WORLD_SIZE 40
#define TRACE_PROC_BACKEND_STR 44
/* 2.1 appends: i32 exit_signal (N > 0: died of signal N; 0: exit_status says;
 * -1: not said, as before 2.1); u32 job_str (0: unknown) */
#define TRACE_PROCESS_SIZE_2_1 56
#define TRACE_PROC_EXIT_SIGNAL 48
#define TRACE_PROC_JOB_STR 52
#define TRACE_THREAD_SIZE 32  /* u32 index, pid, tid, name_str; u64 start, end */
/* 1.1 appends: u8 kind, u8[3] 0, u32 device, u32 context, u64 stream */
#define TRACE_THREAD_SIZE_1_1 52
#define TRACE_THREAD_KIND 32
#define TRACE_THREAD_DEVICE 36
#define TRACE_THREAD_CONTEXT 40
#define TRACE_THREAD_STREAM 44
/* DEVP (1.1): u32 id, name_str, sm_count, max_threads_per_sm, max_threads_per_block,
 * max_blocks_per_sm, warp_size, regs_per_sm, regs_per_block, smem_per_sm,
 * smem_per_block; u64 total_memory; u32 clock_khz; u16 cc_major, cc_minor */
#define TRACE_DEVICE_SIZE 60
#define TRACE_COUNTER_SIZE 24 /* u64 ts; u32 id, pid; f64 value */
#define TRACE_DROP_SIZE 16    /* u32 thread, u32 0, u64 dropped */

/* ---- EVNT payload: 16-byte sub-header, then records ---------------------- */

#define TRACE_EVENTS_HEADER_SIZE 16 /* u32 thread, u32 record_size, u64 base_ns */
#define TRACE_EVENT_SIZE 16         /* u64 dur|flags<<56, u32 start - base, u32 desc */
#define TRACE_EVENT_DUR_BITS 56
#define TRACE_EVENT_DUR_MAX ((UINT64_C(1) << TRACE_EVENT_DUR_BITS) - 1)

/* ---- EVNS payload (2.0): the EVNT sub-header, then 12-byte records --------
 * The events of a chunk whose durations all fit in 32 bits (4.29 s) and
 * whose desc ids all fit in 24: the same fields as an EVNT record, 4 bytes
 * fewer. */
#define TRACE_EVENT_SHORT_SIZE 12 /* u32 start - base, u32 dur, u32 desc | flags << 24 */
#define TRACE_EVS_START 0
#define TRACE_EVS_DUR 4
#define TRACE_EVS_DESC_FLAGS 8
#define TRACE_EVENT_SHORT_DESC_BITS 24
#define TRACE_EVENT_SHORT_DESC_MAX ((1u << TRACE_EVENT_SHORT_DESC_BITS) - 1)

/* ---- EVNX payload (1.1): 40-byte sub-header, then records ------------------
 * Events with details (1.2 adds the sequence, shapes and samples groups; 1.3
 * the collective group). Each record is an EVNT record (16 bytes, same layout)
 * followed by the field groups named in the sub-header's mask, in increasing
 * bit order, each group's fields packed in the order listed below. A group is
 * in the mask when any record of the chunk has a non-zero field in it; the
 * records that do not read zeros there, which is what "none" means. A later
 * minor version may define higher bits: their bytes follow the known groups
 * and record_size covers them, so a reader skips what it does not know.
 *
 * Correlation and external ids are u32 offsets from the chunk's bases: a
 * stored 0 is the id 0 (none), d > 0 is base + d (mod 2^64). The writer sets
 * each base to one less than the least non-zero id of the chunk and starts a
 * new chunk rather than let ids span more than 2^32 - 2, as it does for starts.
 * A launch is a u32 id into the LCFG table (0: no launch); an id not defined
 * by an LCFG chunk before the EVNX is damage, as is a string id (shapes,
 * process group, dtype) not defined by a STRS chunk before it. */

#define TRACE_EVENTS_EXT_HEADER_SIZE 40
#define TRACE_EVX_THREAD 0      /* u32 track index */
#define TRACE_EVX_RECORD_SIZE 4 /* u32 */
#define TRACE_EVX_BASE 8        /* u64 base_ns */
#define TRACE_EVX_GROUPS 16     /* u32 enum trace_ext_group mask */
#define TRACE_EVX_RESERVED 20   /* u32 0 */
#define TRACE_EVX_CORR_BASE 24  /* u64 correlation base */
#define TRACE_EVX_EXT_BASE 32   /* u64 external id base */
#define TRACE_EXT_ID_SPAN_MAX (UINT64_C(0xffffffff) - 1) /* largest id - least id in a chunk */

/* ---- EVNZ (3.0): an EVNX payload, its records by column, compressed ----------
 *
 * u32 the EVNX payload's length L, then one zstd frame (RFC 8878) of exactly
 * L bytes: the EVNX sub-header as it is, then for each byte k of a record (k
 * in [0, record_size)) byte k of every record in order. Read as that EVNX
 * chunk; the checksum covers the stored (compressed) bytes. */
#define TRACE_EVZ_HEADER_SIZE 4
#define TRACE_EVZ_RAW_LENGTH 0 /* u32 */

enum trace_ext_group {
	TRACE_EXTG_CORRELATION = 1u << 0, /* u32 correlation - corr_base, 0: none          4 */
	TRACE_EXTG_EXTERNAL = 1u << 1,    /* u32 external_id - ext_base, 0: none           4 */
	TRACE_EXTG_LAUNCH = 1u << 2,      /* u32 launch configuration id (LCFG), 0: none   4 */
	TRACE_EXTG_TRANSFER = 1u << 3,    /* u64 bytes; u8 copy_kind, src_kind, dst_kind, async 12 */
	TRACE_EXTG_ALLOC = 1u << 4,       /* u64 address, total_allocated                 16 */
	TRACE_EXTG_DEVICE = 1u << 5,      /* i32 device                                    4 */
	/* 1.2 */
	TRACE_EXTG_SEQ = 1u << 6,         /* u32 seq_nr + 1; 0: none; TRACE_EXT_SEQ_WIDE: in SEQ64  4 */
	TRACE_EXTG_SEQ64 = 1u << 7,       /* i64 seq_nr of records whose SEQ says so       8 */
	TRACE_EXTG_SHAPES = 1u << 8,      /* u32 input shapes string id, 0: none            4 */
	TRACE_EXTG_SAMPLES = 1u << 9,     /* u64 samples in a step, 0: unknown              8 */
	/* 1.3 */
	TRACE_EXTG_COLLECTIVE = 1u << 10, /* u64 coll_seq + 1; u32 pg_str, group_size,
	                                     dtype_str, peer + 1 (0s: none)             24 */
	/* 2.1 */
	TRACE_EXTG_SCHED = 1u << 11,      /* ProfileStep: u64 cpu_ns, runq_ns of its thread
	                                     over the step (cpu_ns 0: unknown)           16 */
	TRACE_EXTG_KNOWN = (1u << 12) - 1,
};

/* A SEQ field that says the sequence number is in the record's SEQ64 group;
 * SEQ holds seq_nr + 1 for seq_nr in [0, TRACE_EXT_SEQ_NARROW_MAX]. */
#define TRACE_EXT_SEQ_WIDE UINT32_C(0xffffffff)
#define TRACE_EXT_SEQ_NARROW_MAX (INT64_C(0xffffffff) - 2)

#define TRACE_EXTG_CORRELATION_SIZE 4
#define TRACE_EXTG_EXTERNAL_SIZE 4
#define TRACE_EXTG_LAUNCH_SIZE 4
#define TRACE_EXTG_TRANSFER_SIZE 12
#define TRACE_EXTG_ALLOC_SIZE 16
#define TRACE_EXTG_DEVICE_SIZE 4
#define TRACE_EXTG_SEQ_SIZE 4
#define TRACE_EXTG_SEQ64_SIZE 8
#define TRACE_EXTG_SHAPES_SIZE 4
#define TRACE_EXTG_SAMPLES_SIZE 8
#define TRACE_EXTG_COLLECTIVE_SIZE 24
#define TRACE_EXTG_SCHED_SIZE 16
/* Fields of the collective group, from its start. */
#define TRACE_COLL_SEQ 0        /* u64 coll_seq + 1, 0: none */
#define TRACE_COLL_PG_STR 8     /* u32 string id */
#define TRACE_COLL_GROUP_SIZE 12 /* u32 */
#define TRACE_COLL_DTYPE_STR 16 /* u32 string id */
#define TRACE_COLL_PEER 20      /* u32 peer + 1, 0: none */
#define TRACE_EXTG_MIN_SIZE 4 /* the smallest group */
/* An EVNX record with every 2.1 group: 124 bytes. */
#define TRACE_EVENT_EXT_MAX_SIZE                                                    \
	(TRACE_EVENT_SIZE + TRACE_EXTG_CORRELATION_SIZE + TRACE_EXTG_EXTERNAL_SIZE + \
	 TRACE_EXTG_LAUNCH_SIZE + TRACE_EXTG_TRANSFER_SIZE + TRACE_EXTG_ALLOC_SIZE +  \
	 TRACE_EXTG_DEVICE_SIZE + TRACE_EXTG_SEQ_SIZE + TRACE_EXTG_SEQ64_SIZE +       \
	 TRACE_EXTG_SHAPES_SIZE + TRACE_EXTG_SAMPLES_SIZE + TRACE_EXTG_COLLECTIVE_SIZE + \
	 TRACE_EXTG_SCHED_SIZE)

/* Bytes of the groups in mask this version knows: the least record_size is
 * TRACE_EVENT_SIZE plus this. */
static inline uint32_t trace_ext_groups_size(uint32_t mask)
{
	return ((mask & TRACE_EXTG_CORRELATION) ? TRACE_EXTG_CORRELATION_SIZE : 0) +
	       ((mask & TRACE_EXTG_EXTERNAL) ? TRACE_EXTG_EXTERNAL_SIZE : 0) +
	       ((mask & TRACE_EXTG_LAUNCH) ? TRACE_EXTG_LAUNCH_SIZE : 0) +
	       ((mask & TRACE_EXTG_TRANSFER) ? TRACE_EXTG_TRANSFER_SIZE : 0) +
	       ((mask & TRACE_EXTG_ALLOC) ? TRACE_EXTG_ALLOC_SIZE : 0) +
	       ((mask & TRACE_EXTG_DEVICE) ? TRACE_EXTG_DEVICE_SIZE : 0) +
	       ((mask & TRACE_EXTG_SEQ) ? TRACE_EXTG_SEQ_SIZE : 0) +
	       ((mask & TRACE_EXTG_SEQ64) ? TRACE_EXTG_SEQ64_SIZE : 0) +
	       ((mask & TRACE_EXTG_SHAPES) ? TRACE_EXTG_SHAPES_SIZE : 0) +
	       ((mask & TRACE_EXTG_SAMPLES) ? TRACE_EXTG_SAMPLES_SIZE : 0) +
	       ((mask & TRACE_EXTG_COLLECTIVE) ? TRACE_EXTG_COLLECTIVE_SIZE : 0) +
	       ((mask & TRACE_EXTG_SCHED) ? TRACE_EXTG_SCHED_SIZE : 0);
}

/* Where group bit g's fields start in a record of the groups in mask. */
static inline uint32_t trace_ext_group_offset(uint32_t mask, uint32_t g)
{
	return TRACE_EVENT_SIZE + trace_ext_groups_size(mask & (g - 1));
}

/* ---- LCFG payload (1.1): a table of kernel launch configurations ----------
 * Interned like descs: ids 1, 2, 3, ... in order of appearance, each record
 * u32 id, grid[3], block[3], registers, static_smem, dynamic_smem. No record
 * is all zeros after its id (that is "no launch", id 0). */

#define TRACE_LAUNCH_SIZE 40

/* ---- END payload: u64 end_ns --------------------------------------------- */

#define TRACE_END_SIZE 8

/* ---- little-endian access ------------------------------------------------ */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define TRACE_HOST_BIG_ENDIAN 1
#else
#define TRACE_HOST_BIG_ENDIAN 0
#endif

static inline uint16_t trace_le16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return TRACE_HOST_BIG_ENDIAN ? __builtin_bswap16(v) : v;
}

static inline uint32_t trace_le32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return TRACE_HOST_BIG_ENDIAN ? __builtin_bswap32(v) : v;
}

static inline uint64_t trace_le64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return TRACE_HOST_BIG_ENDIAN ? __builtin_bswap64(v) : v;
}

static inline void trace_put16(void *p, uint16_t v)
{
	if (TRACE_HOST_BIG_ENDIAN)
		v = __builtin_bswap16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void trace_put32(void *p, uint32_t v)
{
	if (TRACE_HOST_BIG_ENDIAN)
		v = __builtin_bswap32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void trace_put64(void *p, uint64_t v)
{
	if (TRACE_HOST_BIG_ENDIAN)
		v = __builtin_bswap64(v);
	memcpy(p, &v, sizeof(v));
}

#endif
