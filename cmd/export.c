/*
 * export.c - gprof-dl export: a trace converted for other tools.
 *
 *   gprof-dl export --chrome FILE [-o OUT] [--force]
 *
 * The output name defaults to FILE with .gpdl replaced by .json, and an
 * existing file is never overwritten without --force; "-o -" writes to
 * standard output. The export streams (formats/export_writer.h), so it runs in
 * constant memory whatever the size of the trace.
 *
 * Exit status: 0 written (a damaged trace is exported up to its damage, with
 * a warning), 1 the input is not a readable trace or the output could not be
 * written in full (a partial file is removed), 2 usage.
 */
#include "cmd/cmd.h"
#include "formats/chrome/chrome_writer.h"
#include "lib/common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT_BUFFER (1u << 20) /* big writes: the export is I/O bound */

static const char export_usage[] =
	"usage: gprof-dl export --chrome FILE [-o OUT] [--force]\n"
	"\n"
	"    --chrome       write chrome-trace JSON, for Perfetto and chrome://tracing\n"
	"    -o, --output OUT\n"
	"                   where to write (default: FILE with .gpdl replaced by .json;\n"
	"                   '-' for standard output)\n"
	"    -f, --force    overwrite OUT if it exists\n"
	"    -h, --help     show this help\n";

struct export_opts {
	int chrome;
	int force;
	const char *input;
	const char *output;
};

static void parse_args(int argc, char **argv, struct export_opts *o)
{
	enum { OPT_CHROME = 256, OPT_CSV };
	static const struct option longopts[] = {
		{"chrome", no_argument, NULL, OPT_CHROME},
		{"csv", no_argument, NULL, OPT_CSV},
		{"output", required_argument, NULL, 'o'},
		{"force", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	opterr = 0;
	optind = 1;
	/* Options may follow the file (export --chrome t.gpdl -o t.json), so
	 * GNU getopt permutes; ':' first tells a missing value from an unknown
	 * option. */
	while ((c = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CHROME:
			o->chrome = 1;
			break;
		case OPT_CSV:
			usage_error("--csv is not in this version of gprof-dl; use --chrome");
		case 'o':
			o->output = optarg;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'h':
			fputs(export_usage, stdout);
			exit(0);
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!o->chrome)
		usage_error("say which format to export: --chrome");
	if (optind >= argc)
		usage_error("no trace file given");
	if (argc - optind > 1)
		usage_error("one trace file at a time ('%s' is one too many)", argv[optind + 1]);
	o->input = argv[optind];
	if (o->output && !*o->output)
		usage_error("empty output name");
}

/* FILE.gpdl -> FILE.json; anything else gets .json appended. */
static char *default_output(const char *input)
{
	size_t n = strlen(input);
	char *out = xmalloc(n + sizeof(".json"));
	memcpy(out, input, n + 1);
	if (n > 5 && strcmp(input + n - 5, ".gpdl") == 0)
		out[n - 5] = '\0';
	strcat(out, ".json");
	return out;
}

/* Opens the output; NULL after an error message. *removable says whether
 * a failed export may delete it: a regular file, never a device (-o /dev/full
 * run as root must not remove /dev/full). */
static FILE *open_output(const char *path, const char *input, int force, int *removable)
{
	struct stat in, out;
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
	if (stat(path, &out) == 0) {
		if (stat(input, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
			error("'%s' is the trace being exported; choose another output", path);
			return NULL;
		}
		/* --force guards files; a pipe, a terminal or /dev/null loses
		 * nothing when written to (-o /dev/stdout, -o >(gzip >t.json.gz)) */
		if (!S_ISREG(out.st_mode))
			flags = O_WRONLY | O_CLOEXEC;
		else if (!force) {
			error("'%s' exists; use --force to overwrite it, or -o to choose another name",
			      path);
			return NULL;
		}
	}
	int fd = open(path, flags, 0666);
	if (fd < 0) {
		error("cannot create '%s': %s", path, strerror(errno));
		return NULL;
	}
	*removable = fstat(fd, &out) == 0 && S_ISREG(out.st_mode);
	FILE *f = fdopen(fd, "w");
	if (!f) {
		error("cannot create '%s': %s", path, strerror(errno));
		close(fd);
		if (*removable)
			unlink(path);
	}
	return f;
}

/* Flushes and closes the output; -1 after an error message when any write
 * failed, the one that stopped the export (failed) included. */
static int close_output(FILE *f, const char *path, int to_stdout, int removable, int failed)
{
	int e = 0;
	errno = 0;
	if (fflush(f) != 0 || ferror(f) || failed)
		e = errno ? errno : EIO;
	if (!to_stdout && fclose(f) != 0 && !e)
		e = errno ? errno : EIO;
	if (!e)
		return 0;
	error("cannot write '%s': %s", to_stdout ? "standard output" : path, strerror(e));
	if (to_stdout) {
		/* said once here; main's own check of stdout must not say it again */
		__fpurge(f);
		clearerr(f);
	} else if (removable) {
		unlink(path); /* a short JSON file is worse than none */
	}
	return -1;
}

int cmd_export(int argc, char **argv)
{
	struct export_opts o = {0};
	char err[512];
	parse_args(argc, argv, &o);

	struct trace_reader *r = trace_reader_open(o.input, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "gprof-dl: %s\n", err);
		return 1;
	}
	char *defname = o.output ? NULL : default_output(o.input);
	const char *path = o.output ? o.output : defname;
	int to_stdout = strcmp(path, "-") == 0;
	int removable = 0;
	FILE *out = to_stdout ? stdout : open_output(path, o.input, o.force, &removable);
	if (!out) {
		trace_reader_close(r);
		free(defname);
		return 1;
	}
	static char buffer[EXPORT_BUFFER];
	setvbuf(out, buffer, _IOFBF, sizeof(buffer));

	struct export_writer *w = chrome_writer_new(out);
	/* Only a failed write stops an export early: the reader reports damage
	 * through trace_reader_damage(), not through the run's result. */
	int failed = export_writer_run(w, r) != 0;
	uint64_t events = w->events;
	export_writer_destroy(w);
	int status = close_output(out, path, to_stdout, removable, failed) ? 1 : 0;
	uint64_t offset = 0;
	const char *damage = trace_reader_damage(r, &offset);
	if (status == 0 && damage)
		warning("'%s': %s at offset %llu; exported the %llu events before it", o.input,
			damage, (unsigned long long)offset, (unsigned long long)events);
	trace_reader_close(r);
	free(defname);
	return status;
}
