#include "formats/csv/csv_out.h"

#include <csv.h>
#include <stdarg.h>
#include <string.h>

void csv_out_init(struct csv_out *c, FILE *out)
{
	c->out = out;
	c->row_started = 0;
	c->error = 0;
}

void csv_out_field(struct csv_out *c, const char *s)
{
	if (c->row_started && fputc(',', c->out) == EOF)
		c->error = 1;
	if (csv_fwrite(c->out, s, strlen(s)) != 0)
		c->error = 1;
	c->row_started = 1;
}

void csv_out_fieldf(struct csv_out *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	csv_out_field(c, buf);
}

void csv_out_end_row(struct csv_out *c)
{
	if (fputs("\r\n", c->out) == EOF)
		c->error = 1;
	c->row_started = 0;
}

void csv_out_blank_line(struct csv_out *c)
{
	csv_out_end_row(c);
}

int csv_out_error(const struct csv_out *c)
{
	return c->error || ferror(c->out);
}
