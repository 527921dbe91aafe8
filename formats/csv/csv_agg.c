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
};

static const struct csv_column call_cols[] = {
	{"call", CSV_COL_INT},     {"pg", CSV_COL_TEXT},       {"seq", CSV_COL_INT},
	{"op", CSV_COL_TEXT},      {"bytes", CSV_COL_INT},     {"group_size", CSV_COL_INT},
	{"peer", CSV_COL_INT},     {"step", CSV_COL_INT},      {"start_ns", CSV_COL_INT},
	{"end_ns", CSV_COL_INT},
};

static const struct csv_column set_cols[] = {
	{"part", CSV_COL_TEXT},
	{"start_ns", CSV_COL_INT},
	{"end_ns", CSV_COL_INT},
};

size_t csv_agg_columns(enum csv_agg_table t, const struct csv_column **cols)
{
	switch (t) {
	case CSV_AGG_RANKS:
		*cols = rank_cols;
		return sizeof(rank_cols) / sizeof(rank_cols[0]);
	case CSV_AGG_STEPS:
		*cols = step_cols;
		return sizeof(step_cols) / sizeof(step_cols[0]);
	case CSV_AGG_CALLS:
		*cols = call_cols;
		return sizeof(call_cols) / sizeof(call_cols[0]);
	case CSV_AGG_CALL_SETS:
		*cols = set_cols;
		return sizeof(set_cols) / sizeof(set_cols[0]);
	case CSV_AGG_COUNT:
		break;
	}
	BUG("csv_agg_columns(%d)", (int)t);
}

const char *csv_agg_table_name(enum csv_agg_table t)
{
	static const char *const names[CSV_AGG_COUNT] = {"agg_ranks", "agg_steps", "agg_calls",
							 "agg_call_sets"};
	if ((unsigned)t >= CSV_AGG_COUNT)
		BUG("csv_agg_table_name(%d)", (int)t);
	return names[t];
}
