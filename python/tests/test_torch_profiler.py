"""The torch_profiler sink in a Python process: selected regions gate the
collection of ops Python issues, with the sink's spans and markers."""

import glob
import gzip
import json

from conftest import clean_env, run_python


def test_selected_region_gates_python_ops(tmp_path):
    env = clean_env(REGIONTRACE_SINKS="torch_profiler", REGIONTRACE_OUTPUT_DIR=tmp_path,
                    REGIONTRACE_TORCH_PROFILER_REGIONS="hot*")
    run_python("""
import torch, regiontrace
a = torch.randn(64, 64)
with regiontrace.region("cold"):
    torch.cumsum(a, 0)
with regiontrace.region("hot"):
    for _ in range(3):
        torch.mm(a, a)
torch.cumsum(a, 0)
with regiontrace.region("hot"):
    torch.mm(a, a)
""", env=env)
    traces = glob.glob(str(tmp_path / "torch_trace_*.json*"))
    traces = [t for t in traces if not t.endswith((".summary.json",))]
    assert len(traces) == 1, sorted(p.name for p in tmp_path.iterdir())
    opener = gzip.open if traces[0].endswith(".gz") else open
    with opener(traces[0], "rt") as f:
        events = json.load(f)["traceEvents"]
    names = [e.get("name", "") for e in events]
    assert names.count("aten::mm") == 4, sorted(set(names))
    assert "aten::cumsum" not in names
    spans = [e for e in events if e.get("name") == "regiontrace.region::hot"]
    assert len(spans) == 2
    assert names.count("regiontrace.profiler.enable_collection") == 2
    assert names.count("regiontrace.profiler.disable_collection") == 2
    # every mm lies inside a hot span
    for e in events:
        if e.get("name") == "aten::mm":
            assert any(s["ts"] <= e["ts"] and e["ts"] + e.get("dur", 0) <= s["ts"] + s["dur"]
                       for s in spans), e
