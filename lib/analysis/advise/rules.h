/*
 * rules.h - the rules of advise.h, one group a file: rules_steps.c (the
 * step's time: input-bound, jitter), rules_gpu.c (the CUDA calls: sync-calls,
 * pageable-copies), rules_dist.c (a job's ranks: straggler,
 * exposed-communication), rules_model.c (how the model runs on the GPU:
 * fp32-matmul, data-parallel), rules_memory.c (memory in use: memory-peak, memory-growth).
 * rules_gpu_idle.c (a GPU waiting for its host: gpu-starved, launch-bound).
 * rules_cpu.c (the host's CPU: cpu-contention, oversubscription). rules_gc.c
 * (Python's garbage collector: gc-pauses). advise.c lists them (adv_rules[]).
 */
#ifndef GPDL_ANALYSIS_ADVISE_RULES_H
#define GPDL_ANALYSIS_ADVISE_RULES_H

#include "lib/analysis/advise/advise.h"

#include <stddef.h>
#include <stdint.h>

struct store;

/* A step's name in evidence: "12", or "rank 1 step 12" / "trace 2 step 12"
 * when the traces are several (file: its index in the store; number: from
 * 0 in its trace). */
void adv_step_label(char *buf, size_t size, const struct store *s, uint32_t file, size_t number,
		    int several);

extern const struct adv_rule adv_rule_input_bound;
extern const struct adv_rule adv_rule_jitter;
extern const struct adv_rule adv_rule_sync_calls;
extern const struct adv_rule adv_rule_pageable_copies;
extern const struct adv_rule adv_rule_straggler;
extern const struct adv_rule adv_rule_exposed_comm;
extern const struct adv_rule adv_rule_fp32_matmul;
extern const struct adv_rule adv_rule_data_parallel;
extern const struct adv_rule adv_rule_memory_peak;
extern const struct adv_rule adv_rule_memory_growth;
extern const struct adv_rule adv_rule_gpu_starved;
extern const struct adv_rule adv_rule_launch_bound;
extern const struct adv_rule adv_rule_cpu_contention;
extern const struct adv_rule adv_rule_oversubscription;
extern const struct adv_rule adv_rule_gc_pauses;

#endif
