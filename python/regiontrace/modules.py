"""trace_modules(): the Python twin of the C++ `regiontrace::forward()`.

Each traced module's call runs inside a region named as named_modules()
spells it (`blocks.3`), and its output is observed as `out`, nests flattened
with the C++ labels (`out[0]`, `out.key`), so a Python reference and its C++
port write records that align one to one.

The module's `forward` is wrapped on the instance rather than hooked with
register_forward_pre_hook / register_forward_hook: a forward that raises never
runs the post-hook, which would leave the region open on the thread's stack.
The wrapper closes it on every path. Hooks other code registered run outside
the region, as they run outside `forward()` in C++.
"""

import re

from . import _regiontrace


class TraceHandle:
    """What trace_modules() returns: the traced names, and remove() to undo it.
    Also a context manager that removes the tracing on exit."""

    def __init__(self):
        self._entries = []  # (module, wrapper, had_instance_forward, previous)

    @property
    def names(self):
        """Region names of the traced modules, in named_modules() order."""
        return [entry[1] for entry in self._entries]

    def modules(self):
        """(module, region name) of every traced module."""
        return [(entry[0], entry[1]) for entry in self._entries]

    def remove(self):
        """Restores every traced module's forward; idempotent."""
        while self._entries:
            module, _, wrapper, had_own, previous = self._entries.pop()
            if module.__dict__.get("forward") is not wrapper:
                continue  # someone replaced it after us: leave theirs alone
            if had_own:
                module.forward = previous
            else:
                del module.forward

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def __len__(self):
        return len(self._entries)

    def __repr__(self):
        return f"<regiontrace.TraceHandle: {len(self._entries)} modules>"


def _region_name(name, prefix):
    # The root's qualified name is empty; the C++ name_modules() calls it
    # `prefix`, or `model` without one.
    return name if name else (prefix or "model")


def _wrap(module, region_name):
    forward = module.forward  # bound: the class's, or an instance attribute
    region = _regiontrace.region
    observe = getattr(_regiontrace, "observe", None)

    def traced_forward(*args, **kwargs):
        with region(region_name):
            out = forward(*args, **kwargs)
            if observe is not None:
                observe("out", out)
        return out

    traced_forward.__wrapped__ = forward
    traced_forward.__name__ = getattr(forward, "__name__", "forward")
    traced_forward.__doc__ = getattr(forward, "__doc__", None)
    return traced_forward


def trace_modules(model, layers=None, prefix=""):
    """Traces `model` and its submodules.

    layers: a regex searched (re.search) in each module's qualified name;
        None or "" traces every module, the root included.
    prefix: as named_modules(prefix=...): names become `prefix.blocks.3`; the
        root is named `prefix`, or `model` (as the C++ name_modules()).

    Returns a TraceHandle; handle.remove() (or leaving `with handle:`) undoes
    it. Tracing twice wraps twice: remove the first handle first.
    """
    return _trace(model, layers, prefix, with_root=True)


def trace_submodules(model, layers, prefix=""):
    """trace_modules() as FastVideo's activation trace picks modules: the
    root is never traced, and an empty `layers` means every submodule."""
    return _trace(model, layers, prefix, with_root=False)


def _uncompiled(model):
    # torch.compile(model) wraps it in an OptimizedModule whose modules are
    # named `_orig_mod.<name>`; tracing the module it wraps keeps the eager
    # names (records of eager and compiled runs align), and the compiled
    # wrapper calls the wrapped forwards all the same.
    inner = getattr(model, "_orig_mod", None)
    if inner is not None and type(model).__name__ == "OptimizedModule":
        return inner
    return model


def _trace(model, layers, prefix, with_root):
    model = _uncompiled(model)
    pattern = re.compile(layers) if layers else None
    handle = TraceHandle()
    for name, module in model.named_modules(prefix=prefix):
        if not with_root and module is model:
            continue
        region_name = _region_name(name, prefix)
        if pattern is not None and not pattern.search(region_name):
            continue
        had_own = "forward" in module.__dict__
        previous = module.__dict__.get("forward")
        wrapper = _wrap(module, region_name)
        module.forward = wrapper
        handle._entries.append((module, region_name, wrapper, had_own, previous))
    return handle
