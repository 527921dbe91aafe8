/*
 * main.c - the gprof-dl executable: global options and the dispatch table.
 */
#include "cmd/cmd.h"
#include "formats/trace/trace.h"
#include "gpdl-config.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* Alphabetical, as `gprof-dl --help` lists them. */
static const struct command commands[] = {
	{"advise", cmd_advise, "say what to change, and why, with the evidence: findings for CI"},
	{"bench", cmd_bench, "measure training steps: reader_cost, batch_cost, ips (Perf Summary)"},
	{"diff", cmd_diff, "compare two traces view by view: what got slower, what is new"},
	{"export", cmd_export, "convert a trace to chrome-trace JSON (Perfetto, HTA) or to CSV files"},
	{"import", cmd_import, "convert a PyTorch, Paddle or chrome-trace JSON file to a trace"},
	{"info", cmd_info, "show a trace's header, processes, threads, counts, drops and damage"},
	{"report", cmd_report, "write one offline HTML file of charts and tables to look at"},
	{"run", cmd_run, "run a program under the collector and record a trace"},
	{"summary", cmd_summary, "print the summary tables of one or more traces"},
};

const char *gpdl_self_dir(void)
{
	static char dir[PATH_MAX];
	if (!dir[0]) {
		ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
		if (n <= 0)
			die_errno("cannot find the gprof-dl executable ('/proc/self/exe')");
		dir[n] = '\0';
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
	}
	return dir;
}

static void print_help(FILE *f)
{
	fprintf(f, "usage: gprof-dl [--version] [--help] <command> [<args>]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "   %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nSee 'gprof-dl help <command>' or 'man gprof-dl-<command>'.\n");
}

static void print_version(void)
{
	printf("gprof-dl %s\n", GPDL_VERSION);
	printf("trace format %d.%d\n", TRACE_FORMAT_VERSION_MAJOR, TRACE_FORMAT_VERSION_MINOR);
	/* The Python package is built only where Python's headers were found:
	 * look for it where `gprof-dl run` does. */
	const char *dir = gpdl_self_dir();
	char *pkg = xmalloc(strlen(dir) + strlen(GPDL_COLLECTOR_RELDIR) + 64);
	sprintf(pkg, "%s/%s/gprof-dl/python/gprof_dl/_native.abi3.so", dir, GPDL_COLLECTOR_RELDIR);
	int python = access(pkg, R_OK) == 0;
	free(pkg);
	printf("collector sources:%s%s%s\n", GPDL_HAVE_NVTX ? " nvtx" : "", GPDL_HAVE_CUPTI ? " cupti" : "",
	       python ? " python" : "");
	if (!GPDL_HAVE_NVTX)
		printf("  nvtx: not built (no NVTX headers found at configure time)\n");
	if (!GPDL_HAVE_CUPTI)
		printf("  cupti: not built (no CUPTI headers found at configure time)\n");
	if (!python)
		printf("  python: not built (no Python headers found at configure time)\n");
}

/* After a command returns its output must really have reached its destination:
 * a full disk is an error, not a silently short report. */
static int finish_stdout(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return status;
		error("write to standard output failed: %s", strerror(errno));
		return status ? status : 1;
	}
	return status;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

/* A word that is no command: a usage error naming the nearest ones, as git
 * does ("'sumary' is not a gprof-dl command; did you mean 'summary'?"). */
__attribute__((noreturn)) static void not_a_command(const char *name)
{
	enum { N = sizeof(commands) / sizeof(commands[0]) };
	const char *names[N + 2];
	for (size_t i = 0; i < N; i++)
		names[i] = commands[i].name;
	names[N] = "help";
	names[N + 1] = "version";
	char hint[256], clean[TEXT_CLEAN_SIZE];
	cmd_suggest(hint, sizeof(hint), name, names, N + 2, "");
	usage_error("'%s' is not a gprof-dl command%s", text_clean(clean, sizeof(clean), name),
		    hint);
}

static int run_command(const struct command *c, int argc, char **argv)
{
	error_set_command(c->name);
	return finish_stdout(c->fn(argc, argv));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_help(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (!strcmp(name, "help") && argc > 2) {
		/* git's `help CMD`: the command's own help, as `CMD --help` */
		const struct command *c = find_command(argv[2]);
		if (!c && (!strcmp(argv[2], "help") || !strcmp(argv[2], "version"))) {
			print_help(stdout); /* no help of their own: the list that names them */
			return finish_stdout(0);
		}
		if (!c)
			not_a_command(argv[2]);
		char *args[] = {(char *)c->name, (char *)"--help", NULL};
		return run_command(c, 2, args);
	}
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		print_help(stdout);
		return finish_stdout(0);
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
		print_version();
		return finish_stdout(0);
	}
	const struct command *c = find_command(name);
	if (c)
		return run_command(c, argc - 1, argv + 1);
	if (name[0] == '-') {
		static const char *const global[] = {"help", "version"};
		char hint[128], clean[TEXT_CLEAN_SIZE];
		cmd_suggest(hint, sizeof(hint), name + 1 + (name[1] == '-'), global, 2, "--");
		usage_error("unknown option '%s'%s", text_clean(clean, sizeof(clean), name), hint);
	}
	not_a_command(name);
}
