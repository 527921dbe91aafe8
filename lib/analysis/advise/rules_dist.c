/* rules_dist.c - see rules.h. */
#include "lib/analysis/advise/rules.h"

const struct adv_rule adv_rule_straggler = {
	.id = "straggler",
	.title = "(not written yet)",
	.definition = "",
	.threshold = "",
	.why = "",
	.run = NULL,
};

const struct adv_rule adv_rule_exposed_comm = {
	.id = "exposed-communication",
	.title = "(not written yet)",
	.definition = "",
	.threshold = "",
	.why = "",
	.run = NULL,
};

