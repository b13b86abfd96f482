"""FastVideo's activation-trace entry points, on regiontrace's sinks.

FastVideo code calls, unchanged:

    mgr = attach_activation_trace(model)     # None unless FASTVIDEO_TRACE_ACTIVATIONS
    for i, t in enumerate(timesteps):
        with trace_step(i):
            latents = model(latents, t)
    detach_activation_trace(mgr)

The seed's variables keep their meaning: FASTVIDEO_TRACE_ACTIVATIONS turns the
`activation_trace` sink on, FASTVIDEO_TRACE_LAYERS picks the modules (regex
searched in the qualified name), FASTVIDEO_TRACE_STATS the statistics,
FASTVIDEO_TRACE_OUTPUT the JSONL file (`<pid>`, `<rank>` replaced),
FASTVIDEO_TRACE_STEPS the steps kept. The core reads all five (the same
mapping C++ programs get); this module only hooks the modules.
"""

import contextlib
import os

from . import _regiontrace
from .modules import trace_modules


def _tracing_requested():
    value = os.environ.get("FASTVIDEO_TRACE_ACTIVATIONS", "")
    return value != "" and value != "0"


class ActivationTraceManager:
    """What attach_activation_trace() returns: the traced model's hooks."""

    def __init__(self, handle):
        self.handle = handle

    @property
    def layers(self):
        return self.handle.names

    def remove(self):
        self.handle.remove()

    def __repr__(self):
        return f"<ActivationTraceManager: {len(self.handle)} modules>"


def attach_activation_trace(model, prefix=""):
    """Traces the modules FASTVIDEO_TRACE_LAYERS names (all when unset) and
    returns a manager for detach_activation_trace(); returns None, and touches
    nothing, when FASTVIDEO_TRACE_ACTIVATIONS is unset or 0.

    Starts regiontrace if it has not started, so that a configuration error
    (an unwritable FASTVIDEO_TRACE_OUTPUT) raises regiontrace.Error here rather
    than at the first traced call."""
    if not _tracing_requested():
        return None
    _regiontrace.init([], {}, True)  # a no-op when already running
    layers = os.environ.get("FASTVIDEO_TRACE_LAYERS") or None
    return ActivationTraceManager(trace_modules(model, layers=layers, prefix=prefix))


def detach_activation_trace(mgr):
    """Removes what attach_activation_trace() added; None is accepted. The
    records written so far are complete JSON lines already; the file's summary
    line comes when regiontrace shuts down (regiontrace.shutdown() or exit)."""
    if mgr is not None:
        mgr.remove()


@contextlib.contextmanager
def trace_step(step):
    """The body runs as denoising step `step`: every record it writes carries
    it, and FASTVIDEO_TRACE_STEPS decides whether it is kept. The step stays
    set after the block, as regiontrace.set_step() leaves it."""
    _regiontrace.set_step(int(step))
    yield step
