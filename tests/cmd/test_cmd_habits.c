/*
 * test_cmd_habits.c - what users of git, nsys and torch.profiler expect of
 * the gprof-dl executable (issue 17, parts 5 and 6), run as a user runs it
 * (GPDL_BIN):
 *
 *   - `help CMD` is CMD's help; a near miss of a command or option is a
 *     usage error (2) that names the nearest ("did you mean"), a far one
 *     names none;
 *   - an option's value that is "--" is a usage error, in every command;
 *   - export --steps A-B and --window START:END keep exactly the events
 *     that begin inside, counted here from the events this test wrote;
 *   - export says what it wrote, and where; its chrome steps are Kineto's
 *     ProfilerStep#N, one per step of the trace, the tables keeping
 *     Paddle's ProfileStep;
 *   - the progress bar is drawn on a terminal (a pty) and never into a
 *     pipe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/analysis/tracebuild.h"
#include "tests/cmd/cmdrun.h"

#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif

#define RUN(sub, ...) cmd_run(GPDL_BIN, sub, (const char *const[]){__VA_ARGS__, NULL})

static void expect_usage(struct cmd_result r, const char *message)
{
	assert_int_equal(r.status, 2);
	assert_contains(r.err, message);
	assert_string_equal(r.out, "");
	cmd_result_free(&r);
}

/* ---- help and "did you mean" ----------------------------------------------- */

static void test_help_command(void **state)
{
	(void)state;
	struct cmd_result a = RUN("help", "run"), b = RUN("run", "--help");
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_contains(a.out, "usage: gprof-dl run");
	assert_string_equal(a.out, b.out);
	assert_string_equal(a.err, "");
	cmd_result_free(&a);
	cmd_result_free(&b);

	a = RUN("help", "export");
	assert_int_equal(a.status, 0);
	assert_contains(a.out, "usage: gprof-dl export");
	assert_contains(a.out, "--window START:END");
	cmd_result_free(&a);

	/* alone, still the global help */
	a = cmd_run(GPDL_BIN, "help", (const char *const[]){NULL});
	assert_int_equal(a.status, 0);
	assert_contains(a.out, "commands:");
	assert_contains(a.out, "See 'gprof-dl help <command>'");
	cmd_result_free(&a);
}

/* run --steps takes export's A-B too, and hands the collector A:B (issue 25). */
static void test_run_steps_syntax(void **state)
{
	(void)state;
	char out[600];
	snprintf(out, sizeof(out), "%s/steps-run.gpdl", tb_dir());
	const char *const cases[][2] = {{"3-5", "3:6\n"}, {"3:6", "3:6\n"}, {"7", "7:8\n"},
					{"8-", "8:\n"},   {"8:", "8:\n"}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cmd_result r = RUN("run", "-q", "-f", "-o", out, "--no-gpu", "--no-python",
					  "--steps", cases[i][0], "--", "/bin/sh", "-c",
					  "echo \"$GPROF_DL_STEPS\"");
		assert_int_equal(r.status, 0);
		assert_string_equal(r.out, cases[i][1]);
		cmd_result_free(&r);
	}
	expect_usage(RUN("run", "--steps", "5-3", "--", "true"), "--steps: '5-3' ends before it begins");
	expect_usage(RUN("run", "--steps", "x", "--", "true"),
		     "--steps: 'x' is not A:B (steps A to B-1) or A-B (steps A to B)");
}

static void test_did_you_mean(void **state)
{
	(void)state;
	expect_usage(RUN("sumary", "x.gpdl"),
		     "'sumary' is not a gprof-dl command; did you mean 'summary'?");
	expect_usage(RUN("help", "sumary"), "did you mean 'summary'?");
	expect_usage(RUN("expotr", "x"), "did you mean 'export'?"); /* a transposition is 1 */
	expect_usage(RUN("rn", "x"), "did you mean 'run'?");
	expect_usage(RUN("--hepl", "x"), "unknown option '--hepl'; did you mean '--help'?");
	expect_usage(RUN("run", "--hlep"), "unknown option '--hlep'; did you mean '--help'?");
	expect_usage(RUN("summary", "--veiw", "v", "x.gpdl"), "did you mean '--view'?");
	expect_usage(RUN("export", "--chorme", "x.gpdl"), "did you mean '--chrome'?");
	expect_usage(RUN("info", "--hepl"), "did you mean '--help'?");
	expect_usage(RUN("diff", "--topp", "3"), "did you mean '--top'?");
	expect_usage(RUN("import", "--forec", "x.json"), "did you mean '--force'?");
	/* names of views and sort keys (issue 25): the nearest, and the list */
	expect_usage(RUN("summary", "--view", "modle", "x.gpdl"),
		     "unknown view 'modle'; did you mean 'model'? (views: perf, device, overview, "
		     "model, distributed, operator, kernel, memory-manipulation, userdefined, memory, "
		     "nvprof, steps, timeline, advice, or all)\n");
	expect_usage(RUN("summary", "--sorted-by", "cpu-totl", "x.gpdl"),
		     "unknown sort key 'cpu-totl'; did you mean 'cpu-total'? (sort keys: cpu-total, "
		     "cpu-avg, cpu-max, cpu-min, gpu-total, gpu-avg, gpu-max, gpu-min, self, duration, "
		     "dataloader, forward, backward, optimization, others)\n");
	expect_usage(RUN("summary", "--sorted-by", "fwd", "x.gpdl"), "unknown sort key 'fwd' (sort");
	expect_usage(RUN("diff", "--view", "operater", "a.gpdl", "b.gpdl"),
		     "unknown view 'operater'; did you mean 'operator'? (views: ");

	/* far from everything: no guess */
	const char *const far[][2] = {{"xyzzy", NULL}, {"run", "--zzzzzz"}, {"export", "--qq"}};
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		struct cmd_result r = far[i][1] ? RUN(far[i][0], far[i][1])
						: cmd_run(GPDL_BIN, far[i][0], (const char *const[]){NULL});
		assert_int_equal(r.status, 2);
		assert_null(strstr(r.err, "did you mean"));
		assert_int_equal(strncmp(r.err, "gprof-dl: ", 10), 0);
		assert_contains(r.err, "\nsee 'gprof-dl ");
		cmd_result_free(&r);
	}
	/* a prefix of two options names both */
	struct cmd_result amb = RUN("summary", "x.gpdl", "--s", "1");
	assert_contains(amb.err, "'--sorted-by'");
	assert_contains(amb.err, "'--skip-steps'");
	expect_usage(amb, "option '--s' is ambiguous: ");
	/* a value given to a switch */
	expect_usage(RUN("info", "--help=3"), "option '--help' takes no value");
}

/* ---- "--" is no option's value ---------------------------------------------- */

static void test_separator_value(void **state)
{
	(void)state;
	const char *t = tb_perf_a();
	unlink("--"); /* in the test's directory, where run -o -- would write */
	struct {
		const char *sub;
		const char *args[6];
		const char *opt;
	} cases[] = {
		{"run", {"-o", "--", "true", NULL}, "'-o'"},
		{"run", {"--output", "--", "true", NULL}, "'--output'"},
		{"run", {"--output=--", "true", NULL}, "'--output=--'"},
		{"summary", {t, "-o", "--", NULL}, "'-o'"},
		{"summary", {t, "--view", "--", NULL}, "'--view'"},
		{"export", {"--chrome", t, "-o", "--", NULL}, "'-o'"},
		{"import", {"x.json", "-o", "--", NULL}, "'-o'"},
		{"diff", {t, t, "-o", "--", NULL}, "'-o'"},
		{"bench", {t, "--baseline", "--", NULL}, "'--baseline'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cmd_result r = cmd_run(GPDL_BIN, cases[i].sub, cases[i].args);
		assert_int_equal(r.status, 2);
		assert_contains(r.err, "needs a value, not '--'");
		assert_contains(r.err, cases[i].opt);
		cmd_result_free(&r);
	}
	struct stat st;
	assert_int_not_equal(stat("--", &st), 0); /* nothing named "--" was written */
}

/* ---- export: part of a trace, what it wrote, Kineto's steps --------------- */

/* Ten steps of 100 ms back to back from 1 s after the trace's start, each
 * with three operators at +10, +40, +70 ms (20 ms each); a counter every
 * 50 ms. The events' (start, name) are kept to count what a window holds. */
#define NSTEPS 10
#define START_NS (5 * 1000 * TB_MS)
struct ev {
	uint64_t start;
	int step; /* the step it lies in */
};
static struct ev evs[NSTEPS * 4];
static unsigned nevs;

static const char *steps_trace(void)
{
	static const char *path;
	if (path)
		return path;
	struct tb b;
	tb_open(&b, "steps.gpdl", "h", 10, START_NS);
	tb_thread(&b, 0, 10, "main");
	uint32_t op = tb_desc(&b, "aten::mm", TRACE_EV_OPERATOR);
	for (int k = 0; k < NSTEPS; k++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfileStep#%d", k);
		uint32_t step = tb_desc(&b, name, TRACE_EV_PROFILE_STEP);
		uint64_t s = START_NS + 1000 * TB_MS + (uint64_t)k * 100 * TB_MS;
		for (int i = 0; i < 3; i++) {
			uint64_t at = s + (10 + 30 * (uint64_t)i) * TB_MS;
			tb_range(&b, 0, op, at, 20 * TB_MS);
			evs[nevs++] = (struct ev){at, k};
		}
		tb_range(&b, 0, step, s, 100 * TB_MS); /* recorded when it ends */
		evs[nevs++] = (struct ev){s, k};
	}
	for (uint64_t t = START_NS; t < START_NS + 2100 * TB_MS; t += 50 * TB_MS)
		tb_counter(&b, t, TRACE_CTR_CPU_PROCESS, 10, 50.0);
	path = tb_close(&b, START_NS + 2100 * TB_MS);
	return path;
}

/* The events this test wrote that begin in [from, to) ms after the start. */
static unsigned inside_ms(double from, double to)
{
	unsigned n = 0;
	for (unsigned i = 0; i < nevs; i++) {
		double ms = (double)(evs[i].start - START_NS) / TB_MS;
		n += ms >= from && ms < to;
	}
	return n;
}

static unsigned inside_steps(int first, int last)
{
	unsigned n = 0;
	for (unsigned i = 0; i < nevs; i++)
		n += evs[i].step >= first && evs[i].step <= last;
	return n;
}

/* traceEvents of a chrome export, counted: X events, the ones named
 * ProfilerStep#N (their Ns summed), any still named ProfileStep. */
struct counts {
	unsigned x, kineto_steps, paddle_steps, counters;
	long step_sum;
};

static struct counts chrome_counts(const char *json_path)
{
	struct counts c = {0};
	FILE *f = fopen(json_path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *text = malloc((size_t)n + 1);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	text[n] = '\0';
	fclose(f);
	char err[256];
	yajl_val doc = yajl_tree_parse(text, err, sizeof(err));
	assert_non_null(doc);
	yajl_val evs_ = jkey(doc, "traceEvents");
	for (size_t i = 0; i < jlen(evs_); i++) {
		yajl_val e = jelem(evs_, i);
		const char *ph = jstr(jkey(e, "ph")), *name = jstr(jkey(e, "name"));
		if (!strcmp(ph, "C"))
			c.counters++;
		if (strcmp(ph, "X") != 0)
			continue;
		c.x++;
		if (!strncmp(name, "ProfilerStep#", 13)) {
			c.kineto_steps++;
			c.step_sum += atol(name + 13);
		}
		if (!strncmp(name, "ProfileStep", 11))
			c.paddle_steps++;
	}
	assert_int_equal((unsigned)jnum(jpath(doc, "otherData", "events")), c.x);
	yajl_tree_free(doc);
	free(text);
	return c;
}

static void test_export_steps(void **state)
{
	(void)state;
	const char *t = steps_trace();
	char out[600];
	snprintf(out, sizeof(out), "%s/steps.json", tb_dir());

	/* the whole trace: every step under Kineto's name, none under ours */
	struct cmd_result r = RUN("export", "--chrome", "-f", t, "-o", out);
	assert_int_equal(r.status, 0);
	struct counts c = chrome_counts(out);
	assert_int_equal(c.x, nevs);
	assert_int_equal(c.kineto_steps, NSTEPS);
	assert_int_equal(c.step_sum, NSTEPS * (NSTEPS - 1) / 2);
	assert_int_equal(c.paddle_steps, 0);
	assert_int_equal(c.counters, 42);
	/* "wrote 'PATH' (SIZE, N events)", the size the file's */
	char want[800];
	struct stat st;
	assert_int_equal(stat(out, &st), 0);
	snprintf(want, sizeof(want), "gprof-dl: wrote '%s' (%.1f kB, %u events)\n", out,
		 (double)st.st_size / 1e3, nevs);
	assert_string_equal(r.err, want);
	cmd_result_free(&r);

	/* our own tables keep Paddle's name */
	r = RUN("summary", t, "--view", "model");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "ProfileStep");
	assert_null(strstr(r.out, "ProfilerStep"));
	cmd_result_free(&r);

	const struct {
		const char *arg;
		int first, last;
	} steps[] = {{"3-5", 3, 5}, {"0-0", 0, 0}, {"7", 7, 7}, {"8-", 8, NSTEPS - 1},
		     {"0-9", 0, 9}, {"6-40", 6, 9},
		     /* run's syntax too (issue 25): A:B is A to B-1 */
		     {"3:6", 3, 5}, {"0:1", 0, 0}, {"8:", 8, NSTEPS - 1}};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		r = RUN("export", "--chrome", "-f", t, "-o", out, "--steps", steps[i].arg);
		assert_int_equal(r.status, 0);
		c = chrome_counts(out);
		unsigned want_n = inside_steps(steps[i].first, steps[i].last);
		assert_int_equal(c.x, want_n);
		assert_int_equal(c.kineto_steps, (unsigned)(steps[i].last - steps[i].first + 1));
		snprintf(want, sizeof(want), ", %u events)\n", want_n);
		assert_contains(r.err, want);
		cmd_result_free(&r);
	}
	r = RUN("export", "--chrome", "-f", t, "-o", out, "--steps", "12-14");
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "has no step in 12-14 (its steps are 0 to 9)");
	cmd_result_free(&r);
	expect_usage(RUN("export", "--chrome", "-f", t, "--steps", "5-3"), "ends before it begins");
	expect_usage(RUN("export", "--chrome", "-f", t, "--steps", "a-b"),
		     "--steps: 'a-b' is not A:B (steps A to B-1) or A-B (steps A to B)");
	expect_usage(RUN("export", "--chrome", "-f", t, "--steps", "3:3"), "ends before it begins");
	expect_usage(RUN("export", "--sqlite", "-f", t, "--steps", "1"), "not with the job's tables");
	expect_usage(RUN("export", "--csv", "-f", t, "--steps", "1"), "needs --no-summary");
	expect_usage(RUN("export", "--chrome", t, "--steps", "1", "--window", "1:2"),
		     "--steps or --window, not both");
}

static void test_export_window(void **state)
{
	(void)state;
	const char *t = steps_trace();
	char out[600];
	snprintf(out, sizeof(out), "%s/window.json", tb_dir());
	const struct {
		const char *arg;
		double from, to; /* ms */
	} w[] = {
		{"1.25:1.55", 1250, 1550},   {"1250ms:1550ms", 1250, 1550},
		{"1300000us:1.3s", 0, 0},    {":1.1", 0, 1100},
		{"1.85:", 1850, 1e12},       {"0:100", 0, 1e12},
		{"1310ms:1340000000ns", 1310, 1340},
	};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		struct cmd_result r = RUN("export", "--chrome", "-f", t, "-o", out, "--window", w[i].arg);
		if (w[i].to == 0) { /* an empty window */
			assert_int_equal(r.status, 2);
			assert_contains(r.err, "ends before it begins");
			cmd_result_free(&r);
			continue;
		}
		assert_int_equal(r.status, 0);
		struct counts c = chrome_counts(out);
		unsigned want = inside_ms(w[i].from, w[i].to);
		assert_true(want > 0);
		assert_int_equal(c.x, want);
		/* counters every 50 ms from the start, those in the window */
		unsigned ctr = 0;
		for (double ms = 0; ms < 2100; ms += 50)
			ctr += ms >= w[i].from && ms < w[i].to;
		assert_int_equal(c.counters, ctr);
		cmd_result_free(&r);
	}
	/* the CSV of the same window: as many rows in events.csv */
	char dir[600], events[700];
	snprintf(dir, sizeof(dir), "%s/window-csv", tb_dir());
	struct cmd_result r = RUN("export", "--csv", "--no-summary", "-f", t, "-o", dir, "--window",
				  "1.25:1.55");
	assert_int_equal(r.status, 0);
	char want[800];
	snprintf(want, sizeof(want), " files to '%s' (", dir);
	assert_contains(r.err, want);
	snprintf(want, sizeof(want), ", %u events)\n", inside_ms(1250, 1550));
	assert_contains(r.err, want);
	cmd_result_free(&r);
	/* the operators and the steps (ranges.csv), a header row each */
	unsigned lines = 0;
	const char *const files[] = {"operators.csv", "ranges.csv"};
	for (int i = 0; i < 2; i++) {
		snprintf(events, sizeof(events), "%s/%s", dir, files[i]);
		FILE *f = fopen(events, "r");
		assert_non_null(f);
		int ch;
		while ((ch = fgetc(f)) != EOF)
			lines += ch == '\n';
		fclose(f);
		lines--;
	}
	assert_int_equal(lines, inside_ms(1250, 1550));

	expect_usage(RUN("export", "--chrome", t, "--window", "abc"), "is not START:END");
	expect_usage(RUN("export", "--chrome", t, "--window", "2"), "is not START:END");
	expect_usage(RUN("export", "--chrome", t, "--window", "1h:2h"), "is not START:END");
	expect_usage(RUN("export", "--chrome", t, "--window", "-1:2"), "is not START:END");
}

/* ---- the progress bar: on a terminal only --------------------------------- */

/* A trace long enough to be read in several progress calls. */
static const char *long_trace(void)
{
	static const char *path;
	if (path)
		return path;
	struct tb b;
	tb_open(&b, "long.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	uint32_t op = tb_desc(&b, "op", TRACE_EV_OPERATOR);
	for (uint64_t i = 0; i < 100000; i++)
		tb_range(&b, 0, op, i * 1000, 500);
	path = tb_close(&b, 100000 * 1000);
	return path;
}

/* gprof-dl export on a pty: what the terminal got (stdout and stderr). */
static char *export_on_pty(const char *trace, const char *out, const char *delay)
{
	int master;
	pid_t pid = forkpty(&master, NULL, NULL, NULL);
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("GPROF_DL_PROGRESS_DELAY", delay, 1);
		execl(GPDL_BIN, GPDL_BIN, "export", "--chrome", "-f", trace, "-o", out, (char *)NULL);
		_exit(127);
	}
	size_t len = 0, cap = 1 << 16;
	char *text = malloc(cap);
	ssize_t n;
	while ((n = read(master, text + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 4096)
			text = realloc(text, cap *= 2);
	}
	text[len] = '\0';
	close(master);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return text;
}

static void test_progress(void **state)
{
	(void)state;
	const char *t = long_trace();
	char out[600];
	snprintf(out, sizeof(out), "%s/long.json", tb_dir());

	/* a terminal, no delay: the bar, drawn in place, up to 100%, erased */
	char *tty = export_on_pty(t, out, "0");
	assert_contains(tty, "\rgprof-dl: exporting '");
	assert_contains(tty, "] 100%");
	unsigned bars = 0;
	for (const char *p = tty; (p = strstr(p, "\rgprof-dl: exporting")) != NULL; p++)
		bars++;
	assert_true(bars >= 100000 / 16384); /* one per EXPORT_PROGRESS_EVENTS events, and the end */
	const char *erase = strstr(tty, "\r\033[K");
	assert_non_null(erase);
	assert_non_null(strstr(erase, "gprof-dl: wrote '")); /* after the bar is gone */
	free(tty);

	/* a terminal, the default delay (1 s): a short export draws none */
	tty = export_on_pty(t, out, "");
	assert_null(strstr(tty, "exporting"));
	assert_contains(tty, "gprof-dl: wrote '");
	free(tty);

	/* not a terminal: never, whatever the delay */
	setenv("GPROF_DL_PROGRESS_DELAY", "0", 1);
	struct cmd_result r = RUN("export", "--chrome", "-f", t, "-o", out);
	unsetenv("GPROF_DL_PROGRESS_DELAY");
	assert_int_equal(r.status, 0);
	assert_null(strchr(r.err, '\r'));
	assert_null(strstr(r.err, "exporting"));
	assert_one_line(r.err);
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_command),
		cmocka_unit_test(test_did_you_mean),
		cmocka_unit_test(test_separator_value),
		cmocka_unit_test(test_export_steps),
		cmocka_unit_test(test_run_steps_syntax),
		cmocka_unit_test(test_export_window),
		cmocka_unit_test(test_progress),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
