/*
 * view_trace.c - the Trace Summary, printed before every other table: what
 * was read from each file, how many events were dropped, where a file is
 * damaged, and which window the tables cover. Nothing is lost silently.
 */
#include "lib/analysis/views/view.h"
#include "formats/trace/capture.h"

#include <stdio.h>
#include <string.h>

enum { TC_FILE, TC_PID, TC_EVENTS, TC_MARKS, TC_OPEN, TC_UNBALANCED, TC_DROPPED, TC_DAMAGE };

static const struct tcol trace_cols[] = {
	{"File", "file", TCOL_TEXT, NULL, 6, NULL},
	{"PID", "pid", TCOL_COUNT, NULL, 8, NULL},
	{"Events", "events", TCOL_COUNT, NULL, 10, NULL},
	{"Marks", "marks", TCOL_COUNT, NULL, 8, NULL},
	{"Open at exit", "open_at_exit", TCOL_COUNT, NULL, 0, NULL, 0, "Open"},
	{"Unbalanced pops", "unbalanced_pops", TCOL_COUNT, NULL, 0, NULL, 0, "Unbalanced"},
	{"Dropped", "dropped", TCOL_COUNT, NULL, 9, NULL},
	{"Damage", "damage", TCOL_TEXT, NULL, 8, NULL},
};

static void trace_row(struct table *t, struct tpart *p, const struct store_file *f)
{
	struct trow *r = tpart_add_row(t, p, 0);
	trow_text(r, TC_FILE, f->path);
	trow_count(r, TC_PID, f->pid);
	trow_count(r, TC_EVENTS, f->events);
	trow_count(r, TC_MARKS, f->marks);
	trow_count(r, TC_OPEN, f->open_at_exit);
	trow_count(r, TC_UNBALANCED, f->unbalanced_pops);
	trow_count(r, TC_DROPPED, f->dropped);
	if (f->damage) {
		char buf[512];
		snprintf(buf, sizeof(buf), "at offset %llu: %s",
			 (unsigned long long)f->damage_offset, f->damage);
		trow_text(r, TC_DAMAGE, buf);
	} else {
		trow_text(r, TC_DAMAGE, "none");
	}
}

static void trace_notes(struct table *t, const struct analysis *a, const struct view_opts *o)
{
	const struct store *s = &a->store;
	char buf[64];
	if (a->gpu_window)
		table_note(t, "Window: the GPU's span, from the start of its first GPU work to the "
			      "end of its last (--window gpu; each rank's own), %s; every time below "
			      "is clipped to it.",
			   view_time(buf, sizeof(buf), a->window_ns, o->unit));
	else if (a->from_steps)
		table_note(t, "Window: %llu ProfileStep ranges, %s after overlaps are merged; "
			      "every time below is clipped to it.",
			   (unsigned long long)a->steps, view_time(buf, sizeof(buf), a->window_ns, o->unit));
	else
		table_note(t, "Window: the whole run (no ProfileStep ranges), %s.",
			   view_time(buf, sizeof(buf), a->window_ns, o->unit));
	/* --schedule, --capture-range: which part had full detail */
	struct capture cap;
	char rec[1024];
	capture_init(&cap);
	capture_from_store(&cap, s);
	if (capture_describe(&cap, rec, sizeof(rec)))
		table_note(t, "Recorded in full detail: %s.", rec);
	capture_free(&cap);
	if (s->nfiles > 1) {
		char clock[256];
		uint32_t nhosts = 0;
		for (uint32_t i = 0; i < s->nfiles; i++) {
			uint32_t k = 0;
			while (k < i && strcmp(s->files[k].hostname, s->files[i].hostname) != 0)
				k++;
			nhosts += k == i;
		}
		store_clock_words(clock, sizeof(clock), s->wall_clock, nhosts, store_clock(s),
				  s->files[0].hostname);
		table_note(t, "%u traces are summarised together, on %s.", s->nfiles, clock);
	}
	/* drops of any other reason (no ring slot, an import's) are said with
	 * their reason, below */
	uint64_t other = store_drops_not_ring(s);
	if (a->dropped > other)
		table_note(t, "%llu events were dropped (full ring or CUPTI buffers): every table below is "
			      "missing them.",
			   (unsigned long long)(a->dropped - other));
	for (uint32_t i = 0; i < s->nfiles; i++)
		for (unsigned why = 1; why <= TRACE_DROP_REASON_COUNT; why++)
			if (s->files[i].drop_reasons[why])
				table_note(t, "trace '%s': %llu events %s: %s.", s->files[i].path,
					   (unsigned long long)s->files[i].drop_reasons[why],
					   trace_drop_reason_is_loss(why) ? "dropped (missing below)"
									   : "repaired by its import",
					   trace_drop_reason_name(why));
	for (uint32_t i = 0; i < s->nfiles; i++)
		if (s->files[i].damage)
			table_note(t, "trace '%s' is damaged at offset %llu: %s; summarised up to there",
				   s->files[i].path, (unsigned long long)s->files[i].damage_offset,
				   s->files[i].damage);
	if (a->open_at_exit)
		table_note(t, "%llu ranges were still open at exit: they end where their thread or "
			      "process ended.",
			   (unsigned long long)a->open_at_exit);
	if (a->unbalanced_pops)
		table_note(t, "%llu pops had no matching push: counted here, in no table below.",
			   (unsigned long long)a->unbalanced_pops);
}

struct table *view_trace(const struct view *v, const struct analysis *a, const struct view_opts *o)
{
	struct table *t = table_new(v ? v->name : "trace", v ? v->title : "Trace Summary", trace_cols,
				    sizeof(trace_cols) / sizeof(trace_cols[0]));
	t->keep_all = 1; /* a row per file: --top is for the views */
	struct tpart *p = table_add_part(t, NULL, NULL, NULL);
	for (uint32_t i = 0; i < a->store.nfiles; i++)
		trace_row(t, p, &a->store.files[i]);
	trace_notes(t, a, o);
	return t;
}
