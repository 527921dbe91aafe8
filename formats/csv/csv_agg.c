/*
 * csv_agg.c - the aggregate tables' names and columns (csv_agg.h); what each
 * column holds is formats/SQL-SCHEMA.md's.
 */
#include "formats/csv/csv_agg.h"

#include "common/error.h"

static const struct csv_column step_cols[] = {
	{"step", CSV_COL_INT},         {"start_ns", CSV_COL_INT},
	{"dur_ns", CSV_COL_INT},       {"samples", CSV_COL_INT},
	{"computation_ns", CSV_COL_INT}, {"communication_ns", CSV_COL_INT},
	{"overlap_ns", CSV_COL_INT},   {"exposed_ns", CSV_COL_INT},
	{"data_ns", CSV_COL_INT},      {"comp_ns", CSV_COL_INT},
	{"comm_ns", CSV_COL_INT},      {"host_ns", CSV_COL_INT},
	{"runq_ns", CSV_COL_INT},
};

static const struct csv_column rank_cols[] = {
	{"host", CSV_COL_TEXT},  {"world_size", CSV_COL_INT}, {"gpu", CSV_COL_INT},
	{"gpu_comm", CSV_COL_INT}, {"steps", CSV_COL_INT},     {"calls", CSV_COL_INT},
	{"backend", CSV_COL_TEXT},
};

static const struct csv_column call_cols[] = {
	{"call", CSV_COL_INT},	 {"pg", CSV_COL_TEXT},	    {"seq", CSV_COL_INT},
	{"op", CSV_COL_TEXT},	 {"dtype", CSV_COL_TEXT},   {"bytes", CSV_COL_INT},
	{"group_size", CSV_COL_INT}, {"peer", CSV_COL_INT}, {"step", CSV_COL_INT},
	{"start_ns", CSV_COL_INT}, {"end_ns", CSV_COL_INT},
};

static const struct csv_column set_cols[] = {
	{"part", CSV_COL_TEXT},
	{"start_ns", CSV_COL_INT},
	{"end_ns", CSV_COL_INT},
};

static const struct csv_column operator_cols[] = {
	{"name", CSV_COL_TEXT},         {"calls", CSV_COL_INT},       {"total_ns", CSV_COL_INT},
	{"self_ns", CSV_COL_INT},       {"min_ns", CSV_COL_INT},      {"max_ns", CSV_COL_INT},
	{"gpu_total_ns", CSV_COL_INT},  {"gpu_min_ns", CSV_COL_INT},  {"gpu_max_ns", CSV_COL_INT},
};

static const struct csv_column kernel_cols[] = {
	{"name", CSV_COL_TEXT}, {"calls", CSV_COL_INT},  {"total_ns", CSV_COL_INT},
	{"min_ns", CSV_COL_INT}, {"max_ns", CSV_COL_INT},
};

static const struct csv_column duration_cols[] = {
	{"kind", CSV_COL_TEXT}, {"name", CSV_COL_TEXT}, {"lo_ns", CSV_COL_INT},
	{"hi_ns", CSV_COL_INT}, {"calls", CSV_COL_INT},
};

#define COLS(a) (*cols = (a), sizeof(a) / sizeof((a)[0]))

size_t csv_agg_columns(enum csv_agg_table t, const struct csv_column **cols)
{
	switch (t) {
	case CSV_AGG_RANKS:
		return COLS(rank_cols);
	case CSV_AGG_STEPS:
		return COLS(step_cols);
	case CSV_AGG_CALLS:
		return COLS(call_cols);
	case CSV_AGG_CALL_SETS:
		return COLS(set_cols);
	case CSV_AGG_OPERATORS:
		return COLS(operator_cols);
	case CSV_AGG_KERNELS:
		return COLS(kernel_cols);
	case CSV_AGG_DURATIONS:
		return COLS(duration_cols);
	case CSV_AGG_COUNT:
		break;
	}
	BUG("csv_agg_columns(%d)", (int)t);
}

const char *csv_agg_table_name(enum csv_agg_table t)
{
	static const char *const names[CSV_AGG_COUNT] = {
		"agg_ranks",	 "agg_steps",	"agg_calls",	 "agg_call_sets",
		"agg_operators", "agg_kernels", "agg_durations",
	};
	if ((unsigned)t >= CSV_AGG_COUNT)
		BUG("csv_agg_table_name(%d)", (int)t);
	return names[t];
}

void csv_agg_files_init(struct csv_agg_files *c, FILE *const files[CSV_AGG_COUNT])
{
	for (unsigned t = 0; t < CSV_AGG_COUNT; t++) {
		const struct csv_column *cols;
		size_t n = csv_agg_columns((enum csv_agg_table)t, &cols);
		const char *names[16];
		if (n > sizeof(names) / sizeof(names[0]))
			BUG("csv_agg_files_init: %zu columns", n);
		for (size_t k = 0; k < n; k++)
			names[k] = cols[k].name;
		csv_out_init(&c->out[t], files[t]);
		csv_out_header(&c->out[t], names, n);
	}
}

int csv_agg_csv_emit(void *ctx, enum csv_agg_table t, const struct csv_agg_value *v, size_t n)
{
	struct csv_out *c = &((struct csv_agg_files *)ctx)->out[t];
	for (size_t k = 0; k < n; k++) {
		if (v[k].kind == CSV_AGG_INT)
			csv_out_int(c, v[k].i);
		else if (v[k].kind == CSV_AGG_TEXT)
			csv_out_text(c, v[k].s);
		else
			csv_out_empty(c);
	}
	csv_out_end_row(c);
	return csv_out_error(c) ? -1 : 0;
}

int csv_agg_files_error(const struct csv_agg_files *c)
{
	for (unsigned t = 0; t < CSV_AGG_COUNT; t++)
		if (csv_out_error(&c->out[t]))
			return 1;
	return 0;
}
