/*
 * import_num.c - exact number parsing for the importer (see import_num.h).
 *
 * A number is read as sign, up to 19 significant decimal digits in a u64 and
 * a power of ten. Nineteen digits cover any int64 nanosecond count written in
 * microseconds with three decimals, so a digit beyond them is below the
 * nanosecond and only matters for rounding.
 */
#include "formats/import/import_num.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NUM_MAX_DIGITS 19
#define NUM_MAX_EXP 400 /* beyond it every value over- or underflows anyway */

struct decimal {
	int neg;
	uint64_t mant;  /* significant digits kept */
	int exp10;      /* value = mant * 10^exp10 */
	int dropped;    /* significant digits that did not fit mant */
	int fractional; /* a '.', 'e' or 'E' was seen */
};

static const uint64_t pow10_u64[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

static void decimal_digit(struct decimal *d, int digit, int after_point)
{
	if (d->mant == 0 && digit == 0) {
		if (after_point)
			d->exp10--; /* a leading zero after the point only shifts */
		return;
	}
	if (d->dropped == 0 && d->mant < pow10_u64[NUM_MAX_DIGITS - 1]) {
		d->mant = d->mant * 10 + (uint64_t)digit;
		if (after_point)
			d->exp10--;
	} else {
		d->dropped++;
		if (!after_point)
			d->exp10++;
	}
}

/* The common case, "[-]digits[.digits]" of at most 19 digits in all, with
 * no blank and no exponent: the digits fit mant as they come, which is what
 * decimal_digit() makes of them too (a leading zero adds nothing to mant
 * either way). 1 when taken, 0 to leave it to the full parse. */
static int decimal_fast(const char *s, size_t n, struct decimal *d)
{
	size_t i = 0;
	uint64_t m = 0;
	int frac = 0, fractional = 0, neg = 0;

	if (n > 21)
		return 0;
	if (i < n && s[i] == '-')
		neg = 1, i++;
	size_t start = i;
	for (; i < n && (unsigned)(s[i] - '0') < 10; i++)
		m = m * 10 + (uint64_t)(s[i] - '0');
	size_t ndig = i - start;
	if (i < n && s[i] == '.') {
		fractional = 1;
		size_t f0 = ++i;
		for (; i < n && (unsigned)(s[i] - '0') < 10; i++)
			m = m * 10 + (uint64_t)(s[i] - '0');
		frac = (int)(i - f0);
		ndig += (size_t)frac;
	}
	if (i != n || ndig == 0 || ndig > NUM_MAX_DIGITS)
		return 0;
	d->neg = neg;
	d->mant = m;
	d->exp10 = -frac;
	d->dropped = 0;
	d->fractional = fractional;
	return 1;
}

/* JSON number grammar, plus a leading '+' and surrounding blanks, which
 * numbers given as strings ("ts": "12.5") may have. */
static int decimal_parse(const char *s, size_t n, struct decimal *d)
{
	size_t i = 0;
	int digits = 0, e = 0, eneg = 0, edigits = 0;

	if (decimal_fast(s, n, d))
		return 0;
	memset(d, 0, sizeof(*d));
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	while (n > i && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		d->neg = s[i++] == '-';
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
		decimal_digit(d, s[i] - '0', 0);
	if (i < n && s[i] == '.') {
		d->fractional = 1;
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
			decimal_digit(d, s[i] - '0', 1);
	}
	if (!digits)
		return -1;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		d->fractional = 1;
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, edigits++)
			if (e < NUM_MAX_EXP)
				e = e * 10 + (s[i] - '0');
		if (!edigits)
			return -1;
		d->exp10 += eneg ? -e : e;
	}
	return i == n ? 0 : -1;
}

/* |mant * 10^exp10| as an integer, rounded half away from zero: 0, or -1
 * when it does not fit a u64. */
static int decimal_scale(uint64_t mant, int exp10, uint64_t *out)
{
	if (mant == 0) {
		*out = 0;
		return 0;
	}
	if (exp10 >= 0) {
		if (exp10 > NUM_MAX_DIGITS)
			return -1;
		if (mant > UINT64_MAX / pow10_u64[exp10])
			return -1;
		*out = mant * pow10_u64[exp10];
		return 0;
	}
	if (-exp10 > NUM_MAX_DIGITS) {
		*out = 0;
		return 0;
	}
	uint64_t p = pow10_u64[-exp10];
	uint64_t q = mant / p, r = mant % p;
	*out = q + (r >= p - r ? 1 : 0); /* r >= p/2 without overflow */
	return 0;
}

static int to_i64(int neg, uint64_t mag, int64_t *v)
{
	if (neg) {
		if (mag > (uint64_t)INT64_MAX + 1)
			return -1;
		*v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	} else {
		if (mag > (uint64_t)INT64_MAX)
			return -1;
		*v = (int64_t)mag;
	}
	return 0;
}

int import_is_number(const char *s, size_t n)
{
	struct decimal d;
	return decimal_parse(s, n, &d) == 0;
}

int import_us_to_ns(const char *s, size_t n, int64_t *ns)
{
	struct decimal d;
	uint64_t mag;

	if (decimal_parse(s, n, &d) < 0)
		return -1;
	if (decimal_scale(d.mant, d.exp10 + 3, &mag) == 0 && to_i64(d.neg, mag, ns) == 0)
		return 0;
	return -1;
}

/* A plain integer's magnitude, exactly, to UINT64_MAX: 1, or 0 when the
 * text is not a plain integer (the decimal path takes it) or -1 when it
 * does not fit. */
static int plain_integer(const char *s, size_t n, int *neg, uint64_t *mag)
{
	size_t i = 0;
	uint64_t v = 0;

	/* the common case: up to 19 digits, which cannot overflow */
	if (n > 0 && n <= 19) {
		for (; i < n && (unsigned)(s[i] - '0') < 10; i++)
			v = v * 10 + (uint64_t)(s[i] - '0');
		if (i == n) {
			*neg = 0;
			*mag = v;
			return 1;
		}
		i = 0;
		v = 0;
	}
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	while (n > i && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	*neg = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		*neg = s[i++] == '-';
	if (i == n)
		return 0;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*mag = v;
	return 1;
}

/* Truncation toward zero of mant * 10^exp10. */
static int decimal_trunc(const struct decimal *d, uint64_t *mag)
{
	if (d->exp10 >= 0)
		return decimal_scale(d->mant, d->exp10, mag);
	if (-d->exp10 > NUM_MAX_DIGITS) {
		*mag = 0;
		return 0;
	}
	*mag = d->mant / pow10_u64[-d->exp10];
	return 0;
}

/* The magnitude and sign of an integer value: integer text exactly, other
 * numbers truncated. */
static int integer_value(const char *s, size_t n, int *neg, uint64_t *mag)
{
	struct decimal d;
	int plain = plain_integer(s, n, neg, mag);

	if (plain != 0)
		return plain > 0 ? 0 : -1;
	if (decimal_parse(s, n, &d) < 0 || decimal_trunc(&d, mag) < 0)
		return -1;
	*neg = d.neg;
	return 0;
}

int import_parse_i64(const char *s, size_t n, int64_t *v)
{
	uint64_t mag;
	int neg;

	if (integer_value(s, n, &neg, &mag) < 0)
		return -1;
	return to_i64(neg, mag, v);
}

int import_parse_u64(const char *s, size_t n, uint64_t *v)
{
	uint64_t mag;
	int neg;

	if (integer_value(s, n, &neg, &mag) < 0)
		return -1;
	if (neg) {
		int64_t i;
		if (to_i64(1, mag, &i) < 0)
			return -1;
		*v = (uint64_t)i;
	} else {
		*v = mag;
	}
	return 0;
}

int import_parse_double(const char *s, size_t n, double *v)
{
	char buf[64];
	struct decimal d;

	if (n >= sizeof(buf) || decimal_parse(s, n, &d) < 0)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*v = strtod(buf, NULL);
	return isfinite(*v) ? 0 : -1;
}
