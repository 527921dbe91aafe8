/*
 * import_check.c - the import tests' harness (see import_check.h).
 */
#include "tests/import/import_check.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

static char dir[4096];

const char *chk_dir(void)
{
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof(dir), "%s/gpdl-import-test-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(dir))
			fail_msg("mkdtemp failed");
	}
	return dir;
}

char *chk_path(const char *name)
{
	size_t n = strlen(chk_dir()) + strlen(name) + 2;
	char *p = malloc(n);
	snprintf(p, n, "%s/%s", chk_dir(), name);
	return p;
}

void chk_cleanup(void)
{
	if (!dir[0])
		return;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char *p = chk_path(e->d_name);
		unlink(p);
		free(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	dir[0] = '\0';
}

char *chk_write(const char *name, const char *text, int gz)
{
	char *path = chk_path(name);
	if (gz) {
		gzFile f = gzopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(gzwrite(f, text, (unsigned)strlen(text)), (int)strlen(text));
		assert_int_equal(gzclose(f), Z_OK);
	} else {
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
		assert_int_equal(fclose(f), 0);
	}
	return path;
}

static void copy(char *dst, size_t n, const char *s)
{
	snprintf(dst, n, "%s", s ? s : "");
}

struct read_ctx {
	struct got *g;
	struct trace_reader *r;
	size_t cap;
};

static int on_event(void *ctx, const struct trace_event *e)
{
	struct read_ctx *c = ctx;
	struct got *g = c->g;
	if (g->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		g->ev = realloc(g->ev, c->cap * sizeof(*g->ev));
	}
	struct got_event *x = &g->ev[g->n++];
	memset(x, 0, sizeof(*x));
	const struct trace_desc *d = trace_reader_desc(c->r, e->desc);
	copy(x->name, sizeof(x->name), trace_reader_string(c->r, d->name_str));
	copy(x->domain, sizeof(x->domain), trace_reader_string(c->r, d->domain_str));
	x->category = d->category;
	const char *cat = d->category ? trace_reader_category_name(c->r, d->domain_str, d->category) : NULL;
	copy(x->category_name, sizeof(x->category_name), cat);
	x->type = d->type;
	x->flags = e->flags;
	x->thread = e->thread;
	x->start = e->start_ns;
	x->dur = e->dur_ns;
	x->has_ext = e->ext != NULL;
	if (e->ext) {
		x->ext = *e->ext;
		copy(x->shapes, sizeof(x->shapes), trace_reader_string(c->r, e->ext->shapes_str));
		copy(x->pg, sizeof(x->pg), trace_reader_string(c->r, e->ext->pg_str));
		copy(x->dtype, sizeof(x->dtype), trace_reader_string(c->r, e->ext->dtype_str));
	}
	return 0;
}

static int on_counter(void *ctx, const struct trace_counter *ct)
{
	struct got *g = ((struct read_ctx *)ctx)->g;
	if (g->nctr < 32)
		g->ctr[g->nctr++] = *ct;
	return 0;
}

static int on_drops(void *ctx, uint32_t thread, uint64_t dropped)
{
	struct got *g = ((struct read_ctx *)ctx)->g;
	assert_true(thread < 64);
	g->thread_drops[thread] += dropped;
	return 0;
}

void chk_read(const char *trace_path, struct got *g)
{
	char err[512];
	memset(g, 0, sizeof(*g));
	struct trace_reader *r = trace_reader_open(trace_path, err, sizeof(err));
	if (!r)
		fail_msg("cannot read the import: %s", err);
	struct read_ctx c = {g, r, 0};
	struct trace_visitor v = {.event = on_event, .counter = on_counter, .drops = on_drops};
	assert_int_equal(trace_reader_run(r, &v, &c), 0);
	uint64_t off;
	const char *damage = trace_reader_damage(r, &off);
	if (damage)
		fail_msg("the import is damaged: %s at %llu", damage, (unsigned long long)off);
	const struct trace_header *h = trace_reader_header(r);
	g->h = *h;
	copy(g->host, sizeof(g->host), h->hostname);
	copy(g->cmdline, sizeof(g->cmdline), h->cmdline);
	copy(g->clock, sizeof(g->clock), h->clock_domain);
	copy(g->version, sizeof(g->version), h->gprof_version);
	copy(g->backend, sizeof(g->backend), h->dist_backend);
	g->h.hostname = g->host;
	g->h.cmdline = g->cmdline;
	g->h.clock_domain = g->clock;
	g->h.gprof_version = g->version;
	g->h.dist_backend = g->backend;
	g->end_ns = h->end_ns;
	g->nthreads = trace_reader_thread_count(r);
	assert_true(g->nthreads <= 64);
	for (uint32_t i = 0; i < g->nthreads; i++) {
		g->threads[i].t = *trace_reader_thread(r, i);
		copy(g->threads[i].name, sizeof(g->threads[i].name),
		     trace_reader_string(r, g->threads[i].t.name_str));
	}
	g->nprocs = trace_reader_process_count(r);
	assert_true(g->nprocs <= 16);
	for (uint32_t i = 0; i < g->nprocs; i++) {
		g->procs[i] = *trace_reader_process(r, i);
		copy(g->proc_names[i], sizeof(g->proc_names[i]),
		     trace_reader_string(r, g->procs[i].cmdline_str));
	}
	g->ndevs = trace_reader_device_count(r);
	assert_true(g->ndevs <= 8);
	for (uint32_t i = 0; i < g->ndevs; i++) {
		g->devs[i].d = *trace_reader_device(r, i);
		copy(g->devs[i].name, sizeof(g->devs[i].name),
		     trace_reader_string(r, g->devs[i].d.name_str));
	}
	for (uint32_t cat = 1; cat < 8; cat++) {
		for (uint32_t id = 0; id <= trace_reader_desc_count(r); id++) {
			const struct trace_desc *d = id ? trace_reader_desc(r, id) : NULL;
			uint32_t dom = d ? d->domain_str : 0;
			const char *name = trace_reader_category_name(r, dom, cat);
			if (name) {
				copy(g->category_names[cat], sizeof(g->category_names[cat]), name);
				break;
			}
		}
	}
	g->drops = trace_reader_total_drops(r);
	for (unsigned i = 0; i <= TRACE_DROP_REASON_COUNT; i++)
		g->by_reason[i] = trace_reader_drops_by_reason(r, i);
	trace_reader_close(r);
}

void chk_import(const char *json_path, struct got *g)
{
	char err[1024];
	char *out = chk_path("out.gpdl");
	struct import_stats st;
	unlink(out);
	if (import_chrome_trace(json_path, out, 0, &st, err, sizeof(err)) != 0)
		fail_msg("import failed: %s", err);
	chk_read(out, g);
	g->st = st;
	unlink(out);
	free(out);
}

void chk_import_text(const char *text, int gz, struct got *g)
{
	char *in = chk_write(gz ? "in.json.gz" : "in.json", text, gz);
	chk_import(in, g);
	unlink(in);
	free(in);
}

const char *chk_import_error(const char *text, int gz, char *err, size_t errlen)
{
	char *in = chk_write(gz ? "bad.json.gz" : "bad.json", text, gz);
	char *out = chk_path("bad.gpdl");
	unlink(out);
	if (import_chrome_trace(in, out, 0, NULL, err, errlen) == 0)
		fail_msg("the import of a bad file succeeded");
	assert_int_not_equal(access(out, F_OK), 0); /* nothing left behind */
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, in)); /* the message names the file */
	unlink(in);
	free(in);
	free(out);
	return err;
}

void chk_free(struct got *g)
{
	free(g->ev);
	g->ev = NULL;
	g->n = 0;
}

const struct got_event *chk_find(const struct got *g, const char *name, int nth)
{
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->ev[i].name, name) == 0 && nth-- == 0)
			return &g->ev[i];
	fail_msg("no event '%s' (#%d) in the import", name, nth);
	return NULL;
}

size_t chk_count(const struct got *g, const char *name)
{
	size_t n = 0;
	for (size_t i = 0; i < g->n; i++)
		n += strcmp(g->ev[i].name, name) == 0;
	return n;
}

size_t chk_count_type(const struct got *g, uint8_t type)
{
	size_t n = 0;
	for (size_t i = 0; i < g->n; i++)
		n += g->ev[i].type == type;
	return n;
}

const struct got_thread *chk_thread_of(const struct got *g, const struct got_event *e)
{
	assert_true(e->thread < g->nthreads);
	return &g->threads[e->thread];
}

int chk_write_seed(const char *dir, const char *name, const char *text, size_t len)
{
	static const char *const ext[] = {".json", ".gjson", ".json.gz"};
	int rc = 0;
	for (int i = 0; i < 3; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s%s", dir, name, ext[i]);
		if (i == 2) {
			gzFile g = gzopen(path, "wb");
			if (!g || (len && gzwrite(g, text, (unsigned)len) != (int)len) ||
			    gzclose(g) != Z_OK)
				rc = -1;
			continue;
		}
		FILE *f = fopen(path, "wb");
		if (!f || (i == 1 && fputc('g', f) == EOF) || fwrite(text, 1, len, f) != len)
			rc = -1;
		if (f && fclose(f) != 0)
			rc = -1;
	}
	return rc;
}
