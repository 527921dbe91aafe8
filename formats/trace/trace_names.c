/*
 * trace_names.c - the display names of the on-disk enums.
 *
 * Event type names are Paddle's TracerEventType spellings, so that tables read
 * the same as Paddle's profiler output. Values not known to this build (a newer
 * trace) get "?", never a crash: the reader accepts types it cannot name.
 */
#include "formats/trace/trace.h"

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
};

static const char *const trace_counter_names[TRACE_CTR_COUNT] = {
	[TRACE_CTR_CPU_PROCESS] = "CPU(Process)",
	[TRACE_CTR_CPU_SYSTEM] = "CPU(System)",
	[TRACE_CTR_RSS_BYTES] = "RSS",
};

const char *trace_event_type_name(unsigned type)
{
	return type < TRACE_EV_TYPE_COUNT ? trace_event_type_names[type] : "?";
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
