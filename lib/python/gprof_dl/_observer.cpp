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
 * - process groups and sequence numbers of those calls (below, "groups").
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
 * ucc in any case and OP not empty; a c10d call when it is "c10d::OP", the
 * dispatcher op of every torch.distributed collective and point-to-point
 * call (torch 1.13 and 2.x alike); the verdict is cached with the name's id.
 *
 * Groups. The work's RecordFunction ("gloo:all_reduce") says nothing of its
 * group, and gloo records no record_param_comms in torch 1.13 or 2.9 (NCCL
 * does in 2.x); the c10d op around the call has the group among its inputs,
 * but asking torch for inputs makes it box every operator's arguments. What
 * is cheap and exact instead (seen on torch 1.13 and 2.9, gloo, with an
 * observer that printed what each callback gets; tests/dist/pg_e2e.py
 * checks the outcome):
 * - the c10d op ("c10d::allreduce_") starts and ends on the calling thread
 *   (DDP's reducer: the thread running backward), and the call's work is
 *   made and queued inside it; gloo runs the work on the group's worker
 *   threads, where "gloo:*" may start before or after the c10d op ends, and
 *   several works can be in flight;
 * - gloo's work carries the calling thread's thread-local state
 *   (at::wrapPropagateTLSState) to the worker, c10::ThreadLocalDebugInfo
 *   included: what is pushed there at the c10d op's start is what the
 *   work's start finds on the worker, and send/recv start inside the op;
 * - each group's c10d sequence number (getSequenceNumberForGroup()) grows
 *   by one per collective call, inside its c10d op, alike on every member
 *   (torch 2.9 starts at 0, 1.13 at a number rank 0 draws); torch 2.9's gloo
 *   counts send and recv in it too, on their two ranks only, 1.13's does not.
 * So the Python package registers every group the program makes (its torch
 * group name, "0" for the default group, "1", "2"... for new_group's, alike
 * on every member: gpdl_pg_register or, where torch has no group registry,
 * gpdl_pg_capture_*), and every c10d op pushes a pg_call holding the
 * registered groups' sequence numbers at its start; the one group whose
 * number has moved, by exactly one, is the call's, and its new number the
 * call's (less the point-to-point calls that moved it, which the package
 * counts in Python whatever the recording window). Any doubt leaves
 * it unknown: another c10d op begun on any thread meanwhile or already in
 * flight, no group or several moved, a group with point-to-point calls whose
 * effect on its number was never seen, or one the program sent or received
 * on from C++. The work's Communication event takes the group, its size and
 * the number from the pg_call its start finds (the first work of a call
 * only), resolved by whichever of the c10d op's end and the work's end comes
 * first. Send and receive get their group and peer (the other process's
 * global rank) from the package's wrappers of torch.distributed's send,
 * recv, isend and irecv, and no sequence number (the analysis pairs a send
 * with its receive by their two ranks). An operator pays nothing for this
 * but the name lookup it already had: the work is done for c10d names only
 * (with communication alone, the c10d callback makes that lookup).
 *
 * torch's C++ ABI differs between versions, so this file is compiled by the
 * gprof_dl package against the running torch's headers at first use (_ops.py)
 * and loaded with ctypes: gpdl_observer_add(shapes, what),
 * gpdl_observer_remove(what), the gpdl_memory_* and gpdl_pg_* functions.
 */
#include "gprof-dl-api.h"

#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/profiler/orchestration/observer.h>

/* Groups need c10d's headers (absent from builds of torch without
 * distributed): without them, calls have no group, as before. */
#if __has_include(<torch/csrc/distributed/c10d/ProcessGroup.hpp>)
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#define GPDL_GROUPS 1
#if __has_include(<torch/csrc/distributed/c10d/GroupRegistry.hpp>)
#include <torch/csrc/distributed/c10d/GroupRegistry.hpp>
#define GPDL_GROUP_REGISTRY 1
#endif
#endif

#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <mutex>
#include <string>
#include <strings.h>

namespace {

/* What gpdl_observer_add and _remove take and return (_ops.py: OPS, COMM). */
constexpr int WHAT_OPS = 1, WHAT_COMM = 2;

const gprof_dl_api *api;
at::CallbackHandle ops_handle, comm_handle, c10d_handle;
int added;               /* WHAT_* bits */
bool c10d_added;         /* the c10d callback of communication without operators */
std::atomic<bool> comm_on; /* the communication callback is on: operators leave its names */

/* What a name is (name_slot.kind). */
enum : uint8_t {
	K_PLAIN = 0,
	K_COMM = 1,     /* BACKEND:OP, a call's work: the communication callback's */
	K_C10D = 2,     /* c10d::OP, the dispatcher op of a collective call */
	K_C10D_P2P = 3, /* c10d::send, recv_, recv_any_source_ */
};

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

uint8_t kind_of(const char *s, size_t len)
{
	if (comm_call(s, len))
		return K_COMM;
	if (len > 6 && std::memcmp(s, "c10d::", 6) == 0) {
		const char *op = s + 6;
		if (!std::strcmp(op, "send") || !std::strcmp(op, "recv_") || !std::strcmp(op, "recv_any_source_"))
			return K_C10D_P2P;
		return K_C10D;
	}
	return K_PLAIN;
}

/* Names' ids and kinds, per thread, by the address of the name: operator
 * names live as long as the operator, but a record_function's name dies with
 * it and its address may come back with other text, so a hit also compares
 * the text. id 0: the name was only judged (by the communication and c10d
 * callbacks, which intern none but communication calls). */
struct name_slot {
	const char *ptr;
	uint32_t id;
	uint8_t kind;
	char text[51];
};
constexpr size_t NAME_SLOTS = 256;
thread_local name_slot names[NAME_SLOTS];

inline name_slot &slot_of(const char *s)
{
	return names[(reinterpret_cast<uintptr_t>(s) >> 3) % NAME_SLOTS];
}

void slot_fill(name_slot &c, const char *s, size_t len, uint32_t id, uint8_t kind)
{
	if (len < sizeof(c.text)) {
		c.ptr = s;
		c.id = id;
		c.kind = kind;
		std::memcpy(c.text, s, len + 1);
	}
}

/* The operator callback's lookup: the name's id, and its kind. */
inline uint32_t name_id(const char *s, uint8_t *kind)
{
	name_slot &c = slot_of(s);
	if (c.ptr == s && c.id && std::strcmp(c.text, s) == 0) {
		*kind = c.kind;
		return c.id;
	}
	size_t len = std::strlen(s);
	*kind = kind_of(s, len);
	uint32_t id = api->string(s, len);
	if (id)
		slot_fill(c, s, len, id, *kind);
	return id;
}

/* The communication and c10d callbacks': the name's kind, and the id of a
 * communication call's name (0: it could not be had). */
uint8_t name_kind(const char *s, uint32_t *id)
{
	name_slot &c = slot_of(s);
	if (c.ptr == s && std::strcmp(c.text, s) == 0) { /* comm names are kept with their id */
		*id = c.id;
		return c.kind;
	}
	size_t len = std::strlen(s);
	uint8_t kind = kind_of(s, len);
	*id = kind == K_COMM ? api->string(s, len) : 0;
	if (kind != K_COMM || *id)
		slot_fill(c, s, len, *id, kind);
	return kind;
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

/* ---- groups (the header comment says how) ----------------------------------------- */

/* What the callbacks return: a plain operator returns none (its end pops);
 * a name the operator callback leaves to the communication callback returns
 * a gp_ctx with nothing to pop; a c10d op returns a c10d_ctx. */
struct gp_ctx : at::ObserverContext {
	explicit gp_ctx(bool op) : op_pushed(op) {}
	bool op_pushed; /* an Operator range to pop */
	virtual void leave() {}
};

#if GPDL_GROUPS

/* Nothing in torch reads this kind ("used only in tests"), so no torch code
 * ever casts our pg_call to a type of its own. */
constexpr auto PG_KIND = c10::DebugInfoKind::TEST_INFO_2;
constexpr uint64_t NO_SEQ = UINT64_MAX;

/* A registered group. Written once before pg_count covers it, then read
 * without a lock; never freed. The group is held weakly: the program decides
 * when it goes. */
struct pg_slot {
	pg_slot(const c10::intrusive_ptr<c10d::ProcessGroup> &p, uint32_t n, uint32_t s)
		: pg(p), name(n), size(s)
	{
	}
	c10::weak_intrusive_ptr<c10d::ProcessGroup> pg;
	uint32_t name, size;
	std::atomic<uint64_t> p2p{0};   /* its point-to-point calls through torch.distributed */
	std::atomic<int> p2p_moves{-1}; /* whether one moves its sequence number; -1 unknown */
	std::atomic<bool> untrusted{false}; /* its sequence number no longer says the call */
	std::atomic<bool> dead{false};
};
constexpr uint32_t PG_SLOTS = 256;
pg_slot *pg_slots[PG_SLOTS];
std::atomic<uint32_t> pg_count;
std::mutex pg_mu; /* registration */

/* A group whose last holder let it go while we held it leaks instead: its
 * destructor joins its worker threads, which must never happen inside a
 * callback (on one of those threads, or holding the GIL). */
void let_go(c10::intrusive_ptr<c10d::ProcessGroup> &p)
{
	if (p && p.use_count() == 1)
		(void)p.release();
}

/* Group I's sequence number now; false: it is gone or says none. */
bool read_seq(uint32_t i, uint64_t *out)
{
	pg_slot &s = *pg_slots[i];
	if (s.dead.load(std::memory_order_relaxed))
		return false;
	c10::intrusive_ptr<c10d::ProcessGroup> p = s.pg.lock();
	if (!p) {
		s.dead.store(true, std::memory_order_relaxed);
		return false;
	}
	bool ok = true;
	try {
		*out = p->getSequenceNumberForGroup();
	} catch (...) {
		ok = false; /* a backend without sequence numbers */
	}
	let_go(p);
	return ok && *out != NO_SEQ;
}

/* c10d ops begun (ever) and in flight (now), on every thread. */
std::atomic<uint64_t> calls_started;
std::atomic<uint32_t> calls_in_flight;

/* The package's mark of a point-to-point call it is making on this thread. */
struct p2p_mark_t {
	int32_t slot = -1, peer = -1;
};
thread_local p2p_mark_t p2p_mark;
thread_local bool capturing; /* gpdl_pg_capture_begin .. _end on this thread */

/* One c10d call, pushed as thread-local debug info for its work to find. */
struct pg_call final : c10::DebugInfoBase {
	uint64_t started = 0;
	bool concurrent = false; /* another c10d op was in flight at its start */
	uint8_t kind = K_C10D;
	int32_t mark_slot = -1, peer = -1;
	uint32_t n = 0; /* groups registered at its start */
	std::unique_ptr<uint64_t[]> seq0, p2p0;
	std::atomic<uint32_t> claims{0}; /* works that found it */
	std::mutex m;
	bool resolved = false;
	int32_t slot = -1; /* its group; -1 unknown */
	int64_t seq = -1;
};

void learn_p2p_moves(pg_slot &s, int moves)
{
	int unknown = -1;
	if (!s.p2p_moves.compare_exchange_strong(unknown, moves) && unknown != moves)
		s.untrusted.store(true); /* it moved once and not another time */
}

/* Which group the call was on, and its sequence number: once, by the first
 * of its c10d op's end and its work's end. */
void resolve(pg_call &c)
{
	std::lock_guard<std::mutex> g(c.m);
	if (c.resolved)
		return;
	c.resolved = true;
	bool clean = !c.concurrent && calls_started.load() == c.started;
	uint32_t moved = 0, by_one = 0;
	int32_t j = -1;
	uint64_t now_j = 0;
	for (uint32_t i = 0; clean && i < c.n; i++) {
		uint64_t now;
		if (c.seq0[i] == NO_SEQ || !read_seq(i, &now) || now == c.seq0[i])
			continue;
		moved++;
		if (now - c.seq0[i] == 1) {
			by_one++;
			j = static_cast<int32_t>(i);
			now_j = now;
		}
	}
	bool one = clean && moved == 1 && by_one == 1;
	if (c.kind == K_C10D_P2P) {
		if (c.mark_slot >= 0) {
			c.slot = c.mark_slot;
			if (clean && (moved == 0 || (one && j == c.mark_slot)))
				learn_p2p_moves(*pg_slots[c.mark_slot], moved ? 1 : 0);
		} else if (one) {
			/* sent or received from C++, uncounted: the group's number is
			 * off by it on this rank from now on */
			pg_slots[j]->untrusted.store(true);
			c.slot = j;
		}
		return;
	}
	if (!one)
		return;
	c.slot = j;
	pg_slot &s = *pg_slots[j];
	if (s.untrusted.load())
		return;
	uint64_t p2p = c.p2p0[j];
	if (p2p) {
		int moves = s.p2p_moves.load();
		if (moves < 0 || (moves && now_j < p2p))
			return;
		if (moves)
			now_j -= p2p;
	}
	c.seq = static_cast<int64_t>(now_j);
}

struct c10d_ctx final : gp_ctx {
	using gp_ctx::gp_ctx;
	std::shared_ptr<c10::ThreadLocalDebugInfo> prev;
	std::shared_ptr<pg_call> call;
	void leave() override
	{
		resolve(*call);
		calls_in_flight.fetch_sub(1);
		if (c10::ThreadLocalDebugInfo::get(PG_KIND) == call.get())
			c10::ThreadLocalDebugInfo::_forceCurrentDebugInfo(prev);
	}
};

/* A c10d op starts: its pg_call, pushed; null when no group is registered. */
std::unique_ptr<gp_ctx> c10d_begin(uint8_t kind, bool op_pushed)
{
	uint32_t n = pg_count.load(std::memory_order_acquire);
	if (!n)
		return op_pushed ? std::make_unique<gp_ctx>(true) : nullptr;
	auto c = std::make_shared<pg_call>();
	c->kind = kind;
	c->concurrent = calls_in_flight.fetch_add(1) != 0;
	c->started = calls_started.fetch_add(1) + 1;
	if (kind == K_C10D_P2P && p2p_mark.slot >= 0 && static_cast<uint32_t>(p2p_mark.slot) < n) {
		c->mark_slot = p2p_mark.slot;
		c->peer = p2p_mark.peer;
	}
	c->n = n;
	c->seq0.reset(new uint64_t[n]);
	c->p2p0.reset(new uint64_t[n]);
	for (uint32_t i = 0; i < n; i++) {
		c->p2p0[i] = pg_slots[i]->p2p.load();
		if (!read_seq(i, &c->seq0[i]))
			c->seq0[i] = NO_SEQ;
	}
	auto ctx = std::make_unique<c10d_ctx>(op_pushed);
	ctx->prev = c10::ThreadLocalDebugInfo::current();
	ctx->call = c;
	c10::ThreadLocalDebugInfo::_push(PG_KIND, std::move(c));
	return ctx;
}

#else

std::unique_ptr<gp_ctx> c10d_begin(uint8_t, bool op_pushed)
{
	return op_pushed ? std::make_unique<gp_ctx>(true) : nullptr;
}

#endif

/* ---- operators ---------------------------------------------------------------- */

/* An operator whose name is not plain: left to the communication callback,
 * or a c10d op (an Operator range, and its group's bookkeeping). */
__attribute__((noinline)) std::unique_ptr<at::ObserverContext> enter_named(const at::RecordFunction &fn,
									   uint32_t id, uint8_t kind,
									   uint32_t shapes)
{
	bool comm = comm_on.load(std::memory_order_relaxed);
	if (kind == K_COMM && comm)
		return std::make_unique<gp_ctx>(false);
#if GPDL_GROUPS
	if (kind != K_COMM && capturing)
		return std::make_unique<gp_ctx>(false); /* the package's capture: no range */
#endif
	api->op_push(id, fn.seqNr(), shapes);
	if (kind == K_COMM || !comm)
		return nullptr;
	return c10d_begin(kind, true);
}

std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction &fn)
{
	uint8_t kind;
	uint32_t id = name_id(fn.name(), &kind);
	if (kind)
		return enter_named(fn, id, kind, 0);
	api->op_push(id, fn.seqNr(), 0);
	return nullptr;
}

std::unique_ptr<at::ObserverContext> enter_with_shapes(const at::RecordFunction &fn)
{
	uint8_t kind;
	uint32_t id = name_id(fn.name(), &kind);
	if (kind)
		return enter_named(fn, id, kind, shapes_id(fn));
	api->op_push(id, fn.seqNr(), shapes_id(fn));
	return nullptr;
}

void leave(const at::RecordFunction &, at::ObserverContext *ctx)
{
	if (!ctx) {
		api->pop();
		return;
	}
	auto *c = static_cast<gp_ctx *>(ctx);
	if (c->op_pushed)
		api->pop();
	c->leave();
}

/* Communication without operators (CUDA builds whose operators come from
 * torch's NVTX ranges): c10d ops alone, for their groups. */
std::unique_ptr<at::ObserverContext> c10d_enter(const at::RecordFunction &fn)
{
	uint32_t id;
	uint8_t kind = name_kind(fn.name(), &id);
	if (kind < K_C10D)
		return nullptr;
#if GPDL_GROUPS
	if (capturing)
		return nullptr;
#endif
	return c10d_begin(kind, false);
}

void c10d_leave(const at::RecordFunction &, at::ObserverContext *ctx)
{
	if (ctx)
		static_cast<gp_ctx *>(ctx)->leave();
}

/* ---- communication ---------------------------------------------------------- */

struct comm_ctx final : at::ObserverContext {
	uint64_t start_ns = 0, bytes = 0;
	uint32_t name = 0, dtype = 0;
#if GPDL_GROUPS
	std::shared_ptr<c10::ThreadLocalDebugInfo> keep; /* holds call */
	pg_call *call = nullptr; /* the c10d call that made this work */
	bool first = false;      /* the first work of that call */
#endif
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
	if (name_kind(fn.name(), &id) != K_COMM || !id)
		return nullptr;
	auto c = std::make_unique<comm_ctx>();
	c->start_ns = api->now();
	c->name = id;
	add_inputs(*c, fn);
#if GPDL_GROUPS
	if (pg_count.load(std::memory_order_relaxed)) {
		/* on gloo's worker, the state of the thread that made the work */
		if (auto *call = static_cast<pg_call *>(c10::ThreadLocalDebugInfo::get(PG_KIND))) {
			c->keep = c10::ThreadLocalDebugInfo::current();
			c->call = call;
			c->first = call->claims.fetch_add(1) == 0;
		}
	}
#endif
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
	r.group_size = 0; /* unknown: the analysis takes the world size */
	r.peer = -1;
	r.seq = -1;
#if GPDL_GROUPS
	if (c.call) {
		resolve(*c.call);
		if (c.call->slot >= 0) {
			const pg_slot &s = *pg_slots[c.call->slot];
			r.pg = s.name;
			r.group_size = s.size;
			if (c.first)
				r.seq = c.call->seq;
		}
		r.peer = c.call->peer;
	}
#endif
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

/* c10d ops are the operator callback's while it is on; with communication
 * alone, a callback of their own (FUNCTION scope, without inputs: a name
 * lookup per operator). */
void c10d_sync()
{
	bool want = (added & WHAT_COMM) && !(added & WHAT_OPS);
	if (want && !c10d_added) {
		at::RecordFunctionCallback cb(c10d_enter, c10d_leave);
		cb.scopes({at::RecordScope::FUNCTION});
		c10d_handle = at::addGlobalCallback(cb);
	} else if (!want && c10d_added) {
		at::removeCallback(c10d_handle);
	}
	c10d_added = want;
}

bool find_api()
{
	if (!api) {
		auto find = reinterpret_cast<gprof_dl_api_fn>(dlsym(RTLD_DEFAULT, GPROF_DL_API_SYMBOL));
		const gprof_dl_api *a = find ? find(GPROF_DL_API_VERSION) : nullptr;
		if (!a || a->version != GPROF_DL_API_VERSION)
			return false;
		api = a;
	}
	return true;
}

#if GPDL_GROUPS
/* Registers PG as NAME: its slot, or -1 (no collector, or no room). */
int pg_add(const c10::intrusive_ptr<c10d::ProcessGroup> &pg, const char *name, size_t len)
{
	if (!pg || !find_api())
		return -1;
	std::lock_guard<std::mutex> g(pg_mu);
	uint32_t n = pg_count.load();
	for (uint32_t i = 0; i < n; i++) {
		c10::intrusive_ptr<c10d::ProcessGroup> p = pg_slots[i]->pg.lock();
		bool same = p.get() == pg.get();
		let_go(p);
		if (same)
			return static_cast<int>(i);
	}
	uint32_t id = api->string(name, len);
	if (n == PG_SLOTS || !id)
		return -1;
	pg_slots[n] = new pg_slot(pg, id, static_cast<uint32_t>(pg->getSize()));
	pg_count.store(n + 1, std::memory_order_release);
	return static_cast<int>(n);
}

/* The group of the c10d op this thread runs while capturing (its inputs). */
thread_local c10::intrusive_ptr<c10d::ProcessGroup> captured;
at::CallbackHandle capture_handle;

std::unique_ptr<at::ObserverContext> capture_enter(const at::RecordFunction &fn)
{
	if (std::strncmp(fn.name(), "c10d::", 6) != 0)
		return nullptr;
	for (const c10::IValue &v : fn.inputs()) {
		if (!v.isObject())
			continue;
		try {
			captured = v.toCustomClass<c10d::ProcessGroup>();
		} catch (...) {
			/* another class */
		}
	}
	return nullptr;
}
#endif

} // namespace

/* Start recording WHAT (WHAT_OPS: operators, with input shapes when SHAPES;
 * WHAT_COMM: communication calls, where the collector's interface has comm()).
 * The WHAT bits now on, or -1 when no collector is recording this process. */
extern "C" __attribute__((visibility("default"))) int gpdl_observer_add(int shapes, int what)
{
	if (!find_api())
		return -1;
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
	c10d_sync();
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
	c10d_sync();
}

/* --profile-memory: report the allocations of PyTorch's allocators made on
 * this thread, and on the threads that inherit its debug info (autograd's).
 * Call it on the thread that installs the hook, before the program can have
 * started a profiler of its own. 1: on; 0: no collector, or one without
 * memory(); -1: a profiler state is already on this thread (the program's
 * profiler runs), so none is pushed. */
extern "C" __attribute__((visibility("default"))) int gpdl_memory_start(void)
{
	if (!find_api())
		return 0;
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

/* ---- groups: what the package tells ------------------------------------------------ */

/* The group torch's registry knows as NAME (torch 2.x: its group_name) is
 * registered: its slot (>= 0); -1 it cannot be (no collector, no room, no
 * such group); -2 this torch has no registry: capture it instead. */
extern "C" __attribute__((visibility("default"))) int gpdl_pg_register(const char *name, size_t len)
{
#if GPDL_GROUPS && GPDL_GROUP_REGISTRY
	try {
		return pg_add(c10d::resolve_process_group(std::string(name, len)), name, len);
	} catch (...) {
		return -1;
	}
#else
	(void)name;
	(void)len;
	return -2;
#endif
}

/* Where torch has no group registry (1.13): between _begin and _end, the
 * package calls a c10d op of the group on this thread that fails its
 * argument checks before it does anything (a broadcast from root -1), and
 * _end registers the group that op was given as NAME. The op's inputs are
 * asked for by a callback of this thread alone, for this while only. */
extern "C" __attribute__((visibility("default"))) int gpdl_pg_capture_begin(void)
{
#if GPDL_GROUPS
	if (capturing)
		return 0;
	at::RecordFunctionCallback cb(capture_enter);
	cb.needsInputs(true).scopes({at::RecordScope::FUNCTION});
	capture_handle = at::addThreadLocalCallback(cb);
	capturing = true;
	return 1;
#else
	return 0;
#endif
}

extern "C" __attribute__((visibility("default"))) int gpdl_pg_capture_end(const char *name, size_t len)
{
#if GPDL_GROUPS
	if (!capturing)
		return -1;
	at::removeCallback(capture_handle);
	capturing = false;
	c10::intrusive_ptr<c10d::ProcessGroup> pg = std::move(captured);
	captured.reset();
	return pg ? pg_add(pg, name, len) : -1;
#else
	(void)name;
	(void)len;
	return -1;
#endif
}

/* The package's wrapper of a point-to-point call on group SLOT with PEER
 * (the other process's global rank; -1 any) begins on this thread; _end:
 * it returned (OK) or raised. */
extern "C" __attribute__((visibility("default"))) void gpdl_pg_p2p_begin(int slot, int peer)
{
#if GPDL_GROUPS
	p2p_mark.slot = slot;
	p2p_mark.peer = peer;
#else
	(void)slot;
	(void)peer;
#endif
}

extern "C" __attribute__((visibility("default"))) void gpdl_pg_p2p_end(int slot, int ok)
{
#if GPDL_GROUPS
	p2p_mark = p2p_mark_t();
	if (slot < 0 || static_cast<uint32_t>(slot) >= pg_count.load(std::memory_order_acquire))
		return;
	if (ok)
		pg_slots[slot]->p2p.fetch_add(1);
	else
		pg_slots[slot]->untrusted.store(true); /* did it reach c10d? */
#else
	(void)slot;
	(void)ok;
#endif
}
