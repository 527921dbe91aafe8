/*
 * report_html.c - the report's HTML file (report_html.h).
 *
 * The JSON of summary and diff is spliced into the document as it printed,
 * then the whole document is copied once through embed_json(): whitespace
 * outside strings dropped (summary prints it indented), and '<', '>', '&'
 * escaped. They can only be inside strings in valid JSON, where \u003c is
 * the same character to JSON.parse, so the document read back is the one
 * the commands printed, and no name from the program ("</script>...") can
 * close the element holding it or be read as HTML.
 */
#include "formats/html/report_html.h"

#include "formats/json/json_writer.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <stdlib.h>
#include <string.h>

/* The files inlined into every page (embed.cmake). */
extern const unsigned char gpdl_html_chartjs[], gpdl_html_report_js[], gpdl_html_report_css[];
extern const size_t gpdl_html_chartjs_len, gpdl_html_report_js_len, gpdl_html_report_css_len;

/* The page may fetch nothing: scripts and style are the inline ones only,
 * images only data: URLs (a saved chart), no connection, font or frame. */
#define REPORT_CSP                                                                          \
	"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src " \
	"data:"

/* JSON text s[0..n) appended to out: compact, '<' '>' '&' as \uXXXX. */
static void embed_json(FILE *out, const char *s, size_t n)
{
	int in_string = 0, escaped = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!in_string && (c == ' ' || c == '\t' || c == '\n' || c == '\r'))
			continue;
		if (c == '<')
			fputs("\\u003c", out);
		else if (c == '>')
			fputs("\\u003e", out);
		else if (c == '&')
			fputs("\\u0026", out);
		else
			fputc(c, out);
		if (escaped)
			escaped = 0;
		else if (in_string && c == '\\')
			escaped = 1;
		else if (c == '"')
			in_string = !in_string;
	}
}

static void json_words(struct json_writer *w, char *const *argv, int argc)
{
	json_begin_array(w);
	for (int i = 0; i < argc; i++)
		json_string(w, argv[i]);
	json_end_array(w);
}

/* The head of one object of the document: its "{" and the members before
 * the documents spliced in after them, written by the JSON writer into a
 * memory stream (head_begin), then its "command" and the whole embedded
 * into the document (head_end); the object's '}' is the document's to
 * write. */
struct head {
	char *text;
	size_t len;
	FILE *h;
	struct json_writer w;
};

static struct json_writer *head_begin(struct head *hd)
{
	free(hd->text);
	hd->text = NULL;
	hd->h = open_memstream(&hd->text, &hd->len);
	if (!hd->h)
		die_errno("open_memstream");
	json_writer_init(&hd->w, hd->h, 0);
	json_begin_object(&hd->w);
	return &hd->w;
}

static void head_end(struct head *hd, FILE *f, char *const *argv, int argc)
{
	json_key(&hd->w, "command");
	json_words(&hd->w, argv, argc);
	fclose(hd->h);
	embed_json(f, hd->text, hd->len);
}

char *report_html_document(const struct report_doc *d, size_t *len)
{
	char *doc = NULL;
	size_t doc_len = 0;
	struct head hd = {0};
	FILE *f = open_memstream(&doc, &doc_len);
	if (!f)
		die_errno("open_memstream");
	struct json_writer *w = head_begin(&hd);
	json_key(w, "gprof_dl_report");
	json_uint(w, 1);
	json_key(w, "version");
	json_string(w, d->version);
	json_key(w, "title");
	json_string(w, d->title);
	head_end(&hd, f, d->summary_argv, d->summary_argc);
	fputs(",\"summary\":", f);
	embed_json(f, d->summary, d->summary_len);
	fputs(",\"baseline\":", f);
	if (d->diff_argv) {
		head_begin(&hd);
		head_end(&hd, f, d->diff_argv, d->diff_argc);
		fputs(",\"diff\":", f);
		embed_json(f, d->diff, d->diff_len);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fputs(",\"ranks\":[", f);
	for (size_t i = 0; i < d->nranks; i++) {
		const struct report_rank_doc *r = &d->ranks[i];
		if (i)
			fputc(',', f);
		w = head_begin(&hd);
		json_key(w, "rank");
		json_int(w, r->rank);
		head_end(&hd, f, r->argv, r->argc);
		fputs(",\"summary\":", f);
		embed_json(f, r->summary, r->summary_len);
		fputc('}', f);
	}
	fputs("]}", f);
	fclose(f);
	free(hd.text);
	*len = doc_len;
	return doc;
}

/* s as HTML text: the characters that mean markup as references, ill-formed
 * UTF-8 as U+FFFD, controls as spaces. */
static void html_text(FILE *out, const char *s)
{
	size_t n = strlen(s);
	char *clean = xmalloc(3 * n + 1);
	utf8_sanitize(clean, s, n);
	for (const unsigned char *p = (const unsigned char *)clean; *p; p++) {
		switch (*p) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*p < 0x20 || *p == 0x7f ? ' ' : *p, out);
		}
	}
	free(clean);
}

int report_html_write(FILE *out, const struct report_doc *d)
{
	size_t len;
	char *doc = report_html_document(d, &len);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"" REPORT_CSP "\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"gprof-dl ",
	      out);
	html_text(out, d->version);
	fputs("\">\n<title>", out);
	html_text(out, d->title);
	fputs("</title>\n<style>\n", out);
	fwrite(gpdl_html_report_css, 1, gpdl_html_report_css_len, out);
	/* the page is drawn by report.js; without scripts it says so */
	fputs("</style>\n</head>\n<body>\n<div id=\"gp-root\"><noscript><p>This report draws its "
	      "charts and tables with JavaScript: enable it to see them. The figures are in the "
	      "JSON document of the element gprof-dl-data.</p></noscript></div>\n"
	      "<script type=\"application/json\" id=\"gprof-dl-data\">",
	      out);
	fwrite(doc, 1, len, out);
	free(doc);
	fputs("</script>\n<script>\n", out);
	fwrite(gpdl_html_chartjs, 1, gpdl_html_chartjs_len, out);
	fputs("\n</script>\n<script>\n", out);
	fwrite(gpdl_html_report_js, 1, gpdl_html_report_js_len, out);
	fputs("\n</script>\n</body>\n</html>\n", out);
	return fflush(out) != 0 || ferror(out) ? -1 : 0;
}
