/*
 * csv_out.h - CSV rows written through libcsv's quoting (csv_fwrite), one value
 * per column. A table is a header row, then data rows; blocks of several
 * tables in one stream are separated by a blank line.
 */
#ifndef GPDL_FORMATS_CSV_OUT_H
#define GPDL_FORMATS_CSV_OUT_H

#include <stdio.h>

struct csv_out {
	FILE *out;
	int row_started;
	int error;
};

void csv_out_init(struct csv_out *c, FILE *out);
void csv_out_field(struct csv_out *c, const char *s);
void csv_out_fieldf(struct csv_out *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void csv_out_end_row(struct csv_out *c);
void csv_out_blank_line(struct csv_out *c);
int csv_out_error(const struct csv_out *c);

#endif
