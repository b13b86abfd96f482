"""FastVideo's profiler module (fastvideo/profiler.py), on regiontrace.

The registry, the controller and the region helpers keep FastVideo's names,
signatures and rules; what happens inside a selected region is regiontrace's
torch_profiler sink (the same one C++ code drives), named `fastvideo`, so
spans read `fastvideo.region::<name>` and the collection markers
`fastvideo.profiler.enable_collection` / `disable_collection`.
"""

import atexit
import contextlib
import dataclasses
import functools
import logging
import os

from . import _regiontrace

logger = logging.getLogger("regiontrace.fastvideo")

_PREFIX = "profiler_region_"


@contextlib.contextmanager
def nvtx_range(name):
    """One NVTX range `name` for Nsight Systems, pushed only while
    FASTVIDEO_NVTX_PROFILE is set to anything but 0 and CUDA is available
    (both read on entry, as FastVideo does); otherwise nothing happens."""
    import torch  # only when used: regiontrace runs without torch too

    if os.environ.get("FASTVIDEO_NVTX_PROFILE", "0") == "0" or not torch.cuda.is_available():
        yield
        return
    torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()


@dataclasses.dataclass(frozen=True)
class ProfilerRegion:
    """A registered region: a lower-case name without surrounding spaces."""

    name: str
    description: str

    def __post_init__(self):
        if not self.name or self.name.strip() != self.name:
            raise ValueError("Profiler region name must be non-empty without surrounding "
                             f"whitespace: {self.name!r}")
        if not self.name.islower():
            raise ValueError(f"Profiler region name must be lower-case: {self.name!r}")


_REGIONS = {}


def register_profiler_region(name, description):
    """Registers a region so that selections and region() can check names."""
    canonical = name.strip().lower()
    if canonical in _REGIONS:
        raise ValueError(f"Profiler region {name!r} is already registered")
    _REGIONS[canonical] = ProfilerRegion(canonical, description)


def resolve_profiler_region(name):
    """The registered region `name` names, in full or short (without
    `profiler_region_`), or None."""
    canonical = name.strip().lower()
    found = _REGIONS.get(canonical)
    if found is None and not canonical.startswith(_PREFIX):
        found = _REGIONS.get(_PREFIX + canonical)
    return found


def list_profiler_regions():
    """Every registered region, sorted by name."""
    return [_REGIONS[name] for name in sorted(_REGIONS)]


def _available():
    return ", ".join(r.name for r in list_profiler_regions())


# The built-in catalog: the seed's regions and FastVideo's code's, one list
# for C++ and Python programs.
for _entry in _regiontrace._catalog_regions():
    register_profiler_region(_entry[0], _entry[1])


def _activities():
    import torch

    kinds = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        kinds.append(torch.profiler.ProfilerActivity.CUDA)
    return tuple(kinds)


@dataclasses.dataclass
class TorchProfilerConfig:
    """The regions to collect in: {full name: True}."""

    regions: dict

    @classmethod
    def from_env(cls):
        """From FASTVIDEO_TORCH_PROFILE_REGIONS, by FastVideo's rules: an
        empty list is an error naming the registered regions; a name that is
        not registered is warned about and skipped; none known is an error."""
        requested = {t.strip() for t in os.environ.get("FASTVIDEO_TORCH_PROFILE_REGIONS", "").split(",")
                     if t.strip()}
        if not requested:
            raise ValueError("FASTVIDEO_TORCH_PROFILE_REGIONS must list at least one region; "
                             f"available regions: {_available()}")
        regions = {}
        for token in sorted(requested):
            found = resolve_profiler_region(token)
            if found is None:
                logger.warning("Unknown profiler region '%s'; available regions: %s", token,
                               _available())
                continue
            regions[found.name] = True
        if not regions:
            raise ValueError("FASTVIDEO_TORCH_PROFILE_REGIONS did not match any known regions; "
                             f"requested={sorted(requested)}, available={_available()}")
        return cls(regions=regions)


_GLOBAL = None


def get_global_controller():
    return _GLOBAL


def set_global_controller(controller):
    global _GLOBAL
    _GLOBAL = controller


class TorchProfilerController:
    """Collects the torch profiler inside the selected regions only.

    `profiler` is the trace folder (FastVideo passes a torch.profiler.profile
    there; here the profiling is regiontrace's torch_profiler sink), None for
    a controller that does nothing. One enabled controller per process."""

    _warned_unregistered = set()

    def __init__(self, profiler, activities, config=None, disabled=False):
        if _GLOBAL is not None and not disabled:
            raise RuntimeError("TorchProfilerController already initialized globally. "
                               "Use get_global_controller().")
        self._activities = tuple(activities)
        self._trace_dir = None
        # An instance attribute from the start: the first `+= 1` adding one
        # would change the object under a compiled region and recompile it.
        self._depth = 0
        if disabled or profiler is None:
            self._profiler = None
            return
        self._profiler = profiler
        self._config = config or TorchProfilerConfig.from_env()
        set_global_controller(self)

    @property
    def is_enabled(self):
        """True while a region of this controller collects."""
        return self._profiler is not None and self._depth > 0

    def is_region_enabled(self, region):
        if self._profiler is None:
            return False
        found = resolve_profiler_region(region)
        return found is not None and self._config.regions.get(found.name, False)

    @contextlib.contextmanager
    def region(self, region):
        """Collects inside `region` when it is selected. A name that is not
        registered is warned about once (a typo would otherwise profile
        nothing, for ever) and runs unprofiled."""
        if self._profiler is None:
            yield
            return
        found = resolve_profiler_region(region)
        if found is None:
            if region not in self._warned_unregistered:
                self._warned_unregistered.add(region)
                logger.warning("PROFILER: region %r is not registered (typo?); available: %s",
                               region, _available())
            yield
            return
        if not self.is_region_enabled(region):
            yield
            return
        self._depth += 1
        try:
            with _regiontrace.region(found.name):
                yield
        finally:
            self._depth -= 1

    def start(self):
        """Starts regiontrace with the torch_profiler sink writing into the
        trace folder, collecting in this controller's regions."""
        if self._profiler is None:
            return
        values = {
            "sinks.torch_profiler.enabled": "true",
            "sinks.torch_profiler.output_dir": os.path.abspath(os.path.expanduser(self._profiler)),
            "sinks.torch_profiler.prefix": "fastvideo",
            # FastVideo's folder: its trace and summary names, nothing else.
            "sinks.torch_profiler.layout": "fastvideo",
            "sinks.torch_profiler.config_snapshot": "false",
            "sinks.torch_profiler.regions": ",".join(sorted(self._config.regions)),
        }
        if "FASTVIDEO_TRACE_STATS" in os.environ:
            # Starting here starts the activation sink too when its variables
            # ask for it: with the statistics FastVideo keeps (it warns about
            # the others when the trace is attached, not here).
            from ._fastvideo_activations import _stats
            kept = _stats(warn=False)
            if kept:
                values["sinks.activation_trace.stats"] = ",".join(kept)
            else:  # FastVideo traces nothing then
                values["sinks.activation_trace.enabled"] = "false"
        if "torch_profiler" in _regiontrace.running_sinks():
            logger.info("PROFILER: regiontrace's torch_profiler sink already runs; kept")
            return
        if _regiontrace.enabled():
            # Other sinks run (activation tracing): they are kept, and the
            # profiler joins them at the next start.
            logger.warning("PROFILER: regiontrace already runs without the torch_profiler sink; "
                           "set FASTVIDEO_TORCH_PROFILER_DIR before the first region to profile")
            return
        _regiontrace.init([], values, True)

    def stop(self):
        """Writes the trace and its summaries; idempotent (atexit calls it)."""
        if self._profiler is None:
            return
        self._profiler = None
        self._depth = 0
        set_global_controller(None)
        _regiontrace.shutdown()

    @property
    def has_profiler(self):
        return self._profiler is not None

    @property
    def activities(self):
        return tuple(self._activities)


def get_or_create_profiler(trace_dir):
    """The process's controller: the running one, a disabled one when
    `trace_dir` is empty, or a new one profiling into `trace_dir` (stopped
    at exit)."""
    existing = get_global_controller()
    if existing is not None:
        return existing
    if not trace_dir:
        return TorchProfilerController(None, _activities(), disabled=True)
    controller = TorchProfilerController(trace_dir, _activities())
    controller._trace_dir = trace_dir
    controller.start()
    atexit.register(controller.stop)
    return controller


@contextlib.contextmanager
def profiler_region(region):
    """controller.region(region) of the process's controller; nothing when
    there is none."""
    controller = get_global_controller()
    if controller is None:
        yield
        return
    with controller.region(region):
        yield


def profile_region(region):
    """A method decorator: runs the method inside `region` of
    `self.profiler_controller`, or plainly when there is none."""

    def decorate(method):
        @functools.wraps(method)
        def wrapped(self, *args, **kwargs):
            controller = getattr(self, "profiler_controller", None)
            if controller is None or not controller.has_profiler:
                return method(self, *args, **kwargs)
            with controller.region(region):
                return method(self, *args, **kwargs)

        return wrapped

    return decorate
