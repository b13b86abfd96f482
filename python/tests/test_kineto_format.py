"""The torch_profiler sink's trace is a superset of the one Kineto writes for
the same ops (torch.profiler's export_chrome_trace): every top-level member,
every event category and metadata event, and every cpu_op with its args keys.
What is Kineto's alone, and what regiontrace adds, is listed here by name, so
a change on either side shows up as a diff.

Two child interpreters run the same ops: one under torch.profiler (with a
one-process gloo group, so that Kineto writes distributedInfo), one inside a
regiontrace region selected for the torch_profiler sink."""

import glob
import gzip
import json

from conftest import clean_env, run_python

OPS = """
import torch
from torch.profiler import record_function
torch.manual_seed(0)
x = torch.randn(64, 64)
def work():
    with record_function("my_block"):
        y = torch.mm(x, x).relu()
        (y + 1).sum()
"""

# Kineto's, not written by regiontrace, and why.
KINETO_ONLY_CATEGORIES = {
    # The profiler's own whole-window span, on a "Spans" process named by a
    # string pid: the collection markers say where regiontrace collected.
    "Trace",
}
KINETO_ONLY_METADATA_EVENTS = {
    # Viewer ordering hints; tracks are named by process_name/thread_name.
    "process_labels", "process_sort_index", "thread_sort_index",
}
KINETO_ONLY_DISTRIBUTED = {
    # The process group is the program's: regiontrace knows the launcher's
    # rank and world size, not the backend or groups.
    "backend", "pg_count", "pg_config", "nccl_version",
}
KINETO_ONLY_OP_ARGS = {
    # RecordFunction's handle: libtorch's KinetoEvent does not expose it.
    "Record function id",
}
# regiontrace's own additions.
OURS_ONLY_MEMBERS = {"regiontrace"}
OURS_ONLY_EVENTS = {"regiontrace.region::hot", "regiontrace.profiler.enable_collection",
                    "regiontrace.profiler.disable_collection"}


def _kineto_trace(folder):
    path = folder / "kineto.pt.trace.json"
    run_python(OPS + f"""
import tempfile, torch.distributed as dist
from torch.profiler import profile, ProfilerActivity
dist.init_process_group("gloo", init_method="file://" + tempfile.mktemp(), rank=0, world_size=1)
work()  # warm-up, as the regiontrace run has
with profile(activities=[ProfilerActivity.CPU]) as p:
    work()
p.export_chrome_trace({str(path)!r})
dist.destroy_process_group()
""")
    with open(path) as f:
        return json.load(f)


def _regiontrace_trace(folder):
    env = clean_env(REGIONTRACE_SINKS="torch_profiler", REGIONTRACE_OUTPUT_DIR=folder,
                    REGIONTRACE_TORCH_PROFILER_REGIONS="hot")
    run_python(OPS + """
import regiontrace
work()
with regiontrace.region("hot"):
    work()
""", env=env)
    traces = glob.glob(str(folder / "torch_trace_*.pt.trace.json.gz"))
    assert len(traces) == 1, sorted(p.name for p in folder.iterdir())
    with gzip.open(traces[0], "rt") as f:
        return traces[0], json.load(f)


def _ops(trace):
    """cpu_op and user_annotation name -> union of args keys."""
    out = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation"):
            out.setdefault(e["name"], set()).update(e.get("args", {}))
    return out


def test_regiontrace_trace_is_a_superset_of_kinetos(tmp_path, tmp_path_factory):
    kineto = _kineto_trace(tmp_path_factory.mktemp("kineto"))
    path, ours = _regiontrace_trace(tmp_path)

    # Top-level members, and the rank HTA and others read from distributedInfo.
    assert set(kineto) - set(ours) == set(), set(kineto) - set(ours)
    assert set(ours) - set(kineto) == OURS_ONLY_MEMBERS
    assert ours["schemaVersion"] == kineto["schemaVersion"] == 1
    assert ours["deviceProperties"] == kineto["deviceProperties"] == []
    assert ours["traceName"] == path
    assert isinstance(ours["baseTimeNanoseconds"], int)
    assert ours["distributedInfo"] == {"rank": 0, "world_size": 1}
    assert set(kineto["distributedInfo"]) - set(ours["distributedInfo"]) <= KINETO_ONLY_DISTRIBUTED

    # Event categories and metadata events.
    def categories(t):
        return {e["cat"] for e in t["traceEvents"] if "cat" in e}

    def metadata(t):
        return {e["name"] for e in t["traceEvents"] if e.get("ph") == "M"}

    assert categories(kineto) - categories(ours) == KINETO_ONLY_CATEGORIES
    assert categories(ours) - categories(kineto) == set()
    assert metadata(kineto) - metadata(ours) == KINETO_ONLY_METADATA_EVENTS
    assert metadata(ours) - metadata(kineto) == set()

    # Every op Kineto wrote, with every args key but the listed ones.
    kineto_ops, our_ops = _ops(kineto), _ops(ours)
    assert {"aten::mm", "aten::relu", "aten::add", "aten::sum", "my_block"} <= set(kineto_ops)
    for name, keys in kineto_ops.items():
        assert name in our_ops, (name, sorted(our_ops))
        assert keys - our_ops[name] <= KINETO_ONLY_OP_ARGS, (name, keys - our_ops[name])
    # Ours adds the region span and the collection markers, and the span's
    # args; no other event names.
    names = {e.get("name") for e in ours["traceEvents"] if e.get("ph") != "M"}
    assert names - set(kineto_ops) == OURS_ONLY_EVENTS
    span = next(e for e in ours["traceEvents"] if e.get("name") == "regiontrace.region::hot")
    assert span["cat"] == "user_annotation"
    # The region opened the window: its span begins where collection did,
    # after the profiler's start, and says so.
    assert set(span["args"]) == {"region", "path", "depth", "clipped_begin"}
    assert span["args"]["clipped_begin"] is True
