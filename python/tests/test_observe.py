"""observe(): the C++ statistics on Python tensors, and the C++ labels for nests."""

import math

from conftest import run_python, trace_records


def test_statistics_match_torch(tmp_path, trace_env):
    run_python("""
import torch, regiontrace
torch.manual_seed(0)
x = torch.randn(64, 33, dtype=torch.float32) * 3 + 1
view = x.t()[3:17]                       # strided view: its logical elements
half = (x[:8] / 4).to(torch.bfloat16)
torch.save({"x": x, "view": view.contiguous(), "half": half}, %r)
with regiontrace.region("stats"):
    regiontrace.observe("x", x)
    regiontrace.observe("view", view)
    regiontrace.observe("half", half)
""" % str(tmp_path / "t.pt"), env=trace_env)
    import torch
    saved = torch.load(tmp_path / "t.pt")
    recs = {r["tensor"]: r for r in trace_records(tmp_path)}
    assert set(recs) == {"x", "view", "half"}
    for label, t in saved.items():
        d = t.double()
        rec = recs[label]
        assert rec["module"] == "stats"
        assert rec["shape"] == list(t.shape)
        assert rec["dtype"] == str(t.dtype)
        assert rec["numel"] == t.numel()
        expected = {"abs_mean": d.abs().mean(), "sum": d.sum(), "min": d.min(), "max": d.max(),
                    "mean": d.mean(), "std": d.std()}
        for stat, value in expected.items():
            assert math.isclose(rec[stat], value.item(), rel_tol=1e-12, abs_tol=1e-12), \
                (label, stat, rec[stat], value.item())


def test_nests_are_flattened_with_the_cxx_labels(tmp_path, trace_env):
    run_python("""
import collections, torch, regiontrace
t = lambda v: torch.full((2,), float(v))
Pair = collections.namedtuple("Pair", "a b")
nest = {
    "hidden": t(1),
    "kv": (t(2), [t(3), None, 4, "text"]),
    7: t(5),
    (1, 2): t(6),                        # neither str nor int: its position
    "pair": Pair(t(7), t(8)),
    "od": collections.OrderedDict(z=t(9)),
    "none": None,
}
with regiontrace.region("nest"):
    regiontrace.observe("out", nest)
    regiontrace.observe("plain", t(10))
    regiontrace.observe("empty", [])
    regiontrace.observe("number", 3.5)
""", env=trace_env)
    records = trace_records(tmp_path)
    got = [(r["tensor"], r["sum"] / 2) for r in records]
    assert got == [("out.hidden", 1), ("out.kv[0]", 2), ("out.kv[1][0]", 3), ("out[7]", 5),
                   ("out[3]", 6), ("out.pair[0]", 7), ("out.pair[1]", 8), ("out.od.z", 9),
                   ("plain", 10)]
    assert all(r["module"] == "nest" for r in records)


def test_observe_outside_selected_regions_is_dropped(tmp_path, trace_env):
    env = dict(trace_env, REGIONTRACE_ACTIVATION_TRACE_REGIONS="wanted*")
    run_python("""
import torch, regiontrace
with regiontrace.region("wanted"):
    assert regiontrace.tensors_wanted()
    regiontrace.observe("a", torch.ones(3))
with regiontrace.region("unwanted"):
    assert not regiontrace.tensors_wanted()
    regiontrace.observe("b", torch.ones(3))
""", env=env)
    assert [(r["module"], r["tensor"]) for r in trace_records(tmp_path)] == [("wanted", "a")]


def test_cycles_and_deep_nests_raise_and_the_run_goes_on(tmp_path, trace_env):
    # Followed, a list inside itself or a 10^5-deep nest overflowed the C
    # stack and took the interpreter and the run's outputs with it.
    out = run_python("""
import sys, torch, regiontrace
sys.setrecursionlimit(10**6)
t = torch.ones(3)
cycle = [t]
cycle.append(cycle)
deep = t
for _ in range(100000):
    deep = [deep]
shared = [t]
with regiontrace.region("nest"):
    regiontrace.observe("before", t)
    for label, value in (("cycle", cycle), ("deep", deep)):
        try:
            regiontrace.observe(label, value)
            print(label, "accepted")
        except ValueError as e:
            print(label, "refused:", e)
    regiontrace.observe("twice", [shared, shared])  # the same list twice is no cycle
    regiontrace.observe("after", t)
""", env=trace_env).stdout
    assert "cycle refused: regiontrace.observe: `cycle[1]` contains itself" in out, out
    assert "deep refused: regiontrace.observe: `deep" in out, out
    assert "nests deeper than 64 lists, tuples or dicts" in out, out
    labels = [r["tensor"] for r in trace_records(tmp_path)]
    # What the refused calls flattened before they stopped is kept, and the
    # run's later records too.
    assert labels[0] == "before" and labels[-1] == "after", labels
    assert "twice[0][0]" in labels and "twice[1][0]" in labels, labels
