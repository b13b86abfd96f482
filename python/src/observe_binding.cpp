// regiontrace.observe(label, value) for Python: the module's only libtorch
// translation unit. The tensor behind a torch.Tensor is the at::Tensor that
// libtorch_python holds (THPVariable_Unpack), so the fused statistics run in
// C++ on the tensor's own storage, exactly as for a C++ observe().
//
// Nests are flattened with the C++ forward()'s labels (core/torch's
// tensor_flatten.hpp): sequences give `label[i]`, dicts with str keys
// `label.key`, int keys `label[k]`, other keys `label[position]`; None,
// numbers, strings and other objects hold no tensor and are skipped.
#include <torch/csrc/autograd/python_variable.h>

#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "regiontrace/torch.hpp"

namespace py = pybind11;

namespace regiontrace::python {
namespace {

void dispatch(const std::string& label, const at::Tensor& tensor) {
  if (!tensor.defined()) return;
  // Statistics may take a while on a large tensor; other Python threads
  // (data loading) go on meanwhile. The caller's reference keeps it alive.
  py::gil_scoped_release release;
  detail::dispatch_tensor(label, tensor, TensorOrigin::kObserved);
}

std::size_t push_index(std::string& label, Py_ssize_t i) {
  return detail::push_index(label, static_cast<std::size_t>(i));
}

// How deep observe() follows nested lists, tuples and dicts. Deeper (or a
// container that holds itself) is refused with ValueError: followed, it
// overflowed the stack and took the interpreter, and every output of the
// run not yet written, with it.
constexpr std::size_t kMaxNesting = 64;

// The containers being flattened, outermost first.
using Path = std::vector<PyObject*>;

void flatten(std::string& label, PyObject* value, Path& path);

void enter_container(const std::string& label, PyObject* value, Path& path) {
  if (std::find(path.begin(), path.end(), value) != path.end()) {
    throw py::value_error("regiontrace.observe: `" + label +
                          "` contains itself (a list, tuple or dict inside itself); "
                          "observe the tensors, not the cycle");
  }
  if (path.size() == kMaxNesting) {
    throw py::value_error("regiontrace.observe: `" + label + "` nests deeper than " +
                          std::to_string(kMaxNesting) + " lists, tuples or dicts");
  }
  path.push_back(value);
}

void flatten(std::string& label, PyObject* value, Path& path) {
  if (THPVariable_Check(value)) {
    dispatch(label, THPVariable_Unpack(value));
    return;
  }
  const bool sequence = PyTuple_Check(value) || PyList_Check(value);
  if (!sequence && !PyDict_Check(value)) return;  // holds no tensor the C++ side would reach
  enter_container(label, value, path);
  if (sequence) {
    // A list may change while the GIL is released: index through the API.
    const bool tuple = PyTuple_Check(value);
    for (Py_ssize_t i = 0; i < (tuple ? PyTuple_GET_SIZE(value) : PyList_GET_SIZE(value)); ++i) {
      py::object item = py::reinterpret_borrow<py::object>(tuple ? PyTuple_GET_ITEM(value, i)
                                                                 : PyList_GET_ITEM(value, i));
      const std::size_t old = push_index(label, i);
      flatten(label, item.ptr(), path);
      label.resize(old);
    }
  } else {
    // A snapshot of the items: the dict may change while the GIL is released.
    py::list items = py::reinterpret_steal<py::list>(PyDict_Items(value));
    if (!items) throw py::error_already_set();
    Py_ssize_t position = 0;
    for (py::handle entry : items) {
      PyObject* key = PyTuple_GET_ITEM(entry.ptr(), 0);
      const std::size_t old = label.size();
      if (PyUnicode_Check(key)) {
        Py_ssize_t size = 0;
        const char* utf8 = PyUnicode_AsUTF8AndSize(key, &size);
        if (utf8 == nullptr) throw py::error_already_set();
        label += '.';
        label.append(utf8, static_cast<std::size_t>(size));
      } else if (PyLong_Check(key) && !PyBool_Check(key)) {
        const long long k = PyLong_AsLongLong(key);
        if (k == -1 && PyErr_Occurred()) throw py::error_already_set();
        label += '[';
        label += std::to_string(k);
        label += ']';
      } else {
        push_index(label, position);
      }
      ++position;
      flatten(label, PyTuple_GET_ITEM(entry.ptr(), 1), path);
      label.resize(old);
    }
  }
  path.pop_back();
}

void observe(std::string_view label, py::handle value) {
  // Nobody listens: one relaxed load, as observe() in C++.
  if (!detail::g_tensors_wanted.load(std::memory_order_relaxed)) return;
  if (!detail::tensor_wanted_here(TensorOrigin::kObserved)) return;
  std::string buffer(label);
  Path path;
  flatten(buffer, value.ptr(), path);
}

}  // namespace

void bind_observe(py::module_& m) {
  m.def("observe", &observe, py::arg("label"), py::arg("value"),
        "Hands a tensor, or a nest of them, to every sink that wants tensors in the "
        "region open on this thread.");
  m.def(
      "tensors_wanted",
      [] {
        return detail::g_tensors_wanted.load(std::memory_order_relaxed) &&
               detail::tensor_wanted_here(TensorOrigin::kObserved);
      },
      "True when a sink wants tensors observed in the region open on this thread.");
}

}  // namespace regiontrace::python
