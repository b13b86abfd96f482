// regiontrace.region: the one Python object on the hot path, written against
// the C API rather than pybind11 because its disabled cost is a promise
// (no more than `with contextlib.nullcontext():` plus 100 ns).
// pybind11's constructor and method dispatch alone cost several hundred
// nanoseconds; a static type with a vectorcall constructor and METH_NOARGS /
// METH_FASTCALL methods costs about what a bare `with` costs.
//
// `with region(name):` enters and leaves the region; `region(name)(fn)` is the
// decorator, built in Python (regiontrace/_decorate.py) because generators
// and methods need Python-level wrapping.
#include "region_type.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "regiontrace/regiontrace.hpp"

namespace regiontrace::python {
namespace {

PyObject* g_error_type = nullptr;  // regiontrace.Error
PyObject* g_decorate = nullptr;    // regiontrace._decorate.decorate(region, fn)

// Region ids by name. A `with region("x"):` creates a new object per entry, so
// the id cannot live in the object alone; the registry interns under a mutex
// and allocates. The GIL guards this map.
std::unordered_map<std::string, RegionId>& id_cache() {
  static auto* cache =
      new std::unordered_map<std::string, RegionId>();  // never destroyed: used at exit
  return *cache;
}

struct RegionObject {
  PyObject_HEAD PyObject* name;  // str
  // Tokens of the entries still open on this object: one per nested `with`
  // of the same object (recursion through a decorated function uses one
  // object). Four inline, more on the heap.
  static constexpr int kInline = 4;
  std::uint64_t tokens[kInline];
  int depth;
  std::vector<std::uint64_t>* overflow;
};

// Converts a C++ start-up error into regiontrace.Error (a RuntimeError).
void set_error(const std::exception& e) {
  PyErr_SetString(g_error_type != nullptr ? g_error_type : PyExc_RuntimeError, e.what());
}

bool lookup_id(PyObject* name, RegionId* id) {
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(name, &size);
  if (utf8 == nullptr) return false;
  std::string key(utf8, static_cast<std::size_t>(size));
  try {
    // The first region reads the configuration (again after shutdown()),
    // whether or not its id is cached.
    if (detail::g_state.load(std::memory_order_relaxed) == detail::kStateUninitialized) {
      detail::lazy_init();
    }
    auto& cache = id_cache();
    if (auto it = cache.find(key); it != cache.end()) {
      *id = it->second;
      return true;
    }
    *id = region_id(key);
    cache.emplace(std::move(key), *id);
  } catch (const std::exception& e) {
    set_error(e);
    return false;
  }
  return true;
}

PyObject* region_vectorcall(PyObject* type, PyObject* const* args, size_t nargsf,
                            PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs != 1 || (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0)) {
    PyErr_SetString(PyExc_TypeError, "region(name): exactly one positional argument, the name");
    return nullptr;
  }
  if (!PyUnicode_Check(args[0])) {
    PyErr_Format(PyExc_TypeError, "region(name): name must be str, not %.100s",
                 Py_TYPE(args[0])->tp_name);
    return nullptr;
  }
  auto* self = PyObject_New(RegionObject, reinterpret_cast<PyTypeObject*>(type));
  if (self == nullptr) return nullptr;
  Py_INCREF(args[0]);
  self->name = args[0];
  self->depth = 0;
  self->overflow = nullptr;
  return reinterpret_cast<PyObject*>(self);
}

PyObject* region_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  // Subclasses and callers going through tp_new (pickle, copy) land here.
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) {
    PyErr_SetString(PyExc_TypeError, "region(name): no keyword arguments");
    return nullptr;
  }
  return region_vectorcall(reinterpret_cast<PyObject*>(type), &PyTuple_GET_ITEM(args, 0),
                           static_cast<size_t>(PyTuple_GET_SIZE(args)), nullptr);
}

void region_dealloc(PyObject* obj) {
  auto* self = reinterpret_cast<RegionObject*>(obj);
  Py_XDECREF(self->name);
  delete self->overflow;
  PyObject_Free(obj);
}

void push_token(RegionObject* self, std::uint64_t token) {
  if (self->depth < RegionObject::kInline) {
    self->tokens[self->depth] = token;
  } else {
    if (self->overflow == nullptr) self->overflow = new std::vector<std::uint64_t>();
    self->overflow->push_back(token);
  }
  ++self->depth;
}

std::uint64_t pop_token(RegionObject* self) {
  --self->depth;
  if (self->depth < RegionObject::kInline) return self->tokens[self->depth];
  const std::uint64_t token = self->overflow->back();
  self->overflow->pop_back();
  return token;
}

PyObject* region_enter(PyObject* obj, PyObject* /*unused*/) {
  auto* self = reinterpret_cast<RegionObject*>(obj);
  std::uint64_t token = 0;
  // Disabled: one relaxed load and a branch, as in the C++ Region.
  if (detail::g_state.load(std::memory_order_relaxed) != detail::kStateOff) {
    RegionId id = 0;
    if (!lookup_id(self->name, &id)) return nullptr;
    if (detail::g_state.load(std::memory_order_relaxed) == detail::kStateOn) {
      token = detail::enter(id);
    }
  }
  push_token(self, token);
  Py_INCREF(obj);
  return obj;
}

PyObject* region_exit(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<RegionObject*>(obj);
  if (self->depth == 0) {
    PyErr_SetString(PyExc_RuntimeError, "region.__exit__ without a matching __enter__");
    return nullptr;
  }
  const std::uint64_t token = pop_token(self);
  if (token != 0) {
    // The exception state is only worth passing when a sink got the begin
    // (as the C++ Region does).
    const bool unwinding =
        (token & detail::kTokenDelivered) != 0 && nargs > 0 && args[0] != Py_None;
    detail::leave(token, unwinding);
  }
  Py_RETURN_FALSE;  // never swallow the exception
}

// The regions compiled code opens (regiontrace/_compile.py): the graph calls
// enter and exit as two operators, so no object carries the token between
// them. Inductor keeps them in program order, so a per-thread stack pairs
// them as the C++ region stack does.
thread_local std::vector<std::uint64_t> t_compiled_tokens;

PyObject* compiled_enter(PyObject* /*module*/, PyObject* name) {
  if (!PyUnicode_Check(name)) {
    PyErr_SetString(PyExc_TypeError, "_compiled_enter(name): name must be str");
    return nullptr;
  }
  std::uint64_t token = 0;
  if (detail::g_state.load(std::memory_order_relaxed) != detail::kStateOff) {
    RegionId id = 0;
    if (!lookup_id(name, &id)) return nullptr;
    if (detail::g_state.load(std::memory_order_relaxed) == detail::kStateOn) {
      token = detail::enter(id);
    }
  }
  t_compiled_tokens.push_back(token);
  Py_RETURN_NONE;
}

PyObject* compiled_exit(PyObject* /*module*/, PyObject* /*unused*/) {
  // An exit without its enter: the compiled graph raised between the two on
  // an earlier call and left its entry; nothing is open to close here.
  if (t_compiled_tokens.empty()) Py_RETURN_NONE;
  const std::uint64_t token = t_compiled_tokens.back();
  t_compiled_tokens.pop_back();
  if (token != 0) detail::leave(token, false);
  Py_RETURN_NONE;
}

PyMethodDef compiled_functions[] = {
    {"_compiled_enter", compiled_enter, METH_O, "Opens a region for compiled code."},
    {"_compiled_exit", compiled_exit, METH_NOARGS,
     "Closes the region compiled code opened last on this thread."},
    {nullptr, nullptr, 0, nullptr}};

PyObject* region_call(PyObject* obj, PyObject* args, PyObject* kwargs) {
  if (g_decorate == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "regiontrace._decorate is not loaded");
    return nullptr;
  }
  if (PyTuple_GET_SIZE(args) != 1 || (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0)) {
    PyErr_SetString(PyExc_TypeError, "region(name)(fn): decorate exactly one callable");
    return nullptr;
  }
  return PyObject_CallFunctionObjArgs(g_decorate, obj, PyTuple_GET_ITEM(args, 0), nullptr);
}

PyObject* region_repr(PyObject* obj) {
  return PyUnicode_FromFormat("regiontrace.region(%R)", reinterpret_cast<RegionObject*>(obj)->name);
}

PyObject* region_get_name(PyObject* obj, void* /*unused*/) {
  PyObject* name = reinterpret_cast<RegionObject*>(obj)->name;
  Py_INCREF(name);
  return name;
}

PyMethodDef region_methods[] = {
    {"__enter__", region_enter, METH_NOARGS, "Opens the region."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(region_exit)),
     METH_FASTCALL, "Closes the region; never suppresses the exception."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef region_getset[] = {{"name", region_get_name, nullptr, "the region's name", nullptr},
                               {nullptr, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

PyTypeObject RegionType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "regiontrace.region";
  t.tp_basicsize = sizeof(RegionObject);
  t.tp_dealloc = region_dealloc;
  t.tp_repr = region_repr;
  t.tp_call = region_call;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc =
      "region(name): a regiontrace region.\n\n"
      "    with regiontrace.region(\"inference_denoising\"):\n"
      "        ...\n\n"
      "    @regiontrace.region(\"load\")\n"
      "    def load(path): ...\n\n"
      "With nothing configured, entering and leaving costs one atomic load.";
  t.tp_methods = region_methods;
  t.tp_getset = region_getset;
  t.tp_new = region_new;
  t.tp_vectorcall = region_vectorcall;  // `region(name)` skips the args tuple
  return t;
}();

bool add_region_type(PyObject* module, PyObject* error_type) {
  g_error_type = error_type;
  if (PyType_Ready(&RegionType) < 0) return false;
  if (PyModule_AddFunctions(module, compiled_functions) < 0) return false;
  Py_INCREF(&RegionType);
  return PyModule_AddObject(module, "region", reinterpret_cast<PyObject*>(&RegionType)) == 0;
}

void set_decorator(PyObject* fn) {
  Py_XINCREF(fn);
  Py_XSETREF(g_decorate, fn);
}

}  // namespace regiontrace::python
