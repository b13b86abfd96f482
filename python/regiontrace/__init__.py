"""regiontrace for Python: the same regions, sinks and files as the C++ library.

    import regiontrace

    with regiontrace.region("inference_denoising"):    # a region
        ...

    @regiontrace.region("vae_decode")                   # a region per call
    def decode(latents): ...

    regiontrace.set_step(i)                             # or regiontrace.step()
    regiontrace.observe("latents", latents)             # tensors, or nests of them
    handle = regiontrace.trace_modules(model, layers=r"^blocks\\.\\d+$")
    ...
    handle.remove()

What happens at those marks is chosen per run, exactly as for C++ programs:
REGIONTRACE_CONFIG=profile.yaml, REGIONTRACE_SINKS=activation_trace, the
seed's FASTVIDEO_* variables, or regiontrace.init(...). With nothing
configured a region costs about what `with contextlib.nullcontext():` costs.

This package binds the process's libregiontrace: C++ code loaded into the same
process (a torch extension instrumented with RT_REGION / forward()) shares the
dispatcher, the configuration, the region stack of each thread and the sinks.

Ctrl-C: the sinks are flushed and closed, then Python raises KeyboardInterrupt
as it would without regiontrace. A program that catches it and goes on runs
without sinks from then on; REGIONTRACE_HANDLE_SIGNALS=false (or
init(handle_signals=False)) leaves SIGINT and SIGTERM alone, and the sinks are
then closed at exit.
"""

import atexit as _atexit
import os as _os
import sys as _sys

from . import _installation

# Before the extension module loads: a torch other than the one regiontrace
# was built against is said as such, not as an undefined symbol.
_installation.check_torch()
try:
    from . import _regiontrace
except ImportError as _error:
    raise _installation.explain_load_failure(_error) from _error
from ._regiontrace import Error, region, enabled, mark, snapshot, current_step
from ._regiontrace import set_thread_step, thread_step
from ._config import init_values as _init_values
from ._decorate import decorate as _decorate

__all__ = [
    "Error", "region", "init", "shutdown", "flush", "enabled", "set_step", "step", "current_step",
    "set_thread_step", "thread_step",
    "mark", "snapshot", "observe", "tensors_wanted", "trace_modules", "TraceHandle",
    "attach_activation_trace", "detach_activation_trace", "trace_step",
]

_regiontrace._set_decorator(_decorate)

# As torch.utils.cmake_prefix_path: for CMAKE_PREFIX_PATH, so that a C++
# program or a sink finds this installation with find_package(RegionTrace).
_cmake_prefix_path = _installation.cmake_prefix_path(_os.path.dirname(_os.path.abspath(__file__)))
if _cmake_prefix_path is not None:
    cmake_prefix_path = _cmake_prefix_path


def __getattr__(name):
    if name == "cmake_prefix_path":
        raise AttributeError("regiontrace.cmake_prefix_path: this regiontrace runs from a build "
                             f"tree ({_os.path.dirname(__file__)}), which holds no CMake package; "
                             "install it (pip install --no-build-isolation ., or cmake --install)")
    raise AttributeError(f"module 'regiontrace' has no attribute '{name}'")


def init(profiles=None, *, values=None, read_environment=True, **keys):
    """Reads the configuration and starts the sinks (optional: the first
    region does it). Later layers win: REGIONTRACE_CONFIG's profiles, then
    `profiles`, then the environment, then `values` and keyword arguments.

    Keys are the configuration's dotted keys (docs/configuration.md). As
    keyword arguments, `__` stands for a dot; `sinks=[...]` turns those sinks
    on:

        regiontrace.init(sinks=["activation_trace"], output_dir="/tmp/ref",
                         sinks__activation_trace__stats="abs_mean,std")
        regiontrace.init(profiles=["config/profiles/parity.yaml"])

    Raises regiontrace.Error with the file, key or path at fault. Calling it
    while sinks run keeps them (one profiler per process); after shutdown()
    it starts over.
    """
    if isinstance(profiles, str):
        profiles = [profiles]
    _regiontrace.init([str(p) for p in (profiles or [])], _init_values(values, keys),
                      bool(read_environment))


def shutdown():
    """Flushes and closes every sink; idempotent. Runs at interpreter exit too."""
    _regiontrace.shutdown()


def flush():
    """Waits until what every running sink accepted so far is written (the
    JSONL records observed until now are in their file); the sinks go on."""
    _regiontrace.flush()


def set_step(step):
    """The step (denoising step, training step) that every later event carries."""
    if _compiling():  # Dynamo traces this: the step is set when the graph runs
        return _compile.set_step(step)
    _regiontrace.set_step(int(step))


def step():
    """Advances the step by one, as torch.profiler's `prof.step()` does, and
    returns the new step: 0 when no step was set yet (None inside compiled
    code, where the step is known only when the graph runs)."""
    if _compiling():
        return _compile.advance_step()
    current = _regiontrace.current_step()
    new = 0 if current is None else current + 1
    _regiontrace.set_step(new)
    return new


if _regiontrace.HAVE_TORCH:
    from ._regiontrace import observe, tensors_wanted
    from . import _compile
    from torch.compiler import is_compiling as _compiling
    _compile.install()  # regions, marks, steps and observe() inside torch.compile
else:  # built without libtorch: the calls exist and say why they cannot work
    def observe(label, value):
        raise Error("regiontrace was built without libtorch: observe() is not available")

    def tensors_wanted():
        return False

    def _compiling():
        return False

from .modules import trace_modules, TraceHandle  # noqa: E402  (needs observe)
from .fastvideo import attach_activation_trace, detach_activation_trace, trace_step  # noqa: E402


def _at_exit():
    # Sinks are flushed while the interpreter still runs (a profiler may hold
    # Python stacks); the C++ exit handler would come after finalisation.
    try:
        _regiontrace.shutdown()
    finally:
        _regiontrace._clear_decorator()


_atexit.register(_at_exit)


# multiprocessing ends a forked or forkserver worker with os._exit: no
# atexit, no C++ exit handler, so a worker that recorded would lose what its
# sinks still buffer. It does run its finalizers first, from a registry it
# empties as each worker starts and then runs its after-fork hooks; the
# entry is made from one of those. Lowest priority: after the worker's own
# children are joined. Looked up, not imported: a process without
# multiprocessing has no workers.
def _finalize_in_worker(_=None):
    _sys.modules["multiprocessing.util"].Finalize(None, _regiontrace.shutdown,
                                                  exitpriority=-(2**31))


def _finalize_in_future_workers():
    util = _sys.modules.get("multiprocessing.util")
    if util is not None:
        util.register_after_fork(_finalize_in_worker, _finalize_in_worker)


_os.register_at_fork(after_in_child=_finalize_in_future_workers)  # multiprocessing came later
_finalize_in_future_workers()  # a forkserver or spawn worker unpickling its target
if "multiprocessing.util" in _sys.modules and _sys.modules["multiprocessing"].parent_process():
    _finalize_in_worker()  # imported by a worker already running
