/*
 * import.c - gprof-dl import: a chrome-trace JSON file from another profiler
 * (PyTorch's, Paddle's) or from gprof-dl's own export, as a gprof-dl trace.
 *
 *   gprof-dl import FILE.json[.gz] [-o FILE.gpdl] [--force] [--quiet]
 *
 * The output name defaults to FILE with .json or .json.gz replaced by .gpdl,
 * and an existing file is never overwritten without --force. The input is
 * recognised by its content (formats/import/import.h), so a gzip'ed file
 * needs no particular name. On success one line on standard error says what
 * was imported, and while a long import runs, a progress line when standard
 * error is a terminal.
 *
 * Exit status: 0 written, 1 the input is not a readable chrome trace or the
 * output cannot be written (nothing is left behind), 2 usage.
 */
#include "cmd/cmd.h"
#include "formats/import/import.h"
#include "formats/trace/trace_open.h"
#include "common/progress.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char import_usage[] =
	"usage: gprof-dl import FILE.json[.gz] [-o OUT] [--force] [--quiet]\n"
	"\n"
	"    -o, --output OUT\n"
	"                   the trace to write (default: FILE with .json or .json.gz\n"
	"                   replaced by .gpdl)\n"
	"    -f, --force    overwrite OUT if it exists\n"
	"    -q, --quiet    say nothing on success\n"
	"    -h, --help     show this help\n"
	"\n"
	"Reads the chrome-trace JSON of the PyTorch profiler (torch.profiler, and the\n"
	"older torch.autograd.profiler), PaddlePaddle's profiler and gprof-dl's own\n"
	"export, plain or gzip'ed. See 'man gprof-dl-import'.\n";

struct import_opts {
	int force, quiet;
	const char *input;
	const char *output;
};

static void parse_args(int argc, char **argv, struct import_opts *o)
{
	static const struct option longopts[] = {
		CMD_OPTIONS_OUTPUT,
		{"quiet", no_argument, NULL, 'q'},
		CMD_OPTIONS_END,
	};
	int c;
	opterr = 0;
	optind = 1;
	while ((c = cmd_getopt_long(argc, argv, ":o:fqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			o->quiet = 1;
			break;
		default:
			if (cmd_common_option(c, argv, import_usage, &o->output, &o->force) < 0)
				exit(0);
		}
	}
	if (optind >= argc)
		usage_error("no JSON file given");
	if (argc - optind > 1)
		usage_error("one file at a time ('%s' is one too many)", argv[optind + 1]);
	o->input = argv[optind];
	if (strcmp(o->input, "-") == 0 && !o->output)
		usage_error("standard input has no name to make the output's from: give -o FILE");
	if (o->output && !*o->output)
		usage_error("empty output name");
	if (o->output && strcmp(o->output, "-") == 0)
		usage_error("a trace is written to a file, not to standard output");
}

static void import_tick(uint64_t events)
{
	progress_tick(events, "events");
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

/* FILE.json, FILE.json.gz -> FILE.gpdl; anything else gets .gpdl appended. */
static char *default_output(const char *input)
{
	size_t n = strlen(input);
	char *out = xmalloc(n + sizeof(".gpdl"));
	memcpy(out, input, n + 1);
	if (ends_with(input, n, ".json.gz"))
		out[n - 8] = '\0';
	else if (ends_with(input, n, ".json"))
		out[n - 5] = '\0';
	strcat(out, ".gpdl");
	return out;
}

int cmd_import(int argc, char **argv)
{
	struct import_opts o = {0};
	struct import_stats st;
	char err[1024];

	parse_args(argc, argv, &o);
#ifdef M_MMAP_THRESHOLD
	/* Blocks over 128 KiB are mapped, whatever was freed before: glibc
	 * raises that threshold to each mapped block freed, and the blocks it
	 * then takes from the heap as the tables grow leave holes behind them:
	 * bench/speed/run's Kineto file of 2 M events took 12.2 MB at its peak
	 * with the rising threshold and takes 10.9 MB with this, of 0.5 M
	 * events 9.4 MB and 9.3 MB. */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
	char *defname = o.output ? NULL : default_output(o.input);
	const char *path = o.output ? o.output : defname;
	/* a line on a terminal's stderr when the import takes more than a second */
	progress_enable(!o.quiet);
	progress_phase("importing '%s'", o.input);
	import_set_progress(import_tick);
	/* a pipe or standard input is read once, into a copy the importer can
	 * look at twice (its head, then the whole) */
	const char *from = trace_open_path(o.input, err, sizeof(err));
	int rc = -1;
	if (from) {
		rc = import_chrome_trace(from, path, o.force, &st, err, sizeof(err));
		if (rc < 0)
			trace_open_name_input(err, sizeof(err), from, o.input);
	}
	import_set_progress(NULL);
	progress_done();
	if (rc < 0) {
		error("%s", err);
	} else if (!o.quiet) {
		unsigned long long events = st.events, counters = st.counters, tracks = st.tracks;
		fprintf(stderr, "gprof-dl: imported %llu events", events);
		if (counters)
			fprintf(stderr, " and %llu counter samples", counters);
		char in[TEXT_CLEAN_SIZE], out[TEXT_CLEAN_SIZE];
		fprintf(stderr, " on %llu tracks from '%s' (%s) into '%s'", tracks,
			text_clean(in, sizeof(in), o.input), import_format_name(st.format),
			text_clean(out, sizeof(out), path));
		/* what had to be dropped, then repaired, reason by reason, as the
		 * trace carries it for info and summary: "; dropped 1000: 1000
		 * end without begin" */
		for (int loss = 1; loss >= 0; loss--) {
			unsigned long long all = 0;
			for (unsigned r = 0; r < TRACE_DROP_REASON_COUNT; r++)
				if (trace_drop_reason_is_loss(r) == loss)
					all += st.fixed[r];
			if (!all)
				continue;
			fprintf(stderr, "; %s %llu:", loss ? "dropped" : "repaired", all);
			const char *sep = " ";
			for (unsigned r = 0; r < TRACE_DROP_REASON_COUNT; r++) {
				if (trace_drop_reason_is_loss(r) != loss || !st.fixed[r])
					continue;
				fprintf(stderr, "%s%llu %s", sep, (unsigned long long)st.fixed[r],
					trace_drop_reason_name(r));
				sep = ", ";
			}
		}
		fputc('\n', stderr);
	}
	free(defname);
	return rc < 0 ? 1 : 0;
}
