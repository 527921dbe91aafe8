/*
 * _observer.cpp - gprof-dl's torch RecordFunction observer, for CPU builds of
 * torch, which emit no NVTX: every operator (FUNCTION), backward function and
 * record_function scope (USER_SCOPE) becomes an Operator range through the
 * collector's C interface (gprof-dl-api.h), with torch's sequence number and,
 * when asked, its input shapes ("[[32, 64], [64]]" as torch's profiler writes
 * them).
 *
 * torch's C++ ABI differs between versions, so this file is compiled by the
 * gprof_dl package against the running torch's headers at first use (_ops.py)
 * and loaded with ctypes: gpdl_observer_add(shapes) and gpdl_observer_remove().
 */
#include "gprof-dl-api.h"

#include <ATen/record_function.h>

#include <cstring>
#include <dlfcn.h>
#include <string>

namespace {

const gprof_dl_api *api;
at::CallbackHandle handle;
bool added;

/* Names' ids, per thread, by the address of the name: operator names live as
 * long as the operator, but a record_function's name dies with it and its
 * address may come back with other text, so a hit also compares the text. */
struct name_slot {
	const char *ptr;
	uint32_t id;
	char text[52];
};
constexpr size_t NAME_SLOTS = 256;
thread_local name_slot names[NAME_SLOTS];

uint32_t name_id(const char *s)
{
	name_slot &c = names[(reinterpret_cast<uintptr_t>(s) >> 3) % NAME_SLOTS];
	if (c.ptr == s && std::strcmp(c.text, s) == 0)
		return c.id;
	size_t len = std::strlen(s);
	uint32_t id = api->string(s, len);
	if (id && len < sizeof(c.text)) {
		c.ptr = s;
		c.id = id;
		std::memcpy(c.text, s, len + 1);
	}
	return id;
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

std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction &fn)
{
	api->op_push(name_id(fn.name()), fn.seqNr(), 0);
	return nullptr;
}

std::unique_ptr<at::ObserverContext> enter_with_shapes(const at::RecordFunction &fn)
{
	api->op_push(name_id(fn.name()), fn.seqNr(), shapes_id(fn));
	return nullptr;
}

void leave(const at::RecordFunction &, at::ObserverContext *)
{
	api->pop();
}

} // namespace

/* Start recording (shapes: with input shapes). 0, or -1 when no collector is
 * recording this process. */
extern "C" __attribute__((visibility("default"))) int gpdl_observer_add(int shapes)
{
	if (added)
		return 0;
	if (!api) {
		auto find = reinterpret_cast<gprof_dl_api_fn>(dlsym(RTLD_DEFAULT, GPROF_DL_API_SYMBOL));
		const gprof_dl_api *a = find ? find(GPROF_DL_API_VERSION) : nullptr;
		if (!a || a->version != GPROF_DL_API_VERSION)
			return -1;
		api = a;
	}
	at::RecordFunctionCallback cb(shapes ? enter_with_shapes : enter, leave);
	cb.needsInputs(shapes != 0)
		.scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
			 at::RecordScope::USER_SCOPE});
	handle = at::addGlobalCallback(cb);
	added = true;
	return 0;
}

/* Stop recording. A range whose start was seen still gets its end. */
extern "C" __attribute__((visibility("default"))) void gpdl_observer_remove(void)
{
	if (!added)
		return;
	at::removeCallback(handle);
	added = false;
}
