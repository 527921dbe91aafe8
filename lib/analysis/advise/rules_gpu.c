/* rules_gpu.c - see rules.h. */
#include "lib/analysis/advise/rules.h"

const struct adv_rule adv_rule_sync_calls = {
	.id = "sync-calls",
	.title = "(not written yet)",
	.definition = "",
	.threshold = "",
	.why = "",
	.run = NULL,
};

const struct adv_rule adv_rule_pageable_copies = {
	.id = "pageable-copies",
	.title = "(not written yet)",
	.definition = "",
	.threshold = "",
	.why = "",
	.run = NULL,
};

