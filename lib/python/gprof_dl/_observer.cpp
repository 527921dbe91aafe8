/*
 * _observer.cpp - gprof-dl's torch RecordFunction observer, two callbacks:
 *
 * - operators, for CPU builds of torch, which emit no NVTX: every operator
 *   (FUNCTION), backward function and record_function scope (USER_SCOPE)
 *   becomes an Operator range through the collector's C interface
 *   (gprof-dl-api.h), with torch's sequence number and, when asked, its input
 *   shapes ("[[32, 64], [64]]" as torch's profiler writes them);
 * - communication, for every build: c10d names each collective's and
 *   point-to-point call's work "BACKEND:OP" ("gloo:all_reduce"), a USER_SCOPE
 *   RecordFunction whose inputs are the call's tensors. On gloo it begins and
 *   ends on the process group's worker thread (start to completion of the
 *   work); send/recv begin on the caller and end at wait(). Each becomes one
 *   Communication event (api->comm()) with its bytes and element type, timed
 *   from the RecordFunction's start to its end (the start kept in the
 *   ObserverContext, since the end may come on another thread). While this
 *   callback is on, the operator callback leaves those names to it.
 *
 * - memory (--profile-memory): PyTorch's allocators (CPU and CUDA) report
 *   every allocation and free to the profiler state of the allocating
 *   thread's c10::ThreadLocalDebugInfo (DebugInfoKind::PROFILER_STATE) when
 *   its memoryProfilingEnabled() is true, as torch.profiler's profile_memory
 *   gets them. gpdl_memory_start() pushes such a state on the calling thread,
 *   as torch.profiler pushes its own; autograd's threads inherit it with the
 *   rest of the debug info, as they inherit torch.profiler's. Each report
 *   becomes one Memory event on the allocating thread (api->memory()).
 *   The state is a torch::profiler::impl::ProfilerStateBase whose config is
 *   Disabled, so that torch's profilerEnabled() and profilerType() (which
 *   cast whatever PROFILER_STATE holds to their own type, with static_cast)
 *   read "no profiler here". torch.profiler refuses to start while any state
 *   is there ("Profiler is already enabled on this thread", torch 1.13 and
 *   2.9 alike), so the package wraps the program's profiler switches:
 *   gpdl_memory_suspend() pops the state before the program's profiler
 *   starts, gpdl_memory_resume() pushes it back once that profiler has
 *   stopped (its own state, which gets the reports meanwhile, popped). It is
 *   pushed when the hook is installed, before the program can run a
 *   profiler of its own. gpdl_memory_stop() turns it off for good.
 *
 * A name is a communication call by the rule of trace_name_comm_call
 * (formats/trace/trace_names.c): BACKEND:OP with BACKEND gloo, nccl, mpi or
 * ucc in any case and OP not empty; the verdict is cached with the name's id.
 *
 * torch's C++ ABI differs between versions, so this file is compiled by the
 * gprof_dl package against the running torch's headers at first use (_ops.py)
 * and loaded with ctypes: gpdl_observer_add(shapes, what) and
 * gpdl_observer_remove(what).
 */
#include "gprof-dl-api.h"

#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <string>
#include <strings.h>

namespace {

/* What gpdl_observer_add and _remove take and return (_ops.py: OPS, COMM). */
constexpr int WHAT_OPS = 1, WHAT_COMM = 2;

const gprof_dl_api *api;
at::CallbackHandle ops_handle, comm_handle;
int added;               /* WHAT_* bits */
std::atomic<bool> comm_on; /* the communication callback is on: operators leave its names */

/* BACKEND's length when NAME (len bytes) is a communication call, else 0:
 * the rule of trace_name_comm_call. */
size_t comm_call(const char *name, size_t len)
{
	static const char *const backends[] = {"gloo", "nccl", "mpi", "ucc"};
	const char *colon = static_cast<const char *>(std::memchr(name, ':', len));
	size_t n = colon ? static_cast<size_t>(colon - name) : 0;
	if (!colon || n + 1 == len)
		return 0;
	for (const char *b : backends)
		if (std::strlen(b) == n && strncasecmp(name, b, n) == 0)
			return n;
	return 0;
}

/* Names' ids and verdicts, per thread, by the address of the name: operator
 * names live as long as the operator, but a record_function's name dies with
 * it and its address may come back with other text, so a hit also compares
 * the text. id 0: the name was only judged (by the communication callback,
 * which interns none but its own names). */
struct name_slot {
	const char *ptr;
	uint32_t id;
	uint8_t comm;
	char text[51];
};
constexpr size_t NAME_SLOTS = 256;
thread_local name_slot names[NAME_SLOTS];

inline name_slot &slot_of(const char *s)
{
	return names[(reinterpret_cast<uintptr_t>(s) >> 3) % NAME_SLOTS];
}

void slot_fill(name_slot &c, const char *s, size_t len, uint32_t id, bool comm)
{
	if (len < sizeof(c.text)) {
		c.ptr = s;
		c.id = id;
		c.comm = comm;
		std::memcpy(c.text, s, len + 1);
	}
}

/* The operator callback's lookup: the name's id, and whether it is a
 * communication call. */
inline uint32_t name_id(const char *s, bool *comm)
{
	name_slot &c = slot_of(s);
	if (c.ptr == s && c.id && std::strcmp(c.text, s) == 0) {
		*comm = c.comm;
		return c.id;
	}
	size_t len = std::strlen(s);
	*comm = comm_call(s, len) != 0;
	uint32_t id = api->string(s, len);
	if (id)
		slot_fill(c, s, len, id, *comm);
	return id;
}

/* The communication callback's: whether S is a communication call, and then
 * its id (0: it could not be had). */
bool comm_name(const char *s, uint32_t *id)
{
	name_slot &c = slot_of(s);
	if (c.ptr == s && std::strcmp(c.text, s) == 0) { /* comm names are kept with their id */
		*id = c.id;
		return c.comm;
	}
	size_t len = std::strlen(s);
	bool comm = comm_call(s, len) != 0;
	*id = comm ? api->string(s, len) : 0;
	if (!comm || *id)
		slot_fill(c, s, len, *id, comm);
	return comm;
}

void append_sizes(std::string &out, const c10::IValue &v)
{
	out += '[';
	if (v.isTensor()) {
		const at::Tensor &t = v.toTensor();
		try {
			if (t.defined()) {
				bool first = true;
				for (int64_t d : t.sizes()) {
					if (!first)
						out += ", ";
					first = false;
					out += std::to_string(d);
				}
			}
		} catch (...) {
			/* sizes of a nested or symbolic tensor: none */
		}
	}
	out += ']';
}

uint32_t shapes_id(const at::RecordFunction &fn)
{
	std::string s = "[";
	bool first = true;
	for (const c10::IValue &v : fn.inputs()) {
		if (!first)
			s += ", ";
		first = false;
		append_sizes(s, v);
	}
	s += ']';
	return api->string(s.data(), s.size());
}

/* What the operator callback returns for a name it leaves to the
 * communication callback: its end then pops nothing. */
struct skipped final : at::ObserverContext {};

std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction &fn)
{
	bool comm;
	uint32_t id = name_id(fn.name(), &comm);
	if (comm && comm_on.load(std::memory_order_relaxed))
		return std::make_unique<skipped>();
	api->op_push(id, fn.seqNr(), 0);
	return nullptr;
}

std::unique_ptr<at::ObserverContext> enter_with_shapes(const at::RecordFunction &fn)
{
	bool comm;
	uint32_t id = name_id(fn.name(), &comm);
	if (comm && comm_on.load(std::memory_order_relaxed))
		return std::make_unique<skipped>();
	api->op_push(id, fn.seqNr(), shapes_id(fn));
	return nullptr;
}

void leave(const at::RecordFunction &, at::ObserverContext *ctx)
{
	if (!ctx)
		api->pop();
}

/* ---- communication ---------------------------------------------------------- */

struct comm_ctx final : at::ObserverContext {
	uint64_t start_ns = 0, bytes = 0;
	uint32_t name = 0, dtype = 0;
};

/* The element type's id, as torch's profiler writes it ("float", "c10::Half":
 * the type's TypeMeta name, Kineto's "Input type"), cached per scalar type. */
uint32_t dtype_id(const at::Tensor &t)
{
	thread_local uint32_t ids[128];
	auto k = static_cast<size_t>(t.scalar_type());
	if (k < 128 && ids[k])
		return ids[k];
	auto n = t.dtype().name();
	uint32_t id = api->string(n.data(), n.size());
	if (k < 128)
		ids[k] = id;
	return id;
}

void add_tensor(comm_ctx &c, const at::Tensor &t)
{
	if (!t.defined())
		return;
	c.bytes += static_cast<uint64_t>(t.numel()) * t.element_size();
	if (!c.dtype)
		c.dtype = dtype_id(t);
}

/* Bytes of the call's tensors (tensors, tensor lists, lists of tensors), and
 * the first one's element type. */
void add_inputs(comm_ctx &c, const at::RecordFunction &fn)
{
	for (const c10::IValue &v : fn.inputs()) {
		try {
			if (v.isTensor()) {
				add_tensor(c, v.toTensor());
			} else if (v.isTensorList()) {
				for (const at::Tensor &t : v.toTensorVector())
					add_tensor(c, t);
			} else if (v.isList()) {
				for (const c10::IValue &e : v.toListRef())
					if (e.isTensor())
						add_tensor(c, e.toTensor());
			}
		} catch (...) {
			/* a tensor without storage or sizes (meta, nested): not counted */
		}
	}
}

std::unique_ptr<at::ObserverContext> comm_enter(const at::RecordFunction &fn)
{
	uint32_t id;
	if (!comm_name(fn.name(), &id) || !id)
		return nullptr;
	auto c = std::make_unique<comm_ctx>();
	c->start_ns = api->now();
	c->name = id;
	add_inputs(*c, fn);
	return c;
}

void comm_leave(const at::RecordFunction &, at::ObserverContext *ctx)
{
	if (!ctx)
		return;
	const comm_ctx &c = *static_cast<const comm_ctx *>(ctx);
	gprof_dl_comm r = {};
	r.name = c.name;
	r.dtype = c.dtype;
	r.group_size = 0; /* the record does not say: the analysis takes the world size */
	r.peer = -1;
	r.seq = -1;
	r.bytes = c.bytes;
	r.start_ns = c.start_ns;
	r.end_ns = api->now();
	api->comm(&r);
}

/* ---- memory ----------------------------------------------------------------------- */

/* reportMemoryUsage's totals are int64_t in torch 1.x and size_t in 2.x:
 * take the type from the declaration. */
template <class C, class R, class A, class T>
T total_arg(R (C::*)(void *, A, T, T, c10::Device));
using total_t = decltype(total_arg(&c10::MemoryReportingInfoBase::reportMemoryUsage));

namespace prof = torch::profiler::impl;

struct memory_state final : prof::ProfilerStateBase {
	memory_state() : prof::ProfilerStateBase(prof::ProfilerConfig(prof::ProfilerState::Disabled)) {}

	void reportMemoryUsage(void *ptr, int64_t bytes, total_t total_allocated, total_t total_reserved,
			       c10::Device device) override
	{
		if (!on.load(std::memory_order_relaxed) || !bytes)
			return;
		gprof_dl_memory m = {};
		m.address = reinterpret_cast<uintptr_t>(ptr);
		m.bytes = bytes;
		m.total_allocated = total_allocated > 0 ? static_cast<uint64_t>(total_allocated) : 0;
		m.total_reserved = total_reserved > 0 ? static_cast<uint64_t>(total_reserved) : 0;
		m.device = device.is_cpu() ? -1 : (device.has_index() ? device.index() : 0);
		api->memory(&m);
	}

	bool memoryProfilingEnabled() const override { return on.load(std::memory_order_relaxed); }

	prof::ActiveProfilerType profilerType() override { return prof::ActiveProfilerType::NONE; }

	std::atomic<bool> on{true};
};

std::shared_ptr<memory_state> memory; /* pushed on the thread that started it */
thread_local bool memory_popped;      /* this thread popped it for the program's profiler */

} // namespace

/* Start recording WHAT (WHAT_OPS: operators, with input shapes when SHAPES;
 * WHAT_COMM: communication calls, where the collector's interface has comm()).
 * The WHAT bits now on, or -1 when no collector is recording this process. */
extern "C" __attribute__((visibility("default"))) int gpdl_observer_add(int shapes, int what)
{
	if (!api) {
		auto find = reinterpret_cast<gprof_dl_api_fn>(dlsym(RTLD_DEFAULT, GPROF_DL_API_SYMBOL));
		const gprof_dl_api *a = find ? find(GPROF_DL_API_VERSION) : nullptr;
		if (!a || a->version != GPROF_DL_API_VERSION)
			return -1;
		api = a;
	}
	if ((what & WHAT_COMM) && !(added & WHAT_COMM) && GPROF_DL_API_HAS(api, comm) && api->comm) {
		at::RecordFunctionCallback cb(comm_enter, comm_leave);
		cb.needsInputs(true).scopes({at::RecordScope::USER_SCOPE});
		comm_handle = at::addGlobalCallback(cb);
		added |= WHAT_COMM;
		comm_on.store(true, std::memory_order_relaxed);
	}
	if ((what & WHAT_OPS) && !(added & WHAT_OPS)) {
		at::RecordFunctionCallback cb(shapes ? enter_with_shapes : enter, leave);
		cb.needsInputs(shapes != 0)
			.scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
				 at::RecordScope::USER_SCOPE});
		ops_handle = at::addGlobalCallback(cb);
		added |= WHAT_OPS;
	}
	return added;
}

/* Stop recording WHAT. A range whose start was seen still gets its end. */
extern "C" __attribute__((visibility("default"))) void gpdl_observer_remove(int what)
{
	if (what & added & WHAT_OPS) {
		at::removeCallback(ops_handle);
		added &= ~WHAT_OPS;
	}
	if (what & added & WHAT_COMM) {
		comm_on.store(false, std::memory_order_relaxed);
		at::removeCallback(comm_handle);
		added &= ~WHAT_COMM;
	}
}

/* --profile-memory: report the allocations of PyTorch's allocators made on
 * this thread, and on the threads that inherit its debug info (autograd's).
 * Call it on the thread that installs the hook, before the program can have
 * started a profiler of its own. 1: on; 0: no collector, or one without
 * memory(); -1: a profiler state is already on this thread (the program's
 * profiler runs), so none is pushed. */
extern "C" __attribute__((visibility("default"))) int gpdl_memory_start(void)
{
	if (!api) {
		auto find = reinterpret_cast<gprof_dl_api_fn>(dlsym(RTLD_DEFAULT, GPROF_DL_API_SYMBOL));
		const gprof_dl_api *a = find ? find(GPROF_DL_API_VERSION) : nullptr;
		if (!a || a->version != GPROF_DL_API_VERSION)
			return 0;
		api = a;
	}
	if (!GPROF_DL_API_HAS(api, memory) || !api->memory)
		return 0;
	if (memory) {
		memory->on.store(true, std::memory_order_relaxed);
		return 1;
	}
	if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE))
		return -1;
	memory = std::make_shared<memory_state>();
	c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, memory);
	return 1;
}

/* Before the program's profiler starts on this thread: our state leaves
 * PROFILER_STATE when it is the innermost there. 1: popped. */
extern "C" __attribute__((visibility("default"))) int gpdl_memory_suspend(void)
{
	if (!memory || c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) != memory.get())
		return 0;
	try {
		c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
	} catch (...) {
		return 0; /* another kind of debug info is innermost: left as it is */
	}
	memory_popped = true;
	return 1;
}

/* After the program's profiler stopped: our state comes back on the thread
 * that popped it, once no other profiler state is there. 1: pushed. */
extern "C" __attribute__((visibility("default"))) int gpdl_memory_resume(void)
{
	if (!memory || !memory_popped || c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE))
		return 0;
	c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, memory);
	memory_popped = false;
	return 1;
}

/* No more reports (a DataLoader worker, the end of the process). The state
 * stays where it was pushed. */
extern "C" __attribute__((visibility("default"))) void gpdl_memory_stop(void)
{
	if (memory)
		memory->on.store(false, std::memory_order_relaxed);
}
