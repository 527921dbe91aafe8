/*
 * cmd.h - the subcommands of the gprof-dl executable, one file each in cmd/.
 *
 * Each takes the arguments after its name (argv[0] is the subcommand's name)
 * and returns the process exit status: 0 success, 1 bad input or failure, 2
 * usage error (usage_error() exits with it directly).
 */
#ifndef GPDL_CMD_H
#define GPDL_CMD_H

#include "lib/analysis/table/table.h"

#include <stddef.h>

struct option;

int cmd_advise(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_summary(int argc, char **argv);

/* The directory holding the running gprof-dl executable (from /proc/self/exe). */
const char *gpdl_self_dir(void);
/* A count given to an option ("--top", "--skip-steps"); a usage error
 * "invalid OPTION 'S' (WHAT)" when s is not one. */
unsigned cmd_parse_count(const char *option, const char *s, const char *what);
/* run's --buffer-size: bytes (K, M, G suffixes), 4K to 1G, rounded up to
 * a power of two; a usage error naming opt otherwise. */
uint64_t cmd_parse_size(const char *s, const char *opt);
/* A number from lo to hi; a usage error naming opt otherwise. */
unsigned long cmd_parse_range(const char *s, const char *opt, unsigned long lo, unsigned long hi);
/* run's --delay and --duration: seconds, fractions allowed, as nanoseconds. */
uint64_t cmd_parse_seconds(const char *s, const char *opt);
/* run's --schedule wait=W,warmup=U,active=A[,repeat=R][,skip-first=S], each
 * key at most once, as torch.profiler.schedule's arguments (repeat 0: until
 * the end); into "W,U,A,R,S" for GPROF_DL_SCHEDULE. */
void cmd_parse_schedule(const char *spec, char *env, size_t envlen);
/* --skip-steps N of bench and summary. */
unsigned cmd_parse_skip_steps(const char *s);
/* --time-unit of summary, bench and diff; a usage error when not a unit. */
enum time_unit cmd_parse_time_unit(const char *s);

/* getopt_long, as every subcommand calls it: opterr off, and the errors
 * said here as usage errors (exit 2): a missing value, an unknown option
 * with its near misses ("unknown option '--hlep'; did you mean '--help'?"),
 * and a value that is "--" (`run -o -- true`: the value was forgotten).
 * A ':' is added to optstring (after its '+' or '-'), so the caller sees
 * neither ':' nor '?'. */
int cmd_getopt_long(int argc, char **argv, const char *optstring, const struct option *longopts,
		    int *longindex);
/* The options of the subcommands that write a file, as their tables end:
 * --output FILE (-o), --force (-f); and --help (-h), which every one has. */
#define CMD_OPTIONS_OUTPUT {"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'}
#define CMD_OPTION_HELP {"help", no_argument, NULL, 'h'}
/* --help and the end of a table, as every table but export's ends. */
#define CMD_OPTIONS_END CMD_OPTION_HELP, {NULL, 0, NULL, 0}
/* The options of the commands that read a job's steps (advise, bench, diff,
 * report, summary), with one code each across them: --skip-steps N and
 * --mixed-jobs; --time-unit U of those that print times. */
enum {
	CMD_OPT_SKIP_STEPS = 200,
	CMD_OPT_MIXED_JOBS,
	CMD_OPT_TIME_UNIT,
	CMD_OPT_OP_DETAIL,
	CMD_OPT_WIDE,
	CMD_OPT_FORMAT,
	CMD_OPT_VIEW,
	CMD_OPT_TOP,
};
#define CMD_OPTIONS_JOB                                                      \
	{"skip-steps", required_argument, NULL, CMD_OPT_SKIP_STEPS},         \
	{"mixed-jobs", no_argument, NULL, CMD_OPT_MIXED_JOBS}
#define CMD_OPTION_TIME_UNIT {"time-unit", required_argument, NULL, CMD_OPT_TIME_UNIT}
/* The cases every option switch has, for its default branch: -o FILE into
 * *output and -f into *force (0); -h prints usage on standard output (-1:
 * the caller stops, exit status 0). Any other c is one of the caller's
 * own options its switch missed: a usage error naming it. */
int cmd_common_option(int c, char **argv, const char *usage, const char **output, int *force);
/* The options summary and diff share. --view V and --top N: each command
 * takes them in its own switch (the views it can show, its rows). The rest
 * set their struct summary_opts alike through cmd_summary_option():
 * --op-detail, --wide, --format text|csv|json, --time-unit U and
 * --mixed-jobs (its table entry is CMD_OPTIONS_JOB's); it returns 1 when c
 * was one of them (done), 0 when not. */
#define CMD_OPTIONS_SUMMARY                                             \
	{"view", required_argument, NULL, CMD_OPT_VIEW},                \
	{"top", required_argument, NULL, CMD_OPT_TOP},                  \
	{"op-detail", no_argument, NULL, CMD_OPT_OP_DETAIL},            \
	{"wide", no_argument, NULL, CMD_OPT_WIDE},                      \
	{"format", required_argument, NULL, CMD_OPT_FORMAT}, CMD_OPTION_TIME_UNIT
struct summary_opts;
int cmd_summary_option(int c, struct summary_opts *o);
/* CMD_OPTIONS_JOB's options and --time-unit into *skip, *job_flags and
 * *unit (NULL: the command has no --time-unit); 1 when c was one of them
 * (done), 0 when not. */
int cmd_job_option(int c, unsigned *skip, unsigned *job_flags, enum time_unit *unit);
/* "; did you mean 'PREFIXcand'?" (or "'a' or 'b'") into buf, "" when no
 * candidate is close to word: at most 2 edits (Damerau-Levenshtein: a letter
 * added, dropped, changed, or two swapped), under half the candidate's
 * length; the candidates at the least distance are named. */
void cmd_suggest(char *buf, size_t size, const char *word, const char *const *candidates,
		 size_t n, const char *prefix);
/* A usage error (exit 2) for a name that is none of the valid ones: "unknown
 * WHAT 'NAME'; did you mean 'x'? (WHATs: a, b, c)", with more appended to
 * the list when not NULL ("or all"). */
void cmd_unknown_name(const char *what, const char *name, const char *const *valid, size_t n,
		      const char *more) __attribute__((noreturn));
/* --view NAME of summary and diff: the view of that name, NULL for "all"; a
 * usage error naming the views there are (those shown is true of; NULL:
 * every one), "or all", when NAME is neither. */
struct view;
const struct view *cmd_view_option(const char *name, int (*shown)(const struct view *));
/* --steps of run and export, one syntax for both: A:B is steps A to B-1
 * (half-open, as Paddle's scheduler and Python's slices), A-B steps A to B
 * (B included), A one step, A: or A- from A to the end; step numbers count
 * from 0. Sets [*first, *end) (*end 0: to the end); a usage error naming
 * the option otherwise. */
void cmd_parse_steps(const char *s, unsigned long long *first, unsigned long long *end);

#endif
