/* rules_steps.c - see rules.h. */
#include "lib/analysis/advise/rules.h"

const struct adv_rule adv_rule_input_bound = {
	.id = "input-bound",
	.title = "(not written yet)",
	.definition = "",
	.threshold = "",
	.why = "",
	.run = NULL,
};

const struct adv_rule adv_rule_jitter = {
	.id = "jitter",
	.title = "(not written yet)",
	.definition = "",
	.threshold = "",
	.why = "",
	.run = NULL,
};

