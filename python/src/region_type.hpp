// The C-API half of the module: the `region` type (see region_type.cpp).
#pragma once

#include <Python.h>

namespace regiontrace::python {

// Adds `region` to the module; `error_type` is what start-up errors raise.
bool add_region_type(PyObject* module, PyObject* error_type);
// The Python function region(name)(fn) delegates to: decorate(region, fn).
void set_decorator(PyObject* fn);

}  // namespace regiontrace::python
