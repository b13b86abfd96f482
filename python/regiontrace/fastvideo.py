"""FastVideo's profiler and activation-trace modules, on regiontrace.

A FastVideo module becomes a regiontrace user by changing its imports:

    from fastvideo.profiler import ...                 # before
    from fastvideo.hooks.activation_trace import ...
    from regiontrace.fastvideo import *                # after

The names, signatures and FASTVIDEO_* variables are FastVideo's
(docs/parity.md lists what still differs); the work is done by regiontrace's
sinks, the same ones C++ code drives, so a C++ port and its Python reference
write the same traces and records.
"""

from ._fastvideo_activations import (ActivationTraceManager, ModuleHookManager,
                                     attach_activation_trace, current_step_idx,
                                     detach_activation_trace, trace_step)
from ._fastvideo_profiler import (ProfilerRegion, TorchProfilerConfig, TorchProfilerController,
                                  get_global_controller, get_or_create_profiler,
                                  list_profiler_regions, nvtx_range, profile_region,
                                  profiler_region, register_profiler_region,
                                  resolve_profiler_region, set_global_controller)

__all__ = [
    # fastvideo.profiler
    "ProfilerRegion", "TorchProfilerConfig", "TorchProfilerController", "get_global_controller",
    "get_or_create_profiler", "list_profiler_regions", "nvtx_range", "profile_region",
    "profiler_region", "register_profiler_region", "resolve_profiler_region",
    "set_global_controller",
    # fastvideo.hooks.activation_trace (and hooks.ModuleHookManager)
    "ActivationTraceManager", "ModuleHookManager", "attach_activation_trace", "current_step_idx",
    "detach_activation_trace", "trace_step",
]
