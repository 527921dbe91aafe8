/*
 * import_classify.h - what a foreign chrome-trace event is in gprof-dl's
 * taxonomy: the category -> event type table, and what names say (a copy's
 * direction and memory kinds, an NCCL kernel, a step, Paddle's "[1.234 ms]").
 *
 * torch.optim's "Optimizer.step#SGD.step" and "Optimizer.zero_grad#..."
 * record_functions are Operators whatever their category, as in gprof-dl's
 * own traces.
 *
 * A host operator named BACKEND:OP (trace_name_comm_call: c10d's
 * "gloo:all_reduce", "nccl:broadcast") is Communication, as a kernel named
 * as NCCL's is.
 *
 * Categories are matched without regard to case, so Kineto's ("cpu_op"),
 * the older PyTorch profiler's ("Operator", "Runtime") and Paddle's
 * ("CudaRuntime") spellings share one table. gprof-dl-import(1) lists it.
 */
#ifndef GPDL_FORMATS_IMPORT_CLASSIFY_H
#define GPDL_FORMATS_IMPORT_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

struct import_class {
	uint8_t type;   /* enum trace_event_type */
	uint8_t stream; /* belongs on a GPU stream track, not a host thread */
	uint8_t known;  /* the category is in the table (else: UserDefined) */
};

/* A complete or instant event's class from its category (cat NULL: none)
 * and name. no_cat_type is the type of an event without a category (the
 * plain-array form of the older PyTorch profiler: Operator). */
void import_classify(const char *cat, size_t catlen, const char *name, size_t namelen,
		     uint8_t no_cat_type, struct import_class *c);

/* One of gprof-dl's own type names ("Forward", as trace_event_type_name
 * spells them, exactly): the type, or -1. */
int import_type_by_name(const char *s, size_t n);

/* "PyTorch Profiler (0)": Kineto's span of the profiler's own window, which
 * an import takes as the trace's recorded interval, not as an event. */
int import_is_profiler_span(const char *name, size_t len);

/* "ProfilerStep#12" (PyTorch) or "ProfileStep#12" (Paddle). */
int import_is_step_name(const char *name, size_t len);

/* A collective's kernel: NCCL's or RCCL's ("ncclKernel_AllReduce_...",
 * "ncclDevKernel_...", "rccl..."), in any case. */
int import_is_comm_kernel(const char *name, size_t len);

/* The length of name without Paddle's duration suffix "[12.345 ms]". */
size_t import_strip_paddle_suffix(const char *name, size_t len);

/* A copy's direction and its ends' memory kinds, from a name such as
 * "Memcpy HtoD (Pageable -> Device)" (Kineto) or "MEMCPY_DtoH" (Paddle);
 * what the name does not say stays 0 (unknown). */
void import_memcpy_kinds(const char *name, size_t len, uint8_t *copy_kind, uint8_t *src_kind,
			 uint8_t *dst_kind);
/* A memory kind's name ("Pageable", "Device Static"): enum trace_memory_kind,
 * 0 when unknown. */
uint8_t import_memory_kind(const char *name, size_t len);
/* The memory kind of "Memset (Device)": enum trace_memory_kind, 0 unknown. */
uint8_t import_memset_kind(const char *name, size_t len);

#endif
