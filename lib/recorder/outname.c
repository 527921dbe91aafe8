/* outname.c - the `gprof-dl run -o` patterns: parsed, checked, expanded into names. */
#include "lib/recorder/outname.h"

#include "common/error.h"
#include "lib/ring/ring.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A pattern is a list of parts: literal text, or one placeholder. */
enum part_kind { PART_TEXT, PART_PID, PART_HOST, PART_VAR, PART_SEQ };

struct part {
	enum part_kind kind;
	char *text;   /* PART_TEXT */
	unsigned var; /* PART_VAR: index into vars */
};

struct outname {
	char *pattern;
	struct part *parts;
	unsigned nparts;
	char *vars[RING_VARS_MAX];
	unsigned nvars;
	char *var_list;
	int per_rank;
};

static void add_part(struct outname *o, enum part_kind kind, const char *text, size_t len, unsigned var)
{
	o->parts = xrealloc(o->parts, (o->nparts + 1) * sizeof(*o->parts));
	struct part *p = &o->parts[o->nparts++];
	p->kind = kind;
	p->var = var;
	p->text = NULL;
	if (kind == PART_TEXT)
		p->text = xmemdup0(text, len);
}

static struct outname *fail(struct outname *o, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	outname_free(o);
	return NULL;
}

/* The index of variable NAME (len bytes), added when new; -1 when full. */
static int var_index(struct outname *o, const char *name, size_t len)
{
	for (unsigned i = 0; i < o->nvars; i++)
		if (strlen(o->vars[i]) == len && !memcmp(o->vars[i], name, len))
			return (int)i;
	if (o->nvars == RING_VARS_MAX)
		return -1;
	o->vars[o->nvars] = xmemdup0(name, len);
	return (int)o->nvars++;
}

struct outname *outname_parse(const char *pattern, char *err, size_t errlen)
{
	struct outname *o = xcalloc(1, sizeof(*o));
	o->pattern = xstrdup(pattern);
	if (!*pattern)
		return fail(o, err, errlen, "empty file name");
	const char *s = pattern;
	while (*s) {
		const char *pct = strchr(s, '%');
		size_t n = pct ? (size_t)(pct - s) : strlen(s);
		if (n)
			add_part(o, PART_TEXT, s, n, 0);
		if (!pct)
			break;
		switch (pct[1]) {
		case 'p': add_part(o, PART_PID, NULL, 0, 0); o->per_rank = 1; s = pct + 2; break;
		case 'h': add_part(o, PART_HOST, NULL, 0, 0); s = pct + 2; break;
		case 'n': add_part(o, PART_SEQ, NULL, 0, 0); s = pct + 2; break;
		case '%': add_part(o, PART_TEXT, "%", 1, 0); s = pct + 2; break;
		case 'q': {
			if (pct[2] != '{')
				return fail(o, err, errlen, "'%%q' in '%s' needs a variable: %%q{VAR}", pattern);
			const char *name = pct + 3, *close = strchr(name, '}');
			if (!close)
				return fail(o, err, errlen, "unterminated '%%q{' in '%s'", pattern);
			size_t len = (size_t)(close - name);
			if (!len)
				return fail(o, err, errlen, "empty variable name '%%q{}' in '%s'", pattern);
			if (memchr(name, ',', len) || memchr(name, '=', len) || memchr(name, '%', len))
				return fail(o, err, errlen, "'%%q{%.*s}' in '%s' is not an environment variable",
					    (int)len, name, pattern);
			int v = var_index(o, name, len);
			if (v < 0)
				return fail(o, err, errlen, "'%s' uses more than %u variables", pattern,
					    RING_VARS_MAX);
			add_part(o, PART_VAR, NULL, 0, (unsigned)v);
			o->per_rank = 1;
			s = close + 1;
			break;
		}
		case '\0':
			return fail(o, err, errlen, "'%%' at the end of '%s' (a '%%' is written %%%%)", pattern);
		default:
			return fail(o, err, errlen,
				    "unknown placeholder '%%%c' in '%s' (known: %%p %%h %%q{VAR} %%n %%%%)",
				    pct[1], pattern);
		}
	}
	size_t len = 1;
	for (unsigned i = 0; i < o->nvars; i++)
		len += strlen(o->vars[i]) + 1;
	o->var_list = xmalloc(len);
	o->var_list[0] = '\0';
	for (unsigned i = 0; i < o->nvars; i++) {
		if (i)
			strcat(o->var_list, ",");
		strcat(o->var_list, o->vars[i]);
	}
	return o;
}

void outname_free(struct outname *o)
{
	if (!o)
		return;
	for (unsigned i = 0; i < o->nparts; i++)
		free(o->parts[i].text);
	for (unsigned i = 0; i < o->nvars; i++)
		free(o->vars[i]);
	free(o->parts);
	free(o->var_list);
	free(o->pattern);
	free(o);
}

const char *outname_pattern(const struct outname *o)
{
	return o->pattern;
}

int outname_per_rank(const struct outname *o)
{
	return o->per_rank;
}

unsigned outname_nvars(const struct outname *o)
{
	return o->nvars;
}

const char *outname_var(const struct outname *o, unsigned i)
{
	return i < o->nvars ? o->vars[i] : NULL;
}

const char *outname_var_list(const struct outname *o)
{
	return o->var_list;
}

/* The expansion with %n as seq. */
static char *expand_with(const struct outname *o, uint32_t pid, const char *host,
			 const char *const *values, unsigned seq)
{
	size_t cap = 64, len = 0;
	char *out = xmalloc(cap);
	for (unsigned i = 0; i < o->nparts; i++) {
		const struct part *p = &o->parts[i];
		char num[16];
		const char *add = "";
		switch (p->kind) {
		case PART_TEXT: add = p->text; break;
		case PART_PID: snprintf(num, sizeof(num), "%u", pid); add = num; break;
		case PART_SEQ: snprintf(num, sizeof(num), "%u", seq); add = num; break;
		case PART_HOST: add = host ? host : ""; break;
		case PART_VAR: add = values && values[p->var] ? values[p->var] : ""; break;
		}
		size_t n = strlen(add);
		if (len + n + 1 > cap) {
			while (len + n + 1 > cap)
				cap *= 2;
			out = xrealloc(out, cap);
		}
		memcpy(out + len, add, n);
		len += n;
	}
	out[len] = '\0';
	return out;
}

char *outname_expand(const struct outname *o, uint32_t pid, const char *host,
		     const char *const *values, int (*taken)(const char *path, void *ctx), void *ctx)
{
	int has_seq = 0;
	for (unsigned i = 0; i < o->nparts; i++)
		has_seq |= o->parts[i].kind == PART_SEQ;
	if (!has_seq || !taken)
		return expand_with(o, pid, host, values, 1);
	for (unsigned n = 1;; n++) {
		char *path = expand_with(o, pid, host, values, n);
		if (!taken(path, ctx))
			return path;
		free(path);
	}
}

const char *outname_value_problem(const char *value, char *buf, size_t size)
{
	if (!value)
		return "is unset";
	if (!*value)
		return "is empty";
	if (strchr(value, '/'))
		return "holds a '/'";
	if (strstr(value, ".."))
		return "holds '..'";
	for (const unsigned char *c = (const unsigned char *)value; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return "holds a control character";
	size_t len = strlen(value);
	if (len > NAME_MAX) {
		snprintf(buf, size, "is longer than a file name may be (%zu bytes, more than NAME_MAX %d)", len,
			 NAME_MAX);
		return buf;
	}
	return NULL;
}

int outname_check(const struct outname *o, const char *const *values, int (*may_be_unset)(const char *name),
		  char *err, size_t errlen)
{
	char buf[128];
	for (unsigned i = 0; i < o->nvars; i++) {
		const char *v = values ? values[i] : NULL;
		if (!v && may_be_unset && may_be_unset(o->vars[i]))
			continue;
		const char *why = outname_value_problem(v, buf, sizeof(buf));
		if (why) {
			snprintf(err, errlen, "%%q{%s} %s", o->vars[i], why);
			return -1;
		}
	}
	return 0;
}

char *outname_distinct(const char *path, unsigned n)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t stem = dot && dot > base ? (size_t)(dot - path) : strlen(path);
	char *out = xmalloc(strlen(path) + 16);
	sprintf(out, "%.*s-%u%s", (int)stem, path, n, path + stem);
	return out;
}

static int path_exists(const char *path, void *ctx)
{
	(void)ctx;
	return access(path, F_OK) == 0;
}

char *outname_path(const struct outname *o, uint32_t pid)
{
	char host[256] = "";
	const char *values[RING_VARS_MAX];
	gethostname(host, sizeof(host) - 1);
	for (unsigned i = 0; i < outname_nvars(o); i++)
		values[i] = getenv(outname_var(o, i));
	char *path = outname_expand(o, pid, host, values, path_exists, NULL);
	if (!*path) {
		free(path);
		path = xstrdup("gprof-dl.gpdl"); /* a pattern of unset variables only */
	}
	return path;
}

int outname_numbered(const struct outname *o)
{
	for (const char *p = outname_pattern(o); *p; p++)
		if (*p == '%' && *++p == 'n')
			return 1;
	return 0;
}

char *outname_default(const char *cmd)
{
	const char *base = strrchr(cmd, '/');
	base = base ? base + 1 : cmd;
	char *path = xmalloc(strlen(base) + 32);
	for (unsigned n = 1;; n++) {
		sprintf(path, "%s-%u.gpdl", base, n);
		if (access(path, F_OK) != 0)
			return path;
	}
}
