// regiontrace._regiontrace: the Python face of libregiontrace. Everything
// here calls the same core (and so the same dispatcher, configuration and
// sinks) that C++ code in the process uses: this module links
// libregiontrace.so, it does not embed a copy.
//
// Only `region` is on a hot path; it is written against the C API
// (region_type.cpp). The rest is pybind11, whose call overhead does not
// matter for calls made once per step or once per run.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "region_type.hpp"
#include "regiontrace/inspect.hpp"
#include "regiontrace/regiontrace.hpp"
#include "regiontrace/thread_step.hpp"

namespace py = pybind11;

namespace regiontrace::python {
#ifdef REGIONTRACE_PYTHON_WITH_TORCH
void bind_observe(py::module_& m);  // observe_binding.cpp: the only libtorch TU
#endif
}  // namespace regiontrace::python

namespace {

constexpr std::int64_t kNoStep = INT64_MIN;

void init(const std::vector<std::string>& profiles,
          const std::map<std::string, std::string>& values, bool read_environment) {
  regiontrace::Options options;
  options.profiles = profiles;
  options.values = values;
  options.read_environment = read_environment;
  // Starting sinks loads plugins and starts writer threads; none of it calls
  // back into Python.
  py::gil_scoped_release release;
  regiontrace::init(options);
}

std::optional<std::int64_t> optional_step(std::int64_t s) {
  if (s == kNoStep) return std::nullopt;
  return s;
}

}  // namespace

PYBIND11_MODULE(_regiontrace, m) {
  m.doc() = "Bindings of libregiontrace; use the `regiontrace` package, not this module.";
  static py::exception<regiontrace::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const regiontrace::Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  if (!regiontrace::python::add_region_type(m.ptr(), error.ptr())) throw py::error_already_set();

  m.def("init", &init, py::arg("profiles"), py::arg("values"), py::arg("read_environment"));
  m.def(
      "shutdown",
      [] {
        // Flushing joins the sinks' writer threads, which never need the GIL.
        py::gil_scoped_release release;
        regiontrace::shutdown();
      },
      "Flushes and closes every sink. Idempotent; also runs at exit.");
  m.def(
      "flush",
      [] {
        py::gil_scoped_release release;  // waits on the sinks' writer threads
        regiontrace::flush();
      },
      "Waits until what every running sink accepted so far is written; they go on.");
  m.def("running_sinks", &regiontrace::inspect::running_sinks,
        "Names of the sinks running now, in start order.");
  m.def(
      "_catalog_regions",
      [] {
        // FastVideo's registry: the declared `profiler_region_*` names (the
        // built-in catalog's, and any catalog the configuration adds).
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& r : regiontrace::inspect::list_regions({}).regions) {
          if (r.name.rfind("profiler_region_", 0) == 0) out.emplace_back(r.name, r.description);
        }
        return out;
      },
      "(name, description) of the declared profiler_region_* regions.");
  m.def("enabled", &regiontrace::enabled, "True while at least one sink runs.");
  m.def(
      "set_step", [](std::int64_t s) { regiontrace::set_step(s); }, py::arg("step"));
  m.def(
      "current_step", [] { return optional_step(regiontrace::step()); },
      "The step set_step() set last, or None.");
  m.def(
      "set_thread_step",
      [](std::optional<std::int64_t> s) { regiontrace::set_thread_step(s ? *s : kNoStep); },
      py::arg("step"),
      "The step this thread's observed tensors carry instead of set_step()'s; None: "
      "set_step()'s again.");
  m.def(
      "thread_step", [] { return optional_step(regiontrace::thread_step()); },
      "The step set_thread_step() set on this thread, or None.");
  m.def(
      "mark", [](const std::string& name) { regiontrace::mark(name); }, py::arg("name"));
  m.def(
      "snapshot", [](const std::string& reason) { regiontrace::snapshot(reason); },
      py::arg("reason"));
  m.def(
      "_set_decorator",
      [](py::object fn) { regiontrace::python::set_decorator(fn.is_none() ? nullptr : fn.ptr()); },
      py::arg("fn"));
  m.def(
      "_clear_decorator", [] { regiontrace::python::set_decorator(nullptr); },
      "Drops the reference before the interpreter tears modules down.");
#ifdef REGIONTRACE_PYTHON_WITH_TORCH
  regiontrace::python::bind_observe(m);
  m.attr("HAVE_TORCH") = true;
#else
  m.attr("HAVE_TORCH") = false;
#endif
}
