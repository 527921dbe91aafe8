/*
 * torch.c - the NVTX messages of torch.autograd.profiler.emit_nvtx.
 *
 * Under emit_nvtx every PyTorch operator pushes a default-domain NVTX range
 * whose message torch builds (torch/csrc/profiler/util.cpp, getNvtxStr):
 *
 *   "aten::addmm"
 *   "aten::addmm, seq = 2794"
 *   "aten::addmm, seq = 2794, op_id = 16396"
 *   "aten::addmm, op_id = 16396, sizes = [[32, 64], [64, 128], [128]]"
 *   ... and ", input_op_ids = [(16390, 0), ...]" after any of those.
 *
 * With torch_nvtx on (gprof-dl-api.h) such a push is recorded as an Operator
 * named NAME, with its sequence number and its shapes. op_id makes every
 * message unique, so the message itself is never interned: NAME and the
 * shapes are, by content, through the thread's cache.
 *
 * NAME is the text before the first ", seq = ", ", op_id = ", ", sizes = " or
 * ", input_op_ids = "; each part's value runs to the next part or the end, so
 * the parts may come in any order and commas inside a value (the shapes'
 * ", ") do not end it. No allocation, no call, one pass over the message,
 * eight bytes at a time.
 *
 * torch also pushes one such range for each collective's work ("gloo:all_reduce",
 * on the process group's thread). When the Python package records those
 * calls itself, as Communication events (gprof-dl-api.h comm(), asked for by
 * torch_nvtx's GPROF_DL_TORCH_NVTX_NO_COMM), the push leaves them out, by the
 * rule every part shares (trace_name_comm_call(), compiled in).
 */
#include "lib/collector/collector.h"

#include <string.h>

enum part { PART_SEQ, PART_OP_ID, PART_SIZES, PART_INPUT_OP_IDS };

/* Whether the key (a literal) is at p, within end: a comparison of a
 * constant size, which the compiler makes a few loads. */
#define KEY_AT(p, end, key) ((size_t)((end) - (p)) >= sizeof(key) - 1 && !memcmp((p), key, sizeof(key) - 1))

/* The part that starts at p (a ','), or -1; *value: where its value starts. */
static inline int part_at(const char *p, const char *end, const char **value)
{
	if (end - p < 8 || p[1] != ' ') /* ", seq = " is the shortest */
		return -1;
	p += 2;
	switch (*p) { /* inside a value a comma is followed by a digit, '[' or '(' */
	case 's':
		if (KEY_AT(p, end, "seq = ")) {
			*value = p + 6;
			return PART_SEQ;
		}
		if (KEY_AT(p, end, "sizes = ")) {
			*value = p + 8;
			return PART_SIZES;
		}
		return -1;
	case 'o':
		if (KEY_AT(p, end, "op_id = ")) {
			*value = p + 8;
			return PART_OP_ID;
		}
		return -1;
	case 'i':
		if (KEY_AT(p, end, "input_op_ids = ")) {
			*value = p + 15;
			return PART_INPUT_OP_IDS;
		}
		return -1;
	default:
		return -1;
	}
}

/* The first ',' in [p, end), or end: eight bytes at a time where the byte
 * order allows (the first zero byte of w ^ ",,,,,,,," is the first comma). */
static inline const char *find_comma(const char *p, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (end - p >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		w ^= UINT64_C(0x2c2c2c2c2c2c2c2c);
		uint64_t z = (w - UINT64_C(0x0101010101010101)) & ~w & UINT64_C(0x8080808080808080);
		if (z)
			return p + (__builtin_ctzll(z) >> 3);
		p += 8;
	}
#endif
	while (p < end && *p != ',')
		p++;
	return p;
}

/* A decimal integer, optionally negative, filling [s, end); -1 when not one. */
static int64_t parse_seq(const char *s, const char *end)
{
	int neg = s < end && *s == '-';
	uint64_t v = 0;
	s += neg;
	if (s == end || end - s > 18) /* 18 digits never overflow */
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	return neg ? -(int64_t)v : (int64_t)v;
}

static void part_done(struct coll_torch_msg *m, int k, const char *value, const char *end)
{
	if (k == PART_SEQ) {
		m->seq = parse_seq(value, end);
	} else if (k == PART_SIZES) {
		m->shapes = value;
		m->shapes_len = (size_t)(end - value);
	}
}

void coll_torch_parse(const char *s, size_t len, struct coll_torch_msg *m)
{
	const char *end = s + len, *p = s, *value = NULL;
	int open = -1; /* the part whose value is being read */

	m->name = s;
	m->name_len = len;
	m->shapes = NULL;
	m->shapes_len = 0;
	m->seq = -1;
	for (;;) {
		p = find_comma(p, end);
		if (p == end)
			break;
		const char *v;
		int k = part_at(p, end, &v);
		if (k < 0) {
			p++;
			continue;
		}
		if (open < 0)
			m->name_len = (size_t)(p - s);
		else
			part_done(m, open, value, p);
		open = k;
		value = v;
		p = v;
	}
	if (open >= 0)
		part_done(m, open, value, end);
}
