/*
 * import_num.h - numbers as chrome-trace JSON writes them, read from their
 * text so that nothing drifts through a double.
 *
 * ts and dur are microseconds with up to three decimals ("1697591640277436.250",
 * "17", "3.104", and from Python's json "1.5e-05"): import_us_to_ns() scales the
 * decimal text by 1000 with integer arithmetic, rounding only digits beyond the
 * nanosecond, so 16-digit epoch timestamps keep every nanosecond a double
 * would lose.
 */
#ifndef GPDL_FORMATS_IMPORT_NUM_H
#define GPDL_FORMATS_IMPORT_NUM_H

#include <stddef.h>
#include <stdint.h>

/* Microseconds text -> nanoseconds, rounded half away from zero. 0, or -1
 * when the text is not a number or the result does not fit an int64. */
int import_us_to_ns(const char *s, size_t n, int64_t *ns);

/* Whether the text is a decimal number at all (of any magnitude): what tells
 * a time out of range from one that is no number. */
int import_is_number(const char *s, size_t n);

/* An integer value: integer text exactly (up to the u64/i64 range), a
 * fractional or exponent form truncated toward zero. 0, or -1 when not a
 * number or out of range. The signed form accepts [INT64_MIN, INT64_MAX],
 * the unsigned form [0, UINT64_MAX] (and negative integers as their two's
 * complement, as addresses and ids printed signed are). */
int import_parse_i64(const char *s, size_t n, int64_t *v);
int import_parse_u64(const char *s, size_t n, uint64_t *v);

/* A double, for values that are real numbers (counter samples). */
int import_parse_double(const char *s, size_t n, double *v);

#endif
