/*
 * trace_names.c - the display names of the on-disk enums.
 *
 * Event type names are Paddle's TracerEventType spellings, so that tables read
 * the same as Paddle's profiler output; copy and memory kinds are spelt as
 * nvprof and the PyTorch profiler spell them. Values not known to this build (a newer
 * trace) get "?", never a crash: the reader accepts types it cannot name.
 */
#include "formats/trace/trace.h"

#include <string.h>
#include <strings.h>

static const char *const trace_event_type_names[TRACE_EV_TYPE_COUNT] = {
	[TRACE_EV_USER_DEFINED] = "UserDefined",
	[TRACE_EV_PROFILE_STEP] = "ProfileStep",
	[TRACE_EV_DATALOADER] = "Dataloader",
	[TRACE_EV_FORWARD] = "Forward",
	[TRACE_EV_BACKWARD] = "Backward",
	[TRACE_EV_OPTIMIZATION] = "Optimization",
	[TRACE_EV_OPERATOR] = "Operator",
	[TRACE_EV_OPERATOR_INNER] = "OperatorInner",
	[TRACE_EV_PYTHON_OP] = "PythonOp",
	[TRACE_EV_CUDA_RUNTIME] = "CudaRuntime",
	[TRACE_EV_KERNEL] = "Kernel",
	[TRACE_EV_MEMCPY] = "Memcpy",
	[TRACE_EV_MEMSET] = "Memset",
	[TRACE_EV_COMMUNICATION] = "Communication",
	[TRACE_EV_MEMORY] = "Memory",
};

static const char *const trace_drop_reason_names[TRACE_DROP_REASON_COUNT] = {
	[TRACE_DROP_RING_FULL] = "ring full",
	[TRACE_DROP_TIME_RANGE] = "timestamp out of range",
	[TRACE_DROP_TIME_NAN] = "timestamp not a number",
	[TRACE_DROP_NEGATIVE_DURATION] = "negative duration",
	[TRACE_DROP_DURATION_RANGE] = "duration out of range",
	[TRACE_DROP_DURATION_NAN] = "duration not a number",
	[TRACE_DROP_BEFORE_START] = "timestamp before the trace's start",
	[TRACE_DROP_NO_SLOT] = "no ring slot for its thread (more threads than --max-threads)",
	[TRACE_DROP_NO_TIME] = "no timestamp",
	[TRACE_DROP_UNKNOWN_PHASE] = "phase not imported",
	[TRACE_DROP_END_WITHOUT_BEGIN] = "end without begin",
	[TRACE_DROP_BEGIN_WITHOUT_END] = "begin without end",
	[TRACE_DROP_BAD_NAME] = "name not a string",
	[TRACE_DROP_BAD_ID] = "pid or tid not an integer or a string",
	[TRACE_DROP_BAD_ARGS] = "args not an object",
};

const char *trace_drop_reason_name(unsigned reason)
{
	return reason < TRACE_DROP_REASON_COUNT ? trace_drop_reason_names[reason]
						: "unknown reason";
}

int trace_drop_reason_is_loss(unsigned reason)
{
	return reason != TRACE_DROP_NEGATIVE_DURATION && reason != TRACE_DROP_DURATION_RANGE &&
	       reason != TRACE_DROP_DURATION_NAN && reason != TRACE_DROP_BEFORE_START &&
	       reason != TRACE_DROP_BAD_NAME && reason != TRACE_DROP_BAD_ID &&
	       reason != TRACE_DROP_BAD_ARGS;
}

static const char *const trace_counter_names[TRACE_CTR_COUNT] = {
	[TRACE_CTR_CPU_PROCESS] = "CPU(Process)",
	[TRACE_CTR_CPU_SYSTEM] = "CPU(System)",
	[TRACE_CTR_RSS_BYTES] = "RSS",
};

/* nvprof's and the PyTorch profiler's spellings of CUPTI's memcpy kinds. */
static const char *const trace_copy_kind_names[] = {
	[TRACE_COPY_UNKNOWN] = "Unknown",
	[TRACE_COPY_HTOD] = "HtoD",
	[TRACE_COPY_DTOH] = "DtoH",
	[TRACE_COPY_HTOA] = "HtoA",
	[TRACE_COPY_ATOH] = "AtoH",
	[TRACE_COPY_ATOA] = "AtoA",
	[TRACE_COPY_ATOD] = "AtoD",
	[TRACE_COPY_DTOA] = "DtoA",
	[TRACE_COPY_DTOD] = "DtoD",
	[TRACE_COPY_HTOH] = "HtoH",
	[TRACE_COPY_PTOP] = "PtoP",
};

static const char *const trace_memory_kind_names[] = {
	[TRACE_MEM_UNKNOWN] = "Unknown",
	[TRACE_MEM_PAGEABLE] = "Pageable",
	[TRACE_MEM_PINNED] = "Pinned",
	[TRACE_MEM_DEVICE] = "Device",
	[TRACE_MEM_ARRAY] = "Array",
	[TRACE_MEM_MANAGED] = "Managed",
	[TRACE_MEM_DEVICE_STATIC] = "Device Static",
	[TRACE_MEM_MANAGED_STATIC] = "Managed Static",
};

#define TRACE_NAMES_LEN(a) (sizeof(a) / sizeof((a)[0]))

const char *trace_event_type_name(unsigned type)
{
	return type < TRACE_EV_TYPE_COUNT && trace_event_type_names[type]
		       ? trace_event_type_names[type]
		       : "?";
}

const char *trace_copy_kind_name(unsigned kind)
{
	return kind < TRACE_NAMES_LEN(trace_copy_kind_names) ? trace_copy_kind_names[kind] : "?";
}

const char *trace_memory_kind_name(unsigned kind)
{
	return kind < TRACE_NAMES_LEN(trace_memory_kind_names) ? trace_memory_kind_names[kind]
							       : "?";
}

int trace_event_type_is_device(unsigned type)
{
	return type == TRACE_EV_KERNEL || type == TRACE_EV_MEMCPY || type == TRACE_EV_MEMSET ||
	       type == TRACE_EV_COMMUNICATION;
}

const char *trace_counter_name(unsigned id)
{
	return id < TRACE_CTR_COUNT && trace_counter_names[id] ? trace_counter_names[id] : "?";
}

int trace_name_is_comm_work(const char *name, size_t len)
{
	for (size_t i = 0; i + 4 <= len; i++)
		if ((name[i] == 'n' || name[i] == 'N' || name[i] == 'r' || name[i] == 'R') &&
		    strncasecmp(name + i + 1, "ccl", 3) == 0)
			return 1;
	return 0;
}

/* c10d's backends, whose work torch names "BACKEND:OP". */
static const char *const trace_comm_backends[] = { "gloo", "nccl", "mpi", "ucc" };

size_t trace_name_comm_call(const char *name, size_t len)
{
	const char *colon = name ? memchr(name, ':', len) : NULL;
	size_t n = colon ? (size_t)(colon - name) : 0;

	if (!colon || n + 1 == len) /* no ':', or nothing after it: no op */
		return 0;
	for (size_t i = 0; i < TRACE_NAMES_LEN(trace_comm_backends); i++)
		if (strlen(trace_comm_backends[i]) == n &&
		    strncasecmp(name, trace_comm_backends[i], n) == 0)
			return n;
	return 0;
}

int trace_name_is_step(const char *name, size_t len)
{
	static const char *const prefixes[] = {"ProfileStep", "ProfilerStep"};
	for (unsigned k = 0; k < 2; k++) {
		size_t n = strlen(prefixes[k]);
		if (len < n || memcmp(name, prefixes[k], n) != 0)
			continue;
		if (len == n)
			return 1;
		if (name[n] != '#' || len == n + 1)
			return 0;
		for (size_t i = n + 1; i < len; i++)
			if (name[i] < '0' || name[i] > '9')
				return 0;
		return 1;
	}
	return 0;
}
