/*
 * options.c - what every subcommand's option parsing does alike:
 * getopt_long with git's manners (a near miss gets "did you mean"), and no
 * option value that is the "--" separating gprof-dl's options from a
 * program's (`gprof-dl run -o -- true` would write a file named "--").
 */
#include "cmd/cmd.h"
#include "common/error.h"
#include "common/textsafe.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/views/view.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The optimal string alignment distance (Damerau-Levenshtein with adjacent
 * transpositions, each substring edited once), as git's levenshtein.c
 * computes it with equal weights. Names are short: three rows suffice. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return (size_t)-1; /* no near miss is that long */
	size_t rows[3][65], *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t d = prev[j - 1] + cost;
			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
		size_t *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

/* Close: at most 2 edits, and fewer than half the candidate's letters, so
 * that "-x" never suggests "-o" and "sum" is not taken for "run". */
static int close_enough(size_t d, const char *candidate)
{
	return d <= 2 && 2 * d < strlen(candidate);
}

/* The candidates close to word at the least distance: their indexes in out
 * (at most max); how many. */
static size_t nearest(const char *word, const char *const *candidates, size_t n, size_t *out,
		      size_t max)
{
	size_t best = (size_t)-1, found = 0;
	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, candidates[i]);
		if (!close_enough(d, candidates[i]) || d > best)
			continue;
		if (d < best) {
			best = d;
			found = 0;
		}
		if (found < max)
			out[found++] = i;
	}
	return found;
}

void cmd_suggest(char *buf, size_t size, const char *word, const char *const *candidates,
		 size_t n, const char *prefix)
{
	size_t hits[4];
	size_t k = nearest(word, candidates, n, hits, 4);
	buf[0] = '\0';
	if (!k)
		return;
	size_t len = (size_t)snprintf(buf, size, "; did you mean ");
	for (size_t i = 0; i < k && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s'%s%s'",
					i == 0 ? "" : i + 1 == k ? " or " : ", ", prefix,
					candidates[hits[i]]);
	if (len < size)
		snprintf(buf + len, size - len, "?");
}

void cmd_unknown_name(const char *what, const char *name, const char *const *valid, size_t n,
		      const char *more)
{
	char clean[TEXT_CLEAN_SIZE], hint[256], list[1024];
	cmd_suggest(hint, sizeof(hint), name, valid, n, "");
	size_t len = 0;
	list[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", valid[i]);
	if (more && len < sizeof(list))
		snprintf(list + len, sizeof(list) - len, ", %s", more);
	usage_error("unknown %s '%s'%s (%ss: %s)", what, text_clean(clean, sizeof(clean), name), hint,
		    what, list);
}

const struct view *cmd_view_option(const char *name, int (*shown)(const struct view *))
{
	if (strcmp(name, "all") == 0)
		return NULL;
	const struct view *v = view_find(name);
	if (!v) {
		const char *names[64];
		unsigned n = 0;
		for (unsigned i = 0; i < view_registry_count && n < 64; i++)
			if (!shown || shown(&view_registry[i]))
				names[n++] = view_registry[i].name;
		cmd_unknown_name("view", name, names, n, "or all");
	}
	return v;
}

/* A step number of --steps: 1 to 15 digits. */
static int steps_number(const char *s, size_t len, unsigned long long *v)
{
	if (!len || len > 15)
		return -1;
	*v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (unsigned long long)(s[i] - '0');
	}
	return 0;
}

void cmd_parse_steps(const char *s, unsigned long long *first, unsigned long long *end)
{
	char clean[TEXT_CLEAN_SIZE];
	size_t at = strcspn(s, ":-");
	const char *tail = s + at + (s[at] != '\0');
	unsigned long long last = 0;
	if (steps_number(s, at, first) != 0 || (*tail && steps_number(tail, strlen(tail), &last) != 0))
		usage_error("--steps: '%s' is not A:B (steps A to B-1) or A-B (steps A to B)",
			    text_clean(clean, sizeof(clean), s));
	if (s[at] == '\0') { /* one step */
		*end = *first + 1;
		return;
	}
	if (!*tail) { /* to the end */
		*end = 0;
		return;
	}
	if (s[at] == '-')
		last++; /* B included */
	if (last <= *first)
		usage_error("--steps: '%s' ends before it begins", text_clean(clean, sizeof(clean), s));
	*end = last;
}

/* The unknown long option named by arg ("--hlep", "--hlep=x"): its near
 * misses among longopts. */
static void unknown_long(const char *arg, const struct option *longopts)
{
	char name[128], clean[160], hint[256] = "";
	const char *s = arg + 2;
	size_t len = strcspn(s, "=");
	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, s, len);
	name[len] = '\0';
	size_t n = 0, prefixed = 0;
	char many[256] = "";
	for (; longopts && longopts[n].name; n++) {
		if (strncmp(longopts[n].name, name, len) != 0 || !len)
			continue;
		size_t at = strlen(many); /* getopt_long refuses a prefix of several */
		snprintf(many + at, sizeof(many) - at, "%s'--%s'", prefixed++ ? ", " : "",
			 longopts[n].name);
	}
	if (prefixed > 1)
		usage_error("option '--%s' is ambiguous: %s", text_clean(clean, sizeof(clean), name),
			    many);
	const char **names = xmalloc((n ? n : 1) * sizeof(*names));
	for (size_t i = 0; i < n; i++)
		names[i] = longopts[i].name;
	cmd_suggest(hint, sizeof(hint), name, names, n, "--");
	free(names);
	text_clean(clean, sizeof(clean), arg); /* typed by a user, maybe pasted */
	usage_error("unknown option '%s'%s", clean, hint);
}

int cmd_getopt_long(int argc, char **argv, const char *optstring, const struct option *longopts,
		    int *longindex)
{
	/* ':' after any '+' or '-': a missing value comes back as ':', told
	 * apart from an unknown option, whatever the caller's optstring says */
	char spec[128];
	size_t lead = strspn(optstring, "+-");
	const char *rest = optstring + lead;
	if (*rest == ':')
		rest++;
	if (lead + 1 + strlen(rest) >= sizeof(spec))
		BUG("optstring '%s' is too long", optstring);
	memcpy(spec, optstring, lead);
	spec[lead] = ':';
	strcpy(spec + lead + 1, rest);

	opterr = 0;
	int prev = optind;
	int c = getopt_long(argc, argv, spec, longopts, longindex);
	char clean[160];
	if (c == ':')
		usage_error("option '%s' needs a value",
			    text_clean(clean, sizeof(clean), argv[optind - 1]));
	if (c == '?') {
		const char *arg = optind > prev ? argv[optind - 1] : NULL;
		if (arg && strncmp(arg, "--", 2) == 0 && arg[2]) {
			const char *eq = strchr(arg, '=');
			for (size_t i = 0; eq && longopts && longopts[i].name; i++)
				if (longopts[i].has_arg == no_argument &&
				    strlen(longopts[i].name) == (size_t)(eq - arg - 2) &&
				    !strncmp(longopts[i].name, arg + 2, (size_t)(eq - arg - 2)))
					usage_error("option '--%s' takes no value", longopts[i].name);
			unknown_long(arg, longopts);
		}
		if (optopt > ' ' && optopt < 127)
			usage_error("unknown option '-%c'", optopt);
		usage_error("unknown option '%s'", text_clean(clean, sizeof(clean), arg ? arg : "?"));
	}
	if (c != -1 && c != 1 && optarg && strcmp(optarg, "--") == 0) {
		/* the separator taken as a value: "-o --" forgot the value; the
		 * option is the word before it, or holds it ("--output=--") */
		const char *opt = argv[optind - 1];
		if (opt == optarg && optind >= 2)
			opt = argv[optind - 2];
		usage_error("option '%s' needs a value, not '--'",
			    text_clean(clean, sizeof(clean), opt));
	}
	return c;
}

int cmd_job_option(int c, unsigned *skip, unsigned *job_flags, enum time_unit *unit)
{
	switch (c) {
	case CMD_OPT_SKIP_STEPS:
		*skip = cmd_parse_skip_steps(optarg);
		return 1;
	case CMD_OPT_MIXED_JOBS:
		*job_flags |= JOB_OPEN_MIXED;
		return 1;
	case CMD_OPT_TIME_UNIT:
		if (!unit)
			return 0;
		*unit = cmd_parse_time_unit(optarg);
		return 1;
	}
	return 0;
}

int cmd_common_option(int c, char **argv, const char *usage, const char **output, int *force)
{
	if (c == 'o' && output) {
		*output = optarg;
		return 0;
	}
	if (c == 'f' && force) {
		*force = 1;
		return 0;
	}
	if (c == 'h') {
		fputs(usage, stdout);
		return -1;
	}
	usage_error("unknown option '%s'", argv[optind - 1]);
}

uint64_t cmd_parse_size(const char *s, const char *opt)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		usage_error("%s: '%s' is not a size", opt, s);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || v < 4096 || v > (1ull << 30))
		usage_error("%s: '%s' must be between 4K and 1G", opt, s);
	uint64_t p = 4096;
	while (p < v)
		p <<= 1;
	return p;
}

unsigned long cmd_parse_range(const char *s, const char *opt, unsigned long lo, unsigned long hi)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		usage_error("%s: '%s' must be a number from %lu to %lu", opt, s, lo, hi);
	return v;
}

uint64_t cmd_parse_seconds(const char *s, const char *opt)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e7)
		usage_error("%s: '%s' is not a number of seconds", opt, s);
	return (uint64_t)(v * 1e9 + 0.5);
}

void cmd_parse_schedule(const char *spec, char *env, size_t envlen)
{
	static const char *const keys[] = {"wait", "warmup", "active", "repeat", "skip-first"};
	unsigned long long v[5] = {0};
	int seen[5] = {0};
	const char *s = spec;
	if (!*s)
		usage_error("--schedule: empty: give wait=W,warmup=U,active=A[,repeat=R][,skip-first=S]");
	while (*s) {
		const char *eq = strchr(s, '='), *comma = strchr(s, ',');
		if (!comma)
			comma = s + strlen(s);
		if (!eq || eq > comma)
			usage_error("--schedule: '%.*s' is not KEY=N", (int)(comma - s), s);
		size_t klen = (size_t)(eq - s);
		int k = -1;
		for (int i = 0; i < 5; i++)
			if (strlen(keys[i]) == klen && !strncmp(s, keys[i], klen))
				k = i;
		if (klen == 10 && !strncmp(s, "skip_first", 10))
			k = 4;
		if (k < 0)
			usage_error("--schedule: unknown key '%.*s' (wait, warmup, active, repeat, skip-first)",
				    (int)klen, s);
		if (seen[k])
			usage_error("--schedule: '%s' given twice", keys[k]);
		seen[k] = 1;
		const char *num = eq + 1;
		char *end;
		errno = 0;
		v[k] = strtoull(num, &end, 10);
		if (errno || end == num || end != comma || *num == '-' || *num == '+' || v[k] > 1000000000ull)
			usage_error("--schedule: %s='%.*s' is not a number from 0 to 1000000000", keys[k],
				    (int)(comma - num), num);
		s = *comma ? comma + 1 : comma;
		if (*comma && !*s)
			usage_error("--schedule: '%s' ends with a comma", spec);
	}
	if (!seen[2] || v[2] == 0)
		usage_error("--schedule: active must be at least 1 ('%s')", spec);
	snprintf(env, envlen, "%llu,%llu,%llu,%llu,%llu", v[0], v[1], v[2], v[3], v[4]);
}
