/*
 * import_classify.c - the category table and the reading of names (see
 * import_classify.h).
 */
#include "formats/import/import_classify.h"

#include "formats/trace/trace.h"

#include <string.h>
#include <strings.h>

struct cat_entry {
	const char *cat;
	size_t len;
	uint8_t type;
	uint8_t stream;
};

#define CAT(name, type, stream) {name, sizeof(name) - 1, type, stream}

/* Kineto's categories (ActivityType names), the older PyTorch profiler's,
 * Paddle's TracerEventType names, and gprof-dl's own (its chrome export). */
static const struct cat_entry cat_table[] = {
	CAT("cpu_op", TRACE_EV_OPERATOR, 0),
	CAT("Operator", TRACE_EV_OPERATOR, 0),
	CAT("user_annotation", TRACE_EV_USER_DEFINED, 0),
	CAT("UserDefined", TRACE_EV_USER_DEFINED, 0),
	CAT("PythonUserDefined", TRACE_EV_USER_DEFINED, 0),
	CAT("python_function", TRACE_EV_PYTHON_OP, 0),
	CAT("PythonOp", TRACE_EV_PYTHON_OP, 0),
	CAT("cuda_runtime", TRACE_EV_CUDA_RUNTIME, 0),
	CAT("cuda_driver", TRACE_EV_CUDA_RUNTIME, 0),
	CAT("Runtime", TRACE_EV_CUDA_RUNTIME, 0),
	CAT("CudaRuntime", TRACE_EV_CUDA_RUNTIME, 0),
	CAT("kernel", TRACE_EV_KERNEL, 1),
	CAT("gpu_memcpy", TRACE_EV_MEMCPY, 1),
	CAT("Memcpy", TRACE_EV_MEMCPY, 1),
	CAT("gpu_memset", TRACE_EV_MEMSET, 1),
	CAT("Memset", TRACE_EV_MEMSET, 1),
	CAT("gpu_user_annotation", TRACE_EV_USER_DEFINED, 1),
	CAT("cuda_sync", TRACE_EV_USER_DEFINED, 1),
	CAT("Communication", TRACE_EV_COMMUNICATION, 1),
	CAT("ProfileStep", TRACE_EV_PROFILE_STEP, 0),
	CAT("Dataloader", TRACE_EV_DATALOADER, 0),
	CAT("Forward", TRACE_EV_FORWARD, 0),
	CAT("Backward", TRACE_EV_BACKWARD, 0),
	CAT("Optimization", TRACE_EV_OPTIMIZATION, 0),
	CAT("OperatorInner", TRACE_EV_OPERATOR_INNER, 0),
};

static int span_eq_ci(const char *a, size_t alen, const char *b, size_t blen)
{
	/* the first letter, without case, before the call: most categories
	 * differ there */
	return alen == blen && (alen == 0 || ((a[0] ^ b[0]) & ~0x20) == 0) &&
	       strncasecmp(a, b, alen) == 0;
}

static int has_prefix(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);
	return len >= n && memcmp(s, p, n) == 0;
}

void import_classify(const char *cat, size_t catlen, const char *name, size_t namelen,
		     uint8_t no_cat_type, struct import_class *c)
{
	c->type = TRACE_EV_USER_DEFINED;
	c->stream = 0;
	c->known = 0;
	if (!cat) {
		c->type = no_cat_type;
		c->known = 1;
	} else {
		for (size_t i = 0; i < sizeof(cat_table) / sizeof(cat_table[0]); i++) {
			if (span_eq_ci(cat, catlen, cat_table[i].cat, cat_table[i].len)) {
				c->type = cat_table[i].type;
				c->stream = cat_table[i].stream;
				c->known = 1;
				break;
			}
		}
	}
	if (c->type == TRACE_EV_KERNEL && import_is_comm_kernel(name, namelen))
		c->type = TRACE_EV_COMMUNICATION;
	/* torch's c10d names a collective's execution "gloo:all_reduce",
	 * "nccl:broadcast": the host side of the communication */
	if (!c->stream &&
	    (c->type == TRACE_EV_OPERATOR || c->type == TRACE_EV_OPERATOR_INNER ||
	     c->type == TRACE_EV_USER_DEFINED) &&
	    trace_name_comm_call(name, namelen))
		c->type = TRACE_EV_COMMUNICATION;
	if (!c->stream &&
	    (c->type == TRACE_EV_USER_DEFINED || c->type == TRACE_EV_OPERATOR) &&
	    import_is_step_name(name, namelen))
		c->type = TRACE_EV_PROFILE_STEP;
	/* torch.optim's own record_functions in Optimizer.step and zero_grad:
	 * operators, as gprof-dl's RecordFunction observer records every
	 * record_function scope in its own traces (one vocabulary for both;
	 * the Optimization phase is import_phases.c's) */
	if (!c->stream && c->type == TRACE_EV_USER_DEFINED &&
	    (has_prefix(name, namelen, "Optimizer.step#") ||
	     has_prefix(name, namelen, "Optimizer.zero_grad#")))
		c->type = TRACE_EV_OPERATOR;
	/* torch's DataLoader iterators time each batch as a record_function of
	 * this name: the Dataloader phase, for the Model and Perf Summaries. */
	if (!c->stream &&
	    (c->type == TRACE_EV_USER_DEFINED || c->type == TRACE_EV_OPERATOR) &&
	    has_prefix(name, namelen, "enumerate(DataLoader)#"))
		c->type = TRACE_EV_DATALOADER;
}

int import_type_by_name(const char *s, size_t n)
{
	for (unsigned t = 0; t < TRACE_EV_TYPE_COUNT; t++) {
		const char *tn = trace_event_type_name(t);
		if (strlen(tn) == n && memcmp(tn, s, n) == 0)
			return (int)t;
	}
	if (n == 6 && memcmp(s, "Memory", 6) == 0)
		return TRACE_EV_MEMORY; /* a build whose names table lacks it */
	return -1;
}

int import_is_profiler_span(const char *name, size_t len)
{
	size_t n = strlen("PyTorch Profiler (");
	if (len < n + 2 || memcmp(name, "PyTorch Profiler (", n) != 0 || name[len - 1] != ')')
		return 0;
	for (size_t i = n; i < len - 1; i++)
		if (name[i] < '0' || name[i] > '9')
			return 0;
	return 1;
}

int import_is_step_name(const char *name, size_t len)
{
	return has_prefix(name, len, "ProfilerStep#") || has_prefix(name, len, "ProfileStep#");
}

static const char *find_ci(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	if (n == 0)
		return s;
	/* the first letter without case before the call (the needles are
	 * letters) */
	for (size_t i = 0; i + n <= len; i++)
		if (((s[i] ^ needle[0]) & ~0x20) == 0 && strncasecmp(s + i, needle, n) == 0)
			return s + i;
	return NULL;
}

int import_is_comm_kernel(const char *name, size_t len)
{
	return trace_name_is_comm_work(name, len);
}

size_t import_strip_paddle_suffix(const char *name, size_t len)
{
	/* "[" digits ["." digits] " ms]" at the very end */
	size_t i = len;
	if (i < 6 || memcmp(name + i - 4, " ms]", 4) != 0)
		return len;
	i -= 4;
	size_t end = i, dots = 0;
	while (i > 0 && ((name[i - 1] >= '0' && name[i - 1] <= '9') || name[i - 1] == '.')) {
		dots += name[i - 1] == '.';
		i--;
	}
	if (i == end || dots > 1 || i == 0 || name[i - 1] != '[' || name[i] == '.')
		return len;
	return i - 1;
}

static const char *const copy_kind_names[] = {
	[TRACE_COPY_HTOD] = "HtoD", [TRACE_COPY_DTOH] = "DtoH", [TRACE_COPY_HTOA] = "HtoA",
	[TRACE_COPY_ATOH] = "AtoH", [TRACE_COPY_ATOA] = "AtoA", [TRACE_COPY_ATOD] = "AtoD",
	[TRACE_COPY_DTOA] = "DtoA", [TRACE_COPY_DTOD] = "DtoD", [TRACE_COPY_HTOH] = "HtoH",
	[TRACE_COPY_PTOP] = "PtoP",
};

/* Longest names first, so "Device Static" is not read as "Device". */
static const struct {
	const char *name;
	uint8_t kind;
} mem_kind_names[] = {
	{"Device Static", TRACE_MEM_DEVICE_STATIC},
	{"Managed Static", TRACE_MEM_MANAGED_STATIC},
	{"Pageable", TRACE_MEM_PAGEABLE},
	{"Pinned", TRACE_MEM_PINNED},
	{"Device", TRACE_MEM_DEVICE},
	{"Array", TRACE_MEM_ARRAY},
	{"Managed", TRACE_MEM_MANAGED},
};

static uint8_t mem_kind_at(const char *s, size_t len)
{
	while (len && *s == ' ') {
		s++;
		len--;
	}
	for (size_t i = 0; i < sizeof(mem_kind_names) / sizeof(mem_kind_names[0]); i++)
		if (has_prefix(s, len, mem_kind_names[i].name))
			return mem_kind_names[i].kind;
	return TRACE_MEM_UNKNOWN;
}

uint8_t import_memory_kind(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(mem_kind_names) / sizeof(mem_kind_names[0]); i++)
		if (strlen(mem_kind_names[i].name) == len &&
		    memcmp(name, mem_kind_names[i].name, len) == 0)
			return mem_kind_names[i].kind;
	return TRACE_MEM_UNKNOWN;
}

void import_memcpy_kinds(const char *name, size_t len, uint8_t *copy_kind, uint8_t *src_kind,
			 uint8_t *dst_kind)
{
	*copy_kind = TRACE_COPY_UNKNOWN;
	*src_kind = *dst_kind = TRACE_MEM_UNKNOWN;
	for (unsigned k = 1; k < sizeof(copy_kind_names) / sizeof(copy_kind_names[0]); k++) {
		const char *p = find_ci(name, len, copy_kind_names[k]);
		/* a word of its own: "Memcpy HtoD", "MEMCPY_HtoD", not inside a longer word */
		if (p && (p == name || p[-1] == ' ' || p[-1] == '_') &&
		    (p + 4 == name + len || strchr(" (_]", p[4]))) {
			*copy_kind = (uint8_t)k;
			break;
		}
	}
	const char *open = memchr(name, '(', len);
	if (!open)
		return;
	size_t rest = len - (size_t)(open + 1 - name);
	const char *arrow = NULL;
	for (size_t i = 0; i + 2 <= rest; i++)
		if (open[1 + i] == '-' && open[2 + i] == '>') {
			arrow = open + 1 + i;
			break;
		}
	if (!arrow)
		return;
	*src_kind = mem_kind_at(open + 1, (size_t)(arrow - open - 1));
	*dst_kind = mem_kind_at(arrow + 2, (size_t)(name + len - arrow - 2));
}

uint8_t import_memset_kind(const char *name, size_t len)
{
	const char *open = memchr(name, '(', len);
	if (!open)
		return TRACE_MEM_UNKNOWN;
	return mem_kind_at(open + 1, (size_t)(name + len - open - 1));
}
