"""Regions, marks, snapshots, steps and observe() inside torch.compile'd code.

Dynamo cannot trace into the C `region` type, so in a compiled function a
region used to break the graph in two (or fail under fullgraph=True). Here
each of those calls has a polyfill Dynamo traces instead (Dynamo's
substitute_in_graph); the eager path is untouched and keeps
its cost. A polyfill puts one operator of the `regiontrace` library into the
graph, which calls the same dispatcher as eager code when the compiled
program runs: on every call, not once while tracing.

Those operators return nothing, so the compiler would order them by nothing.
Each is a *boundary*: it takes as inputs the tensors computed since the
previous boundary that nothing used yet. Inductor's reorder_for_locality
moves a node only later (right before its first consumer), and a boundary
consumes every value computed before it that is not consumed before it, so
work written before a boundary stays before it, and work written after it
never moves ahead of it. (Before this, inductor moved a region's enter and
exit next to each other, ahead of the work they enclosed.) What reordering
cannot undo, fusion can: inductor may fuse a pointwise op across a boundary
into its neighbour's kernel; that kernel then runs on the boundary's side
that its data dictates (docs/profiling.md, "torch.compile").

torch._dynamo costs over a second to import, so none of this is loaded
until something imports it (torch.compile does); see install().
"""

import importlib.abc
import importlib.util
import logging
import sys

import torch

from . import _regiontrace

# The boundary operators, by what they do at run time.
_BOUNDARIES = ("region_enter", "region_exit", "mark", "snapshot", "set_step", "advance_step")


# name: (schema, run-time kernel). Defined with torch.library.Library
# rather than custom_op: the call costs 1.8 us against custom_op's 3.8
# (python/bench/compiled_region_overhead.py).
_OPS = {
    "region_enter": ("region_enter(str name, Tensor[] before) -> ()",
                     lambda name, before: _regiontrace._compiled_enter(name)),
    "region_exit": ("region_exit(str name, Tensor[] before) -> ()",
                    lambda name, before: _regiontrace._compiled_exit()),
    "mark": ("mark(str name, Tensor[] before) -> ()",
             lambda name, before: _regiontrace.mark(name)),
    "snapshot": ("snapshot(str reason, Tensor[] before) -> ()",
                 lambda reason, before: _regiontrace.snapshot(reason)),
    "set_step": ("set_step(SymInt step, Tensor[] before) -> ()",
                 lambda step, before: _regiontrace.set_step(int(step))),
    "advance_step": ("advance_step(Tensor[] before) -> ()", lambda before: _advance_step()),
    "observe": ("observe(str label, Tensor tensor) -> ()",
                lambda label, tensor: _regiontrace.observe(label, tensor)),
}


def _advance_step():
    current = _regiontrace.current_step()
    _regiontrace.set_step(0 if current is None else current + 1)


def _no_value(*args):
    return None


_library = None


def _defined_elsewhere():
    # Another copy of this package in the process (a build tree and an
    # installed one) defined them first: the dispatcher keeps one namespace.
    try:
        torch.ops.regiontrace.region_enter.default
        return True
    except (AttributeError, RuntimeError):
        return False


def _define_ops():
    global _library
    if _defined_elsewhere():
        return
    _library = torch.library.Library("regiontrace", "DEF")
    for name, (schema, kernel) in _OPS.items():
        _library.define(schema)
        _library.impl(name, kernel, "CompositeExplicitAutograd")
        torch.library.register_fake("regiontrace::" + name, _no_value, lib=_library)
        # Nothing consumes what they return: without this, dead-code
        # elimination (Dynamo's, AOTAutograd's, inductor's) drops them.
        torch.fx.node.has_side_effect(getattr(torch.ops.regiontrace, name).default)


_defined = False


def define_ops():
    """Registers the `regiontrace` operators (cheap: no Dynamo import). A
    compiled program loaded from inductor's cache finds them this way."""
    global _defined
    if not _defined:
        _define_ops()
        _defined = True


# ---- while Dynamo traces -------------------------------------------------


def _current_graph(ctx):
    # The graph being built is the innermost tracer's: a region inside a
    # higher-order op's body (torch.cond, checkpoint) is not the root graph.
    tx = getattr(ctx, "_ComptimeContext__tx", None)
    tracer = getattr(getattr(tx, "output", None), "current_tracer", None)
    return tracer.graph if tracer is not None else ctx.graph()


def _is_tensor_node(node):
    return (node.op in ("call_function", "call_method", "call_module")
            and isinstance(node.meta.get("example_value"), torch.Tensor))


def _is_boundary(node):
    target = node.target
    return (node.op == "call_function" and getattr(target, "namespace", None) == "regiontrace"
            and target._opname in _BOUNDARIES)


def _pending(graph):
    """Tensors computed since the graph's last boundary that nothing uses yet."""
    found = []
    node = graph._root.prev
    while node.op != "root" and not _is_boundary(node):
        if _is_tensor_node(node) and not node.users:
            found.append(node)
        node = node.prev
    found.reverse()
    return found


def _add_boundary(ctx, opname, *args):
    graph = _current_graph(ctx)
    op = getattr(torch.ops.regiontrace, opname).default
    node = graph.call_function(op, (*args, _pending(graph)))
    node.meta["example_value"] = None


def _constant(ctx, local):
    return ctx.get_local(local).as_python_constant()


# comptime functions may not close over anything: they read their
# caller's locals.
def _at_region_enter(ctx):
    _add_boundary(ctx, "region_enter", _constant(ctx, "name"))


def _at_region_exit(ctx):
    _add_boundary(ctx, "region_exit", _constant(ctx, "name"))


def _at_mark(ctx):
    _add_boundary(ctx, "mark", _constant(ctx, "name"))


def _at_snapshot(ctx):
    _add_boundary(ctx, "snapshot", _constant(ctx, "reason"))


def _at_advance_step(ctx):
    _add_boundary(ctx, "advance_step")


def _at_set_step(ctx):
    step = ctx.get_local("step")
    if step.is_python_constant():
        value = step.as_python_constant()
    else:  # a SymInt: the step follows the program's value at run time
        value = step.as_proxy()
        value = value.node if hasattr(value, "node") else value
    _add_boundary(ctx, "set_step", value)


class CompiledRegion:
    """What `regiontrace.region(name)` is while Dynamo traces."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        from torch._dynamo.comptime import comptime
        name = self.name  # noqa: F841  (read by _at_region_enter)
        comptime(_at_region_enter)
        return self

    def __exit__(self, *exc):
        from torch._dynamo.comptime import comptime
        name = self.name  # noqa: F841
        comptime(_at_region_exit)
        return False


# The polyfills' bodies: module-level functions, for Dynamo traces functions
# it can find by source (a closure over `comptime` it cannot).
def _traced_region(name):
    return CompiledRegion(name)


def _traced_mark(name):
    from torch._dynamo.comptime import comptime
    comptime(_at_mark)


def _traced_snapshot(reason):
    from torch._dynamo.comptime import comptime
    comptime(_at_snapshot)


def _traced_observe(label, value):
    _observe_nest(label, value, 0)


def _traced_tensors_wanted():
    # Whether a sink wants them is known only when the program runs: the
    # observe operators ask then.
    return True


def _polyfills():
    # torch.compiler's public wrapper takes functions only; the region is a
    # type (is_embedded_type: the one option that admits a class).
    from torch._dynamo.decorators import substitute_in_graph

    substitute_in_graph(_regiontrace.region, is_embedded_type=True,
                        skip_signature_check=True)(_traced_region)
    substitute_in_graph(_regiontrace.mark, skip_signature_check=True)(_traced_mark)
    substitute_in_graph(_regiontrace.snapshot, skip_signature_check=True)(_traced_snapshot)
    if hasattr(_regiontrace, "observe"):
        substitute_in_graph(_regiontrace.observe, skip_signature_check=True)(_traced_observe)
        substitute_in_graph(_regiontrace.tensors_wanted,
                            skip_signature_check=True)(_traced_tensors_wanted)


_MAX_NESTING = 64


def _observe_nest(label, value, depth):
    """observe()'s flattening (observe_binding.cpp), traced: the same labels,
    one operator per tensor."""
    if isinstance(value, torch.Tensor):
        torch.ops.regiontrace.observe(label, value)
        return
    if depth == _MAX_NESTING:
        raise ValueError(f"regiontrace.observe: `{label}` nests deeper than {_MAX_NESTING} "
                         "lists, tuples or dicts")
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _observe_nest(f"{label}[{i}]", item, depth + 1)
    elif isinstance(value, dict):
        for position, (key, item) in enumerate(value.items()):
            if isinstance(key, str):
                name = f"{label}.{key}"
            elif isinstance(key, int) and not isinstance(key, bool):
                name = f"{label}[{key}]"
            else:
                name = f"{label}[{position}]"
            _observe_nest(name, item, depth + 1)


def set_step(step):
    """set_step() inside compiled code."""
    from torch._dynamo.comptime import comptime
    comptime(_at_set_step)


def advance_step():
    """step() inside compiled code."""
    from torch._dynamo.comptime import comptime
    comptime(_at_advance_step)


_installed = False


# Why regions still break the graph in this process, or None.
unavailable = None


def _install_now():
    global _installed, unavailable
    if _installed:
        return
    _installed = True
    define_ops()
    try:
        _polyfills()
    except (ImportError, AttributeError, TypeError) as error:
        # A torch whose Dynamo lacks these hooks: regions work as before,
        # each a graph break (and an error under fullgraph=True).
        unavailable = f"torch {torch.__version__}: {error}"
        logging.getLogger("regiontrace").info(
            "regions inside torch.compile break the graph with this torch (%s)", unavailable)


class _AfterDynamo(importlib.abc.MetaPathFinder):
    """Installs the polyfills right after torch._dynamo is imported: before
    anything can trace, without making every `import regiontrace` pay for
    Dynamo."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch._dynamo":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module):
            run(module)
            _install_now()

        spec.loader = _WrappedLoader(loader, exec_module)
        return spec


class _WrappedLoader(importlib.abc.Loader):
    def __init__(self, loader, exec_module):
        self._loader = loader
        self.exec_module = exec_module

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def __getattr__(self, name):
        return getattr(self._loader, name)


def install():
    """Makes regions, marks, steps and observe() compile: now if Dynamo is
    loaded, else as soon as it is."""
    define_ops()
    if "torch._dynamo" in sys.modules:
        _install_now()
    elif not any(isinstance(f, _AfterDynamo) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterDynamo())
