/*
 * _native.c - gprof_dl._native, the Python package's door to the collector:
 * thin wrappers over the collector's C interface (gprof-dl-api.h), found with
 * dlsym in the running process. Outside `gprof-dl run` the collector is absent
 * (or not attached to a launcher) and every function returns at once.
 *
 * Built against CPython's limited API 3.10, so one _native.abi3.so serves
 * every CPython from 3.10 on. The calls made per training phase (push, pop,
 * range, now, detail) take METH_FASTCALL arguments and no keywords; names are
 * interned once by the caller (string) and passed as ids, so nothing on those
 * paths formats or hashes a string.
 *
 * Thread names go through NVTX (nvtxNameOsThreadA, which the collector's NVTX
 * injection records as the thread's name), where the build had NVTX's headers
 * (GPDL_HAVE_NVTX): the collector has no NVTX injection without them either.
 */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "lib/collector/gprof-dl-api.h"
#include "lib/collector/gprof-dl-nvtx.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#if GPDL_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

static const struct gprof_dl_api *api;

/* An interface new enough for every call below, or NULL. */
static const struct gprof_dl_api *api_find(void)
{
	gprof_dl_api_fn fn = (gprof_dl_api_fn)dlsym(RTLD_DEFAULT, GPROF_DL_API_SYMBOL);
	if (!fn)
		return NULL;
	const struct gprof_dl_api *a = fn(GPROF_DL_API_VERSION);
	if (!a || a->version != GPROF_DL_API_VERSION ||
	    a->size < offsetof(struct gprof_dl_api, torch_nvtx) + sizeof(a->torch_nvtx) || !a->detail)
		return NULL;
	return a;
}

/* Integer arguments: a wrong type raises TypeError, a negative or too large
 * value OverflowError, as Python's own conversions do. */
static int arg_u64(PyObject *o, uint64_t *v)
{
	unsigned long long x = PyLong_AsUnsignedLongLong(o);
	if (x == (unsigned long long)-1 && PyErr_Occurred())
		return -1;
	*v = x;
	return 0;
}

static int arg_u32(PyObject *o, uint32_t *v)
{
	uint64_t x;
	if (arg_u64(o, &x) < 0)
		return -1;
	if (x > UINT32_MAX) {
		PyErr_SetString(PyExc_OverflowError, "value does not fit in 32 bits");
		return -1;
	}
	*v = (uint32_t)x;
	return 0;
}

static int nargs_is(const char *name, Py_ssize_t nargs, Py_ssize_t want)
{
	if (nargs == want)
		return 1;
	PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, want, nargs);
	return 0;
}

static PyObject *py_available(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyBool_FromLong(api != NULL);
}

/* string(name: str) -> int: the name's id, 0 when not recording. */
static PyObject *py_string(PyObject *self, PyObject *arg)
{
	(void)self;
	Py_ssize_t len;
	const char *s = PyUnicode_AsUTF8AndSize(arg, &len);
	if (!s)
		return NULL;
	return PyLong_FromUnsignedLong(api ? api->string(s, (size_t)len) : 0);
}

/* push(category, name_id) */
static PyObject *py_push(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	uint32_t cat, name;
	if (!nargs_is("push", nargs, 2) || arg_u32(args[0], &cat) < 0 || arg_u32(args[1], &name) < 0)
		return NULL;
	if (api)
		api->push(cat, name);
	Py_RETURN_NONE;
}

/* op_push(name_id, seq, shapes_id) */
static PyObject *py_op_push(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	uint32_t name, shapes;
	if (!nargs_is("op_push", nargs, 3) || arg_u32(args[0], &name) < 0)
		return NULL;
	long long seq = PyLong_AsLongLong(args[1]);
	if (seq == -1 && PyErr_Occurred())
		return NULL;
	if (arg_u32(args[2], &shapes) < 0)
		return NULL;
	if (api)
		api->op_push(name, (int64_t)seq, shapes);
	Py_RETURN_NONE;
}

static PyObject *py_pop(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	if (api)
		api->pop();
	Py_RETURN_NONE;
}

/* range(category, name_id, start_ns, end_ns, samples) */
static PyObject *py_range(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	uint32_t cat, name;
	uint64_t start, end, samples;
	if (!nargs_is("range", nargs, 5) || arg_u32(args[0], &cat) < 0 || arg_u32(args[1], &name) < 0 ||
	    arg_u64(args[2], &start) < 0 || arg_u64(args[3], &end) < 0 || arg_u64(args[4], &samples) < 0)
		return NULL;
	if (api)
		api->range(cat, name, start, end, samples);
	Py_RETURN_NONE;
}

/* mark(category, name_id) */
static PyObject *py_mark(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	uint32_t cat, name;
	if (!nargs_is("mark", nargs, 2) || arg_u32(args[0], &cat) < 0 || arg_u32(args[1], &name) < 0)
		return NULL;
	if (api)
		api->mark(cat, name);
	Py_RETURN_NONE;
}

/* now() -> int: the trace clock in ns, 0 when not recording. */
static PyObject *py_now(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromUnsignedLongLong(api ? api->now() : 0);
}

/* detail() -> bool: whether full detail is being recorded now. */
static PyObject *py_detail(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyBool_FromLong(api && *api->detail);
}

/* step(n): step n begins. */
static PyObject *py_step(PyObject *self, PyObject *arg)
{
	(void)self;
	uint64_t n;
	if (arg_u64(arg, &n) < 0)
		return NULL;
	if (api)
		api->step(n);
	Py_RETURN_NONE;
}

static PyObject *py_start(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	if (api)
		api->start();
	Py_RETURN_NONE;
}

static PyObject *py_stop(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	if (api)
		api->stop();
	Py_RETURN_NONE;
}

/* options() -> int: the enum gprof_dl_option mask, 0 when not recording. */
static PyObject *py_options(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromUnsignedLong(api ? api->options() : 0);
}

/* torch_nvtx(on): 0 off, else 1 with GPROF_DL_TORCH_NVTX_NO_COMM or not (a
 * bool is 0 or 1). */
static PyObject *py_torch_nvtx(PyObject *self, PyObject *arg)
{
	(void)self;
	uint32_t on;
	if (arg_u32(arg, &on) < 0)
		return NULL;
	if (api)
		api->torch_nvtx((int)on);
	Py_RETURN_NONE;
}

/* has_comm() -> bool: the collector records communication calls (comm()),
 * and honours torch_nvtx's GPROF_DL_TORCH_NVTX_NO_COMM. */
static PyObject *py_has_comm(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyBool_FromLong(api && GPROF_DL_API_HAS(api, comm) && api->comm);
}

/* rank(rank, local_rank, world_size, backend_id): what init_process_group
 * learnt (local_rank -1: unknown). False when the collector cannot take it. */
static PyObject *py_rank(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	long v[3];
	uint32_t backend;
	if (!nargs_is("rank", nargs, 4))
		return NULL;
	for (int i = 0; i < 3; i++) {
		v[i] = PyLong_AsLong(args[i]);
		if (v[i] == -1 && PyErr_Occurred())
			return NULL;
		if (v[i] < -1 || v[i] > INT32_MAX) {
			PyErr_SetString(PyExc_OverflowError, "rank() value out of range");
			return NULL;
		}
	}
	if (arg_u32(args[3], &backend) < 0)
		return NULL;
	if (!api || !GPROF_DL_API_HAS(api, rank) || !api->rank)
		Py_RETURN_FALSE;
	api->rank((int32_t)v[0], (int32_t)v[1], (int32_t)v[2], backend);
	Py_RETURN_TRUE;
}

/* name_thread(name, tid=0): names OS thread TID (0: the calling one) in the
 * trace. False when names cannot be recorded (no NVTX in this build). */
static PyObject *py_name_thread(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	uint32_t tid = 0;
	if (nargs != 1 && !nargs_is("name_thread", nargs, 2))
		return NULL;
	const char *name = PyUnicode_AsUTF8AndSize(args[0], NULL);
	if (!name || (nargs == 2 && arg_u32(args[1], &tid) < 0))
		return NULL;
#if GPDL_HAVE_NVTX
	if (api) {
		nvtxNameOsThreadA(tid ? tid : (uint32_t)syscall(SYS_gettid), name);
		Py_RETURN_TRUE;
	}
#endif
	Py_RETURN_FALSE;
}

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL

static PyMethodDef native_methods[] = {
	{"available", py_available, METH_NOARGS, "available() -> bool: the collector is recording"},
	{"string", py_string, METH_O, "string(name) -> int: the name's id (0: not recording)"},
	{"push", FASTCALL(py_push), "push(category, name_id): open a range on this thread"},
	{"op_push", FASTCALL(py_op_push), "op_push(name_id, seq, shapes_id): open an Operator range"},
	{"pop", py_pop, METH_NOARGS, "pop(): close this thread's innermost gprof-dl range"},
	{"range", FASTCALL(py_range), "range(category, name_id, start_ns, end_ns, samples)"},
	{"mark", FASTCALL(py_mark), "mark(category, name_id): an instant on this thread"},
	{"now", py_now, METH_NOARGS, "now() -> int: the trace clock, ns (0: not recording)"},
	{"detail", py_detail, METH_NOARGS, "detail() -> bool: full detail is recorded now"},
	{"step", py_step, METH_O, "step(n): step n begins (moves the --steps window)"},
	{"start", py_start, METH_NOARGS, "start(): full detail on from now"},
	{"stop", py_stop, METH_NOARGS, "stop(): full detail off from now"},
	{"options", py_options, METH_NOARGS, "options() -> int: the launcher's option mask"},
	{"torch_nvtx", py_torch_nvtx, METH_O, "torch_nvtx(on): read torch's NVTX ranges as operators"},
	{"has_comm", py_has_comm, METH_NOARGS, "has_comm() -> bool: communication calls can be recorded"},
	{"rank", FASTCALL(py_rank), "rank(rank, local_rank, world_size, backend_id): this process's rank"},
	{"name_thread", FASTCALL(py_name_thread), "name_thread(name, tid=0): name an OS thread in the trace"},
	{NULL, NULL, 0, NULL},
};

static int native_exec(PyObject *m)
{
	api = api_find();
	static const struct {
		const char *name;
		long value;
	} consts[] = {
		{"OPT_TIMER_ONLY", GPROF_DL_OPT_TIMER_ONLY},
		{"OPT_RECORD_SHAPES", GPROF_DL_OPT_RECORD_SHAPES},
		{"OPT_STEP_WINDOW", GPROF_DL_OPT_STEP_WINDOW},
		{"OPT_TIME_WINDOW", GPROF_DL_OPT_TIME_WINDOW},
		{"OPT_PAUSED", GPROF_DL_OPT_PAUSED},
		{"OPT_NO_PYTHON", GPROF_DL_OPT_NO_PYTHON},
		{"OPT_PROFILE_MEMORY", GPROF_DL_OPT_PROFILE_MEMORY},
		{"CAT_PROFILE_STEP", GPROF_DL_CAT_PROFILE_STEP},
		{"CAT_DATALOADER", GPROF_DL_CAT_DATALOADER},
		{"CAT_FORWARD", GPROF_DL_CAT_FORWARD},
		{"CAT_BACKWARD", GPROF_DL_CAT_BACKWARD},
		{"CAT_OPTIMIZATION", GPROF_DL_CAT_OPTIMIZATION},
		{"CAT_OPERATOR", GPROF_DL_CAT_OPERATOR},
		{"CAT_PYTHON_OP", GPROF_DL_CAT_PYTHON_OP},
		{"TORCH_NVTX_NO_COMM", GPROF_DL_TORCH_NVTX_NO_COMM},
	};
	for (size_t i = 0; i < sizeof(consts) / sizeof(consts[0]); i++)
		if (PyModule_AddIntConstant(m, consts[i].name, consts[i].value) < 0)
			return -1;
	return 0;
}

static PyModuleDef_Slot native_slots[] = {
	{Py_mod_exec, (void *)native_exec},
	{0, NULL},
};

static struct PyModuleDef native_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "gprof_dl._native",
	.m_doc = "The collector's C interface (gprof-dl-api.h), for the gprof_dl package.",
	.m_size = 0,
	.m_methods = native_methods,
	.m_slots = native_slots,
};

PyMODINIT_FUNC PyInit__native(void)
{
	return PyModuleDef_Init(&native_module);
}
