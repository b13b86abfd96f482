"""FastVideo's activation-trace module (fastvideo/hooks/activation_trace.py)
and the part of its hook manager its tests use, on regiontrace.

FastVideo code calls, unchanged:

    mgr = attach_activation_trace(model)     # None unless FASTVIDEO_TRACE_ACTIVATIONS
    for i, t in enumerate(timesteps):
        with trace_step(i):
            latents = model(latents, t)
    detach_activation_trace(mgr)             # every record is in the file now

FASTVIDEO_TRACE_ACTIVATIONS turns the `activation_trace` sink on (set and not
"0", FastVideo's rule), FASTVIDEO_TRACE_LAYERS picks the submodules (regex
searched in the qualified name; empty: every named submodule, not the root),
FASTVIDEO_TRACE_STATS the statistics (unknown ones are warned about and
dropped), FASTVIDEO_TRACE_OUTPUT the JSONL file (`<pid>`, `<rank>`, `~`),
FASTVIDEO_TRACE_STEPS the steps kept. Each attach reads them again.
"""

import contextlib
import logging
import os

from . import _regiontrace
from .modules import trace_submodules

logger = logging.getLogger("regiontrace.fastvideo")

# What the activation_trace sink computes, by FastVideo's names.
_STATS = ("abs_mean", "dtype", "max", "mean", "min", "shape", "std", "sum")
_DEFAULT_STATS = "abs_mean,sum"


def _tracing_requested():
    return os.environ.get("FASTVIDEO_TRACE_ACTIVATIONS", "0") != "0"


def _stats(warn=True):
    """FASTVIDEO_TRACE_STATS as FastVideo reads it: unknown names warned
    about (when attaching, as FastVideo does) and dropped."""
    spec = os.environ.get("FASTVIDEO_TRACE_STATS", _DEFAULT_STATS)
    kept = []
    for name in (s.strip() for s in spec.split(",")):
        if not name:
            continue
        if name not in _STATS:
            if warn:
                logger.warning("FASTVIDEO_TRACE_STATS contains unknown stat %r; valid: %s", name,
                               sorted(_STATS))
            continue
        kept.append(name)
    return kept


def _settings(stats):
    # The core reads the other variables itself; the statistics are the
    # ones left after FastVideo's filtering, which the core would refuse.
    return {"sinks.activation_trace.stats": ",".join(stats)}


_attached_before = False


def _start_activation_sink(stats):
    """Starts regiontrace with the activation settings of the environment
    now. A sink running for an earlier attach is restarted with them when it
    runs alone; beside other sinks (a torch profile being recorded) what
    runs is kept, and a warning says so."""
    global _attached_before
    running = _regiontrace.running_sinks()
    if running == ["activation_trace"]:
        _regiontrace.shutdown()
        running = []
    if "activation_trace" in running:
        # Started with the profiler from the same environment (FastVideo's
        # order: profiler first, then the attach): nothing to start.
        _attached_before = True
        return
    _regiontrace.init([], _settings(stats), True)  # keeps sinks already running
    if "activation_trace" not in _regiontrace.running_sinks():
        logger.warning("regiontrace already runs %s without the activation_trace sink: nothing "
                       "is traced until regiontrace.shutdown() and a new attach",
                       ", ".join(running))
    elif running and _attached_before:
        logger.warning("regiontrace runs %s: the activation settings read when it started stay "
                       "in force until regiontrace.shutdown()", ", ".join(running))
    _attached_before = True


class ModuleHookManager:
    """FastVideo's hook manager as far as its tests look: get_from(module)
    is the manager while a trace is attached to the module, None after."""

    module_hook_attribute = "_hook_manager"

    def __init__(self, module):
        self.module = module
        self.forward_hooks = {}

    @classmethod
    def get_from(cls, module):
        return module.__dict__.get(cls.module_hook_attribute)

    @classmethod
    def get_from_or_default(cls, module):
        manager = cls.get_from(module)
        if manager is None:
            manager = cls(module)
            object.__setattr__(module, cls.module_hook_attribute, manager)
        return manager

    @classmethod
    def remove_from_manager(cls, module):
        module.__dict__.pop(cls.module_hook_attribute, None)

    def get_forward_hook(self, name):
        return self.forward_hooks.get(name)


_HOOK_NAME = "ActivationStatHook"


class ActivationTraceManager:
    """What attach_activation_trace() returns: the traced modules' managers
    and the regiontrace handle that wraps their forward."""

    def __init__(self, handle, managers):
        self.handle = handle
        self.managers = managers

    @property
    def layers(self):
        return self.handle.names

    def remove_from_manager(self):
        """Unwraps every module, then waits until every record is written."""
        self.handle.remove()
        for manager in self.managers:
            manager.forward_hooks.pop(_HOOK_NAME, None)
            if not manager.forward_hooks:
                ModuleHookManager.remove_from_manager(manager.module)
        self.managers = []
        _regiontrace.flush()

    remove = remove_from_manager

    def __repr__(self):
        return f"<ActivationTraceManager: {len(self.handle)} modules>"


def attach_activation_trace(model, prefix=""):
    """Traces the submodules FASTVIDEO_TRACE_LAYERS names (every named one
    when it is empty) and returns a manager for detach_activation_trace();
    None, touching nothing, when tracing is off, `model` is None or no
    statistic in FASTVIDEO_TRACE_STATS is valid.

    Raises regiontrace.Error here, not at the first traced call, when the
    output cannot be written."""
    if model is None or not _tracing_requested():
        return None
    stats = _stats()
    if not stats:
        logger.warning("FASTVIDEO_TRACE_STATS yielded no valid stats; trace disabled.")
        return None
    _start_activation_sink(stats)
    # FastVideo traces named submodules only: the root's name is empty.
    handle = trace_submodules(model, os.environ.get("FASTVIDEO_TRACE_LAYERS", ""), prefix)
    managers = []
    for module, name in handle.modules():
        manager = ModuleHookManager.get_from_or_default(module)
        manager.forward_hooks[_HOOK_NAME] = name
        managers.append(manager)
    return ActivationTraceManager(handle, managers)


def detach_activation_trace(mgr):
    """Removes what attach_activation_trace() added (None is accepted); when
    it returns, every record so far is in the file."""
    if mgr is not None:
        mgr.remove_from_manager()


def current_step_idx():
    """The step trace_step() set on this thread, or None."""
    return _regiontrace.thread_step()


@contextlib.contextmanager
def trace_step(step_idx):
    """The body runs as step `step_idx` on this thread, as FastVideo's
    thread-local step: the records this thread writes carry it and
    FASTVIDEO_TRACE_STEPS decides whether they are kept; other threads keep
    their own. The thread's step before the block is restored after it
    (none, if none was set). Regions and the profiler's steps do not see it
    (regiontrace.set_step() is the process's step)."""
    previous = _regiontrace.thread_step()
    _regiontrace.set_thread_step(int(step_idx))
    try:
        yield step_idx
    finally:
        _regiontrace.set_thread_step(previous)
