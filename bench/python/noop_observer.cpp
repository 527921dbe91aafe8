/*
 * noop_observer.cpp - the floor under gprof-dl's operator recording: a
 * RecordFunction callback registered as _observer.cpp registers its operator
 * callback (same scopes, no inputs, no ids, no outputs) that does nothing.
 * What it costs per operator is torch's own price of having any callback on;
 * bench/python/op_overhead.py compiles it through the gprof_dl package's
 * builder and op_loop.py --noop-observer loads it.
 */
#include <ATen/record_function.h>

#include <memory>

namespace {

std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction &)
{
	return nullptr;
}

void leave(const at::RecordFunction &, at::ObserverContext *)
{
}

} // namespace

extern "C" __attribute__((visibility("default"))) int gpdl_noop_observer_add(void)
{
	at::RecordFunctionCallback cb(enter, leave);
	cb.scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE});
	at::addGlobalCallback(cb);
	return 1;
}
