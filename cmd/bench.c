/*
 * bench.c - `gprof-dl bench`: Paddle's Perf Summary of one or more traces,
 * their training steps pooled: reader_cost, batch_cost, ips and the reader
 * ratio, as the text table or as one JSON object for scripts and CI.
 *
 *   gprof-dl bench FILE... [--skip-steps K] [--time-unit U] [--format text|json]
 *
 * The numbers come from perf.h (definitions there and in gprof-dl-bench(1));
 * the per-step statistics (struct perf.step) are what a comparison against
 * a baseline will build on.
 *
 * Exit status: 0 printed; 1 a file that cannot be read, or that holds no
 * training step, or output that cannot be written; 2 usage.
 */
#include "cmd/cmd.h"
#include "formats/json/json_writer.h"
#include "lib/analysis/perf.h"
#include "lib/analysis/progress.h"
#include "lib/common/error.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char bench_usage[] =
	"usage: gprof-dl bench FILE... [--skip-steps K] [--time-unit s|ms|us|ns]\n"
	"                      [--format text|json]\n"
	"\n"
	"Print the Perf Summary of the training steps (ProfileStep ranges) of one or\n"
	"more traces, pooled: reader_cost, batch_cost, ips and the reader ratio.\n"
	"\n"
	"  --skip-steps K     leave out the first K steps of each trace as warm-up\n"
	"                     (default 10; never more than half of a trace's steps)\n"
	"  --time-unit UNIT   s (default), ms, us or ns, for the text table\n"
	"  --format FORMAT    text (default) or json (times in seconds)\n"
	"  -h, --help         show this help\n"
	"\n"
	"See gprof-dl-bench(1) for the definitions.\n";

enum bench_format {
	BENCH_TEXT,
	BENCH_JSON,
};

struct bench_opts {
	unsigned skip;
	enum time_unit unit;
	enum bench_format format;
};

enum {
	OPT_SKIP_STEPS = 256,
	OPT_TIME_UNIT,
	OPT_FORMAT,
};

static const struct option bench_options[] = {
	{"skip-steps", required_argument, NULL, OPT_SKIP_STEPS},
	{"time-unit", required_argument, NULL, OPT_TIME_UNIT},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* Parses the options into o; returns the index of the first file in argv,
 * or -1 after --help. */
static int bench_parse(int argc, char **argv, struct bench_opts *o)
{
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", bench_options, NULL)) != -1) {
		switch (c) {
		case OPT_SKIP_STEPS:
			o->skip = cmd_parse_skip_steps(optarg);
			break;
		case OPT_TIME_UNIT:
			if (time_unit_parse(optarg, &o->unit) != 0)
				usage_error("unknown time unit '%s' (s, ms, us or ns)", optarg);
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") == 0)
				o->format = BENCH_TEXT;
			else if (strcmp(optarg, "json") == 0)
				o->format = BENCH_JSON;
			else
				usage_error("unknown format '%s' (text or json)", optarg);
			break;
		case 'h':
			fputs(bench_usage, stdout);
			return -1;
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_error("no trace file given");
	return optind;
}

static void json_stat(struct json_writer *w, const char *key, const struct perf_stat *st,
		      double scale)
{
	json_key(w, key);
	json_begin_object(w);
	json_key(w, "avg");
	json_double(w, st->avg / scale);
	json_key(w, "max");
	json_double(w, st->max / scale);
	json_key(w, "min");
	json_double(w, st->min / scale);
	json_end_object(w);
}

/* One object, keys in a fixed order (gprof-dl-bench(1)); times in seconds. */
static int bench_json(const struct analysis *a, const struct perf *p, FILE *out)
{
	struct json_writer w;
	json_writer_init(&w, out, 1);
	json_begin_object(&w);
	json_key(&w, "schema");
	json_string(&w, "gprof-dl-bench/1");
	json_key(&w, "files");
	json_begin_array(&w);
	for (uint32_t i = 0; i < a->store.nfiles; i++)
		json_string(&w, a->store.files[i].path);
	json_end_array(&w);
	json_key(&w, "steps");
	json_uint(&w, p->steps);
	json_key(&w, "skipped");
	json_uint(&w, p->skipped);
	json_key(&w, "counted");
	json_uint(&w, p->counted);
	json_key(&w, "ips_unit");
	json_string(&w, perf_ips_unit(p));
	json_key(&w, "time_unit");
	json_string(&w, "s");
	json_key(&w, "reader_ratio");
	json_double(&w, p->reader_ratio);
	json_stat(&w, "reader_cost", &p->reader_ns, 1e9);
	json_stat(&w, "batch_cost", &p->batch_ns, 1e9);
	json_stat(&w, "ips", &p->ips, 1.0);
	json_end_object(&w);
	fputc('\n', out);
	return json_writer_error(&w) ? -1 : 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o = {.skip = PERF_SKIP_DEFAULT, .unit = TIME_UNIT_S, .format = BENCH_TEXT};
	int first = bench_parse(argc, argv, &o);
	if (first < 0)
		return 0;
	struct analysis a;
	analysis_init(&a);
	progress_enable(1); /* only shown on a terminal, after a second */
	int loaded = cmd_load_traces(&a, argc - first, argv + first, "measured");
	progress_done();
	if (loaded != 0) {
		analysis_free(&a);
		return 1;
	}
	struct perf p;
	perf_compute(&p, &a, o.skip);
	int rc = 0;
	if (p.files_without_steps) {
		error("'%s': no training steps (ProfileStep ranges) to measure",
		      a.store.files[p.first_without_steps].path);
		rc = 1;
	} else if (o.format == BENCH_JSON) {
		rc = bench_json(&a, &p, stdout) ? 1 : 0;
	} else {
		struct table *t = perf_table(&p, "perf", "Perf Summary", a.store.nfiles);
		struct table_style st = {.unit = o.unit};
		table_render_text(t, stdout, &st);
		table_free(t);
	}
	perf_free(&p);
	analysis_free(&a);
	return rc;
}
