// Kineto's one-time initialisation, on the thread that starts the sink.
//
// libtorch registers its Kineto client on the thread that loads libtorch,
// and Kineto, initialised later on another thread, prints "ERROR: External
// init callback must run in same thread as registerClient" (and skips the
// client's init, which libtorch leaves empty). The sink runs the profiler on
// a thread of its own (profiler_session.hpp), so without this every process
// that ran the sink printed that ERROR line, which a bare torch.profiler run
// on the application's thread does not. Here Kineto is initialised first, as
// libtorch's prepareProfiler would, but from the thread that starts the sink:
// the application's, where libtorch was loaded.
#pragma once

namespace regiontrace::torch_profiler {

// Does nothing once Kineto is initialised (by this, by libtorch, by an
// on-demand daemon). Never throws.
void init_kineto_on_this_thread() noexcept;

}  // namespace regiontrace::torch_profiler
