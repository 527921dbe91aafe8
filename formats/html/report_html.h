/*
 * report_html.h - the one HTML file of `gprof-dl report`: the summary (and
 * diff) JSON documents wrapped in a page that draws them (REPORT-FORMAT.md).
 *
 * The page is self-contained: its style, Chart.js and report.js are inlined
 * (built into the executable), and a Content-Security-Policy lets it load
 * nothing from anywhere. The figures are the JSON's only: report.js reads
 * the document from <script type="application/json" id="gprof-dl-data">
 * and draws every chart and table from it.
 */
#ifndef GPDL_FORMATS_REPORT_HTML_H
#define GPDL_FORMATS_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What one report holds: the commands that reproduce its JSON documents and
 * those documents as they printed (any JSON layout: the page holds them
 * compact). */
/* `gprof-dl summary FILE --format json --view operator --view kernel ...`
 * of one rank's file: its words and JSON. */
struct report_rank_doc {
	int32_t rank;
	char *const *argv;
	int argc;
	const char *summary;
	size_t summary_len;
};

struct report_doc {
	const char *title;   /* the page's title, any bytes (escaped here) */
	const char *version; /* gprof-dl's */
	char *const *summary_argv; /* `gprof-dl summary ...`: the words */
	int summary_argc;
	const char *summary; /* its JSON: summary_len bytes */
	size_t summary_len;
	char *const *diff_argv; /* NULL: no baseline; else `gprof-dl diff ...` */
	int diff_argc;
	const char *diff; /* its JSON */
	size_t diff_len;
	/* a job's ranks, a summary each (its operators and kernels), for the
	 * page's rank selector; nranks 0: none ("ranks": []) */
	const struct report_rank_doc *ranks;
	size_t nranks;
};

/* Writes the page to out: 0, or -1 when a write failed. */
int report_html_write(FILE *out, const struct report_doc *d);

/* The document's JSON text (the object REPORT-FORMAT.md describes) as it is
 * embedded: compact, with every '<', '>' and '&' written \u003c, \u003e,
 * \u0026 so that nothing in it can end the <script> holding it. From
 * malloc; *len its length. */
char *report_html_document(const struct report_doc *d, size_t *len);

#endif
