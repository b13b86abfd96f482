"""One meaning of steps everywhere (docs/profiling.md, "What a step is"):
one run of a denoising loop whose region spans every step, recorded by the
torch_profiler (with a `steps` filter), timeline and region_stats sinks at
once, then read by `regiontrace summary --by-step` and `regiontrace report`.
Every consumer must agree on where each step begins and ends and on how much
of the loop falls in it."""

import gzip
import json
import os
import subprocess

import pytest

from conftest import clean_env, one_file, regiontrace_cli, run_python


LOOP = """
import time, torch, regiontrace
a = torch.randn(64, 64)
regiontrace.set_step(0)
with regiontrace.region("inference_denoising"):
    for step in range(6):
        if step:
            regiontrace.set_step(step)
        torch.cos(a)                      # the loop's own op
        with regiontrace.region("blocks.0"):
            torch.mm(a, a)
            time.sleep(0.004)
        time.sleep(0.002)
regiontrace.shutdown()
"""

DENOISING = "profiler_region_inference_denoising"


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def abs_ns(trace, us):
    """An event time as absolute CLOCK_MONOTONIC nanoseconds."""
    return trace["baseTimeNanoseconds"] + round(us * 1000)


def step_spans(trace):
    spans = [e for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#") and e.get("ph") == "X"]
    return {e["args"]["step"]: e for e in spans}


def cli(*args):
    proc = subprocess.run([regiontrace_cli(), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("steps")
    run_python(LOOP, env=clean_env(
        REGIONTRACE_OUTPUT_DIR=out, REGIONTRACE_LOG_LEVEL="warn",
        REGIONTRACE_SINKS="torch_profiler,timeline,region_stats",
        REGIONTRACE_TORCH_PROFILER_REGIONS="inference_denoising,blocks.*",
        REGIONTRACE_TORCH_PROFILER_STEPS="2,3",
        REGIONTRACE_REGION_STATS_TABLE="off",
        REGIONTRACE_REGION_STATS_PROMETHEUS_TEXTFILE=out / "metrics.prom"))
    torch = load(one_file(str(out / "torch_trace_*.json.gz")))
    timeline = one_file(str(out / "timeline_*.json.gz"))
    return {"out": out, "torch": torch, "timeline_path": timeline, "timeline": load(timeline)}


def test_step_spans_agree_between_sinks_and_are_1ns_apart(run):
    timeline = step_spans(run["timeline"])
    assert sorted(timeline) == [0, 1, 2, 3, 4, 5]
    torch = step_spans(run["torch"])
    assert sorted(torch) == [2, 3]
    for trace, steps in ((run["timeline"], timeline), (run["torch"], torch)):
        numbers = sorted(steps)
        for n, m in zip(numbers, numbers[1:]):
            end = abs_ns(trace, steps[n]["ts"]) + round(steps[n]["dur"] * 1000)
            assert end + 1 == abs_ns(trace, steps[m]["ts"]), (n, m)
    # One set_step() call, one moment: both sinks place step 3's start there
    # (to the microsecond: Kineto's clock is converted to the trace's).
    assert abs(abs_ns(run["torch"], torch[3]["ts"]) - abs_ns(run["timeline"], timeline[3]["ts"])) \
        <= 1000


def test_a_steps_filter_collects_inside_the_region_open_before_it(run):
    events = run["torch"]["traceEvents"]
    ops = [e["name"] for e in events if e.get("cat") == "cpu_op"]
    assert ops.count("aten::cos") == 2, "the loop's own ops in steps 2 and 3"
    assert ops.count("aten::mm") == 2
    outer = [e for e in events if e.get("cat") == "user_annotation"
             and e.get("args", {}).get("region") == DENOISING]
    assert len(outer) == 1
    assert outer[0]["args"]["clipped_begin"] is True
    assert run["torch"]["regiontrace"]["steps"] == {"first": 2, "last": 3}


def test_summary_by_step_splits_the_loop_at_each_step(run):
    s = json.loads(cli("summary", "--json", "--by-step", run["timeline_path"]))
    steps = {row["step"]: row for row in s["steps"]}
    assert sorted(steps) == [0, 1, 2, 3, 4, 5]
    for n, row in steps.items():
        regions = {r["name"]: r for r in row["regions"]}
        # The loop's region covers each step but the first (it opened just
        # after set_step(0)) and the last (it closed before the run ended).
        assert regions[DENOISING]["calls"] == 1, n
        assert regions[DENOISING]["total_us"] <= row["wall_us"] + 0.001, n
        if 0 < n < 5:
            assert regions[DENOISING]["total_us"] == pytest.approx(row["wall_us"], abs=0.002), n
        assert regions["blocks.0"]["calls"] == 1, n
    whole = {r["name"]: r for r in s["regions"]}
    split = sum({r["name"]: r for r in row["regions"]}[DENOISING]["total_us"]
                for row in steps.values())
    # The 1 ns gaps between steps belong to no step.
    assert split == pytest.approx(whole[DENOISING]["total_us"], abs=0.006)


def test_report_rows_are_the_same_split(run):
    summary = json.loads(cli("summary", "--json", "--by-step", run["timeline_path"]))
    by_step = {row["step"]: {r["name"]: r["total_us"] for r in row["regions"]}
               for row in summary["steps"]}
    report = json.loads(cli("report", "--json", run["timeline_path"]))
    region = next(r for r in report["regions"] if r["region"] == DENOISING)
    rows = {row["step"]: row for row in region["steps"] if row["step"] is not None}
    assert sorted(rows) == [0, 1, 2, 3, 4, 5]
    for n, row in rows.items():
        assert row["per_rank"]["0"] * 1000 == pytest.approx(by_step[n][DENOISING], abs=0.002), n


def test_region_stats_rows_count_a_region_at_the_step_it_ends_in(run):
    stats = load(one_file(str(run["out"] / "region_stats_rank0_pid*.json")))
    rows = {}
    for kept in stats["steps"]["kept"]:
        for region in kept["regions"]:
            rows.setdefault(region["path"], {})[kept["step"]] = region["count"]
    assert rows[f"{DENOISING}/blocks.0"] == {n: 1 for n in range(6)}
    # Streaming totals in fixed memory: the whole span goes to its last step.
    assert rows[DENOISING] == {5: 1}
    # Prometheus has no step label: step numbers would grow its series
    # without bound; per-step rows are in the JSON above.
    with open(run["out"] / "metrics.prom") as f:
        assert "step=" not in f.read()
