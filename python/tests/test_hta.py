"""HolisticTraceAnalysis (PyPI HolisticTraceAnalysis) reads the torch_profiler
sink's traces of a 4-rank job: one rank per file, each rank's ProfilerStep#N
iterations, the same span and step times as `regiontrace summary` and
`regiontrace report` read from the same files, HTA's call stacks nesting
the spans as the summary's self times count them, and HTA's TraceDiff of two
runs (the program changed between them) agreeing, rank by rank, with the
difference of the two runs' summaries.

The main job is tools/regiontrace/tests/straggler_program.cpp under mpirun:
6 steps of a `training_step` region holding `forward` (10 ms), rank 2
sleeping 20 ms more per step. It issues no torch ops, so its traces hold
steps, region spans and collection markers: timings known in advance. A
second job runs a libtorch program (the sink tests' workload) on 4 ranks,
whose traces hold aten ops: HTA's op counts and times against
`regiontrace summary`.

HTA takes a trace's rank from the first `"rank":\\s+(\\d+)` in the file and
treats every *.json and *.gz in trace_dir as a trace (a file without a rank
as rank 0). The jobs run with the default settings (no `layout`, no
`config_snapshot`): the output folder holds the traces alone, the op
summaries in its summaries/ and the configuration snapshots in its
regiontrace_config/, and HTA is pointed at the output folder itself, as a
user would. TensorBoard's profiler plugin loads the same folder with its own
run discovery and loader."""

import glob
import gzip
import json
import os
import subprocess
import sys

import pytest

from conftest import clean_env

hta_trace_analysis = pytest.importorskip("hta.trace_analysis")

STEPS = 6
RANKS = {0, 1, 2, 3}
SLOW_RANK = 2
REGION = "profiler_region_training_step"  # training_step, by its catalog name
SPAN = "regiontrace.region::" + REGION
US = 1e-3  # one microsecond in ms


def _required(name):
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set (registered by python/tests/CMakeLists.txt)")
    return value


def _cli(*args):
    proc = subprocess.run([_required("RT_TEST_CLI"), *args], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _mpirun(out, program, sinks="torch_profiler"):
    """One 4-rank mpirun of `program` (a command line) with `sinks` and
    nothing else set but the output folder: every other setting its default."""
    env = clean_env(REGIONTRACE_PLUGIN_PATH=_required("RT_TEST_PLUGIN_DIR"),
                    REGIONTRACE_SINKS=sinks, REGIONTRACE_OUTPUT_DIR=out,
                    REGIONTRACE_LOG_LEVEL="warn",
                    # Open MPI in a container: shared memory without CMA.
                    OMPI_MCA_btl_vader_single_copy_mechanism="none")
    proc = subprocess.run(
        [_required("RT_TEST_MPIRUN"), "--allow-run-as-root", "--oversubscribe", "-np", "4",
         "--mca", "btl", "self,vader", "-x", "REGIONTRACE_PLUGIN_PATH", "-x", "REGIONTRACE_SINKS",
         "-x", "REGIONTRACE_OUTPUT_DIR", "-x", "REGIONTRACE_LOG_LEVEL", *program],
        env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _run_ranks(tmp_path_factory, program, name="hta_out"):
    """The default output folder of one 4-rank mpirun of `program`: one
    trace per rank, and beside them only the two subfolders, summaries/ (each
    trace's .summary.txt and .summary.json, under its name) and
    regiontrace_config/ (each rank's configuration snapshot)."""
    out = tmp_path_factory.mktemp(name)
    _mpirun(out, program)
    traces = sorted(glob.glob(str(out / "torch_trace_*.pt.trace.json.gz")))
    assert len(traces) == 4, sorted(os.listdir(out))
    names = [os.path.basename(t) for t in traces]
    assert sorted(os.listdir(out)) == sorted(names + ["regiontrace_config", "summaries"])
    stems = [n[:-len(".pt.trace.json.gz")] for n in names]
    assert sorted(os.listdir(out / "summaries")) == sorted(
        s + ext for s in stems for ext in (".summary.json", ".summary.txt"))
    configs = sorted(os.listdir(out / "regiontrace_config"))
    assert [c.split("_pid")[0] for c in configs] == [f"regiontrace_config_rank{r}"
                                                      for r in sorted(RANKS)], configs
    return out


def _run_job(tmp_path_factory, base_ms, slow_rank, extra_ms):
    return _run_ranks(tmp_path_factory, [_required("RT_TEST_STRAGGLER_PROGRAM"), str(STEPS),
                                         str(base_ms), str(slow_rank), str(extra_ms)])


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    return _run_job(tmp_path_factory, 10, SLOW_RANK, 20)


@pytest.fixture(scope="module")
def torch_job(tmp_path_factory):
    """4 ranks of a libtorch program under mpirun (workload.cpp of the sink's
    tests, `loop`): each step runs aten::cos outside every region, aten::mm in
    training_step, aten::sin in training_backward inside it, and aten::tan in
    training_validation."""
    return _run_ranks(tmp_path_factory, [_required("RT_TEST_TORCH_WORKLOAD"), "loop", str(STEPS)])


@pytest.fixture(scope="module")
def second_job(tmp_path_factory):
    """The same program changed: a slower forward, another straggler."""
    return _run_job(tmp_path_factory, 15, 1, 20)


def _load(folder, **kwargs):
    # HTA rounds ns-resolution times to whole microseconds unless told not
    # to; the comparisons below are to the microsecond.
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    analysis = hta_trace_analysis.TraceAnalysis(trace_dir=str(folder), **kwargs)
    analysis.t.decode_symbol_ids(use_shorten_name=False)
    return analysis


def _rank_of_file(analysis):
    return {rank: os.path.basename(path) for rank, path in analysis.t.trace_files.items()}


def test_each_trace_is_its_own_rank_with_every_step(job):
    # The default folder as it is: HTA finds the four traces and nothing
    # else (the summaries and configuration snapshots are in subfolders).
    traces = job
    a = _load(traces, include_last_profiler_step=True)
    assert set(a.t.get_ranks()) == RANKS
    assert sorted(a.t.trace_files.values()) == sorted(
        glob.glob(str(traces / "torch_trace_*.pt.trace.json.gz")))
    for rank, name in _rank_of_file(a).items():
        assert f"_rank{rank}_" in name, (rank, name)
        assert [int(i) for i in a.t.get_iterations(rank)] == list(range(STEPS)), rank
    assert [int(s) for s in a.get_profiler_steps()] == list(range(STEPS))
    for rank in RANKS:
        assert a.t.meta_data[rank]["distributedInfo"] == {"rank": rank, "world_size": 4}


def test_hta_drops_the_last_step_by_default(job):
    # HTA's convention for an iteration that may be incomplete, not ours.
    traces = job
    a = _load(traces)
    assert [int(s) for s in a.get_profiler_steps()] == list(range(STEPS - 1))


def _frame(a, rank):
    df = a.t.get_trace(rank)
    return df[df["dur"] >= 0]


def test_step_and_span_times_agree_with_regiontrace_report(job):
    traces = job
    a = _load(traces, include_last_profiler_step=True)
    report = _cli("report", "--json", str(traces))
    assert set(report["ranks"]) == RANKS
    regions = {g["region"]: g for g in report["regions"]}
    for rank in RANKS:
        df = _frame(a, rank)
        steps = df[df["s_name"].str.startswith("ProfilerStep#")]
        hta_steps = {int(n.split("#")[1]): d / 1000 for n, d in zip(steps["s_name"], steps["dur"])}
        ours = {s["step"]: s["per_rank"][str(rank)] for s in regions["(step)"]["steps"]}
        assert hta_steps.keys() == ours.keys()
        for step, ms in ours.items():
            assert hta_steps[step] == pytest.approx(ms, abs=US), (rank, step)
        # The span's time per step, by HTA's own step assignment of events.
        spans = df[df["s_name"] == SPAN]
        per_iter = spans.groupby("iteration")["dur"].sum() / 1000
        ours = {s["step"]: s["per_rank"][str(rank)] for s in regions[REGION]["steps"]}
        assert {int(i) for i in per_iter.index} == set(ours)
        for step, ms in ours.items():
            assert per_iter[step] == pytest.approx(ms, abs=US), (rank, step)
    # The straggler, seen from HTA's numbers: rank 2's median step is the
    # longest.
    medians = {r: _frame(a, r).query("s_name == @SPAN")["dur"].median() for r in RANKS}
    assert max(medians, key=medians.get) == SLOW_RANK, medians


def test_span_totals_agree_with_regiontrace_summary(job):
    traces = job
    a = _load(traces, include_last_profiler_step=True)
    for rank, path in a.t.trace_files.items():
        summary = _cli("summary", "--json", path)
        df = _frame(a, rank)
        for region in summary["regions"]:
            spans = df[df["s_name"] == "regiontrace.region::" + region["name"]]
            assert len(spans) == region["calls"] == STEPS, (rank, region["name"])
            assert spans["dur"].sum() == pytest.approx(region["total_us"], abs=1.0)
            assert spans["dur"].min() == pytest.approx(region["min_us"], abs=1.0)
            assert spans["dur"].max() == pytest.approx(region["max_us"], abs=1.0)


def test_a_compact_rank_is_invisible_to_hta(job, tmp_path):
    # What regiontrace wrote before: `"rank":2` without the space json.dumps
    # puts there. HTA then falls back to rank 0 for every file, and the ranks
    # overwrite one another.
    traces = job
    for path in glob.glob(str(traces / "*.pt.trace.json.gz")):
        with gzip.open(path, "rt") as f:
            text = f.read()
        with gzip.open(tmp_path / os.path.basename(path), "wt") as f:
            f.write(text.replace('"rank": ', '"rank":'))
    from hta.common.trace_file import get_trace_files
    assert list(get_trace_files(str(tmp_path))) == [0]


def test_call_stacks_nest_as_regiontrace_summary_counts_self_time(job):
    # HTA's call graph of each rank: the training_step spans are roots, each
    # forward span is its child, and a span's self time (its duration less
    # its children's) adds up to `regiontrace summary`'s self_us.
    from hta.common.call_stack import CallGraph
    traces = job
    a = _load(traces, include_last_profiler_step=True)
    CallGraph(a.t, ranks=sorted(RANKS))  # adds depth and parent to each rank's frame
    forward = "regiontrace.region::forward"
    for rank, path in a.t.trace_files.items():
        df = a.t.get_trace(rank)
        df = df[df["dur"] >= 0]
        outer = df[df["s_name"] == SPAN]
        inner = df[df["s_name"] == forward]
        assert len(outer) == len(inner) == STEPS, rank
        assert set(outer["depth"]) == {0}, rank
        assert set(inner["depth"]) == {1}, rank
        assert set(inner["parent"]) == set(outer["index"]), rank
        children = df[df["parent"].isin(outer["index"])].groupby("parent")["dur"].sum()
        hta_self = (outer.set_index("index")["dur"] - children).sum()
        ours = {r["name"]: r for r in _cli("summary", "--json", path)["regions"]}
        assert hta_self == pytest.approx(ours[REGION]["self_us"], abs=STEPS * 1.0), rank
        assert inner["dur"].sum() == pytest.approx(ours["forward"]["self_us"], abs=STEPS * 1.0)


def test_aten_ops_of_a_libtorch_job_agree_with_regiontrace_summary(torch_job):
    # The same checks on traces that hold libtorch's own events: every rank
    # and step, each cpu_op's calls and total time as `regiontrace summary`
    # counts them, and HTA's call stacks putting each op under its region.
    from hta.common.call_stack import CallGraph
    a = _load(torch_job, include_last_profiler_step=True)
    assert set(a.t.get_ranks()) == RANKS
    CallGraph(a.t, ranks=sorted(RANKS))
    region = "regiontrace.region::profiler_region_training_"
    under = {"aten::mm": region + "step", "aten::sin": region + "backward",
             "aten::tan": region + "validation"}
    for rank, path in a.t.trace_files.items():
        assert f"_rank{rank}_" in os.path.basename(path), (rank, path)
        assert [int(i) for i in a.t.get_iterations(rank)] == list(range(STEPS)), rank
        df = _frame(a, rank)
        ops = df[df["s_cat"] == "cpu_op"]
        summary = {o["name"]: o for o in _cli("summary", "--json", path)["ops"]}
        assert set(ops["s_name"]) == set(summary), rank
        assert {"aten::mm", "aten::sin", "aten::tan"} <= set(summary)
        assert "aten::cos" not in summary  # outside every selected region
        for name, row in summary.items():
            mine = ops[ops["s_name"] == name]
            assert len(mine) == row["calls"], (rank, name)
            assert mine["dur"].sum() == pytest.approx(row["total_us"], abs=row["calls"] * 1.0)
        by_index = df.set_index("index")
        for name, span in under.items():
            for parent in ops[ops["s_name"] == name]["parent"]:
                assert by_index.loc[parent, "s_name"] == span, (rank, name)
        assert len(ops[ops["s_name"] == "aten::mm"]) == STEPS


def _truncated_spans(trace):
    """(training_backward spans, those that do not hold their step's
    aten::sin): a region the exporter clipped, libtorch's op clock running
    tens of ns ahead of regiontrace's while mm ends just before it begins."""
    with gzip.open(trace, "rt") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    spans = [e for e in events
             if e["name"] == "regiontrace.region::profiler_region_training_backward"]
    sins = [e for e in events if e["name"] == "aten::sin"]

    def holds(span, op):
        return span["ts"] <= op["ts"] and op["ts"] + op["dur"] <= span["ts"] + span["dur"]
    return len(spans), sum(1 for s in spans if not any(holds(s, o) for o in sins))


def test_region_spans_are_as_long_as_their_regions_were(tmp_path_factory):
    """4 ranks x 100 steps of training_step { mm; training_backward { sin } },
    three times: no training_backward span is written shorter than the sin it
    holds (82 of 1,200 were, before the exporter stopped cutting a region at
    the end of the op stamped before it)."""
    steps = 100
    for run in range(3):
        out = _run_ranks(tmp_path_factory,
                         [_required("RT_TEST_TORCH_WORKLOAD"), "loop", str(steps)],
                         name=f"truncation_{run}")
        counts = [_truncated_spans(t) for t in sorted(glob.glob(str(out / "*.pt.trace.json.gz")))]
        assert [n for n, _ in counts] == [steps] * 4, (run, counts)
        assert sum(bad for _, bad in counts) == 0, (run, counts)


def test_trace_diff_of_two_runs_agrees_with_regiontrace_summary(job, second_job):
    # HTA's TraceDiff, rank by rank over every step of the two runs: the
    # counts and total time each span name gained, against the difference of
    # `regiontrace summary` on the two files of that rank.
    from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff
    control = LabeledTrace(label="before", t=_load(job, include_last_profiler_step=True).t)
    test = LabeledTrace(label="after", t=_load(second_job, include_last_profiler_step=True).t)
    steps = list(range(STEPS))
    for rank in RANKS:
        diff = TraceDiff.compare_traces(control, test, control_rank=rank, test_rank=rank,
                                        control_iteration=steps, test_iteration=steps,
                                        device_type=DeviceType.CPU)
        ours = []
        for folder in (job, second_job):
            path, = glob.glob(str(folder / f"torch_trace_rank{rank}_*.pt.trace.json.gz"))
            ours.append({r["name"]: r for r in _cli("summary", "--json", path)["regions"]})
        before, after = ours
        assert set(before) == set(after) == {REGION, "forward"}, rank
        for region in before:
            row = diff.loc["regiontrace.region::" + region]
            assert row["before_counts"] == before[region]["calls"] == STEPS, (rank, region)
            assert row["diff_counts"] == after[region]["calls"] - before[region]["calls"] == 0
            ours_us = after[region]["total_us"] - before[region]["total_us"]
            assert row["diff_duration"] == pytest.approx(ours_us, abs=2 * STEPS * 1.0), (rank,
                                                                                          region)
        # HTA read each file as its own rank: the straggling (20 ms a step
        # outside forward) moved from rank 2 to rank 1 between the runs, by
        # the time training_step gained over forward's gain.
        outside_ms = (diff.loc[SPAN]["diff_duration"] -
                      diff.loc["regiontrace.region::forward"]["diff_duration"]) / 1000
        expected = STEPS * 20 * ((rank == 1) - (rank == SLOW_RANK))
        assert outside_ms == pytest.approx(expected, abs=STEPS * 10), rank
        changes = TraceDiff.ops_diff(control, test, control_rank=rank, test_rank=rank,
                                     control_iteration=steps, test_iteration=steps,
                                     device_type=DeviceType.CPU)
        assert {SPAN, "regiontrace.region::forward"} <= set(changes["unchanged"]), changes
        assert changes["added"] == changes["deleted"] == [], changes


# TensorBoard's profiler plugin (torch-tb-profiler) on the same folders: its
# run discovery (a folder is a run when it holds a *.pt.trace.json[.gz]) and
# its RunLoader, which parses each trace into the views the plugin serves.
# Run in a process of its own: the loader starts a process per trace.
TB_LOAD = r"""
import json, sys
from torch_tb_profiler import io
from torch_tb_profiler.plugin import TorchProfilerPlugin
from torch_tb_profiler.profiler import RunLoader

class Discovery:  # the plugin's own folder walk, without a TensorBoard server
    logdir = sys.argv[1]
runs = sorted(TorchProfilerPlugin._get_run_dirs(Discovery))
out = {"runs": runs, "profiles": {}}
for run_dir in runs:
    run = RunLoader("run", run_dir, io.Cache()).load()
    for (worker, span), p in run.profiles.items():
        if worker == "All":
            continue  # the distributed view, not a rank's profile
        out["profiles"].setdefault(worker, {})[span] = {
            "views": [v.display_name for v in p.views],
            "steps": [int(r[0]) for r in p.overview["steps"]["rows"]],
            "ops": [r[0] for r in p.operation_pie_by_name["host_self_time"]["rows"]],
        }
print(json.dumps(out))
"""


def _tensorboard_load(folder):
    pytest.importorskip("torch_tb_profiler")
    proc = subprocess.run([sys.executable, "-c", TB_LOAD, str(folder)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_tensorboard_loads_the_default_folder_as_one_run_of_four_workers(torch_job):
    loaded = _tensorboard_load(torch_job)
    # One run, the folder itself: summaries/ and regiontrace_config/ hold no
    # trace, so they are no run of their own.
    assert loaded["runs"] == [str(torch_job)]
    workers = loaded["profiles"]
    by_rank = {int(w.split("_rank")[1].split("_")[0]): w for w in workers}
    assert set(by_rank) == RANKS, sorted(workers)
    for rank, worker in by_rank.items():
        path, = glob.glob(str(torch_job / (worker + ".*pt.trace.json.gz")))
        [(span, profile)] = workers[worker].items()  # one window: one span
        assert "Overview" in profile["views"] and "Operator" in profile["views"], profile
        assert profile["steps"] == list(range(STEPS)), (rank, profile["steps"])
        # The operator view holds the ops `regiontrace summary` counts.
        ours = {o["name"] for o in _cli("summary", "--json", path)["ops"]}
        assert {"aten::mm", "aten::sin", "aten::tan"} <= set(profile["ops"]), profile["ops"]
        assert set(profile["ops"]) <= ours | {"Other"}, (set(profile["ops"]) - ours)


@pytest.fixture(scope="module")
def every_sink_job(tmp_path_factory):
    """The libtorch job with the sinks that write files beside the torch
    traces in the same default folder."""
    out = tmp_path_factory.mktemp("every_sink")
    _mpirun(out, [_required("RT_TEST_TORCH_WORKLOAD"), "loop", str(STEPS)],
            sinks="torch_profiler,timeline,region_stats,memory_snapshot")
    return out


# What the other sinks leave in the folder HTA reads, each by its stem: HTA
# takes every *.json and *.gz there for a trace, these files' compact
# `"rank":N` escape its pattern, so each becomes rank 0. Rank 0 is then
# whichever of them os.listdir gives last: the torch trace by chance, another
# rank's timeline or memory counters loaded silently as rank 0, or a JSON
# summary that fails in pandas as the op summaries did. Strict: the day a
# sink keeps them out of the folder's top level, this says so.
@pytest.mark.parametrize("sink,stem", [
    pytest.param(sink, stem, marks=pytest.mark.xfail(
        strict=True, reason=f"the {sink} sink writes {stem}_rank*.json* into the folder itself"))
    for sink, stem in [("timeline", "timeline"), ("region_stats", "region_stats"),
                       ("memory_snapshot", "memory_summary"), ("memory_snapshot", "memory_trace")]])
def test_another_sink_in_the_default_folder_leaves_hta_the_torch_traces(every_sink_job, sink,
                                                                         stem):
    # By name, not by what HTA made of this folder's order.
    read = [n for n in os.listdir(every_sink_job) if n.endswith((".gz", ".json"))]
    assert len([n for n in read if n.startswith("torch_trace_")]) == 4, read
    assert not [n for n in read if n.startswith(stem + "_")], sorted(read)


@pytest.mark.xfail(strict=True, reason="timeline, region_stats and memory_snapshot write "
                   "*.json* into the folder itself (the test above, per sink)")
def test_hta_loads_the_default_folder_that_every_sink_wrote(every_sink_job):
    from hta.common.trace_file import get_trace_files
    read = [n for n in os.listdir(every_sink_job) if n.endswith((".gz", ".json"))]
    assert all(n.startswith("torch_trace_") for n in read), sorted(read)
    a = _load(every_sink_job, include_last_profiler_step=True)
    assert {r: os.path.basename(p) for r, p in get_trace_files(str(every_sink_job)).items()} == {
        r: os.path.basename(p) for r, p in a.t.trace_files.items()}
    for rank, name in _rank_of_file(a).items():
        assert name.startswith(f"torch_trace_rank{rank}_"), (rank, name)
        assert [int(i) for i in a.t.get_iterations(rank)] == list(range(STEPS)), rank


# video_pipeline under config/profiles/kernels.yaml with cpu,cuda activities
# on an H200 (torch 2.11+cu130), written by scripts/gpu_check.sh on
# 2026-12-04 (the SDK's ChromeTraceWriter, deviceProperties filled): 808
# kernels and 4 copies on one stream, denoising steps 2-3.
GPU_TRACES = os.path.join(os.path.dirname(__file__), "data", "h200_kernels")


def test_gpu_trace_lists_the_gpu_under_kinetos_names():
    # TensorBoard's GPU views read deviceProperties as Kineto writes it.
    [name] = os.listdir(GPU_TRACES)
    with gzip.open(os.path.join(GPU_TRACES, name)) as f:
        trace = json.load(f)
    [gpu] = trace["deviceProperties"]
    assert gpu["id"] == 0 and gpu["name"] == "NVIDIA H200"
    assert gpu["numSms"] == 132 and gpu["computeMajor"] == 9 and gpu["warpSize"] == 32
    assert gpu["totalGlobalMem"] > 100 * 2**30
    assert trace["distributedInfo"] == {"rank": 0, "world_size": 1}


def test_gpu_trace_breakdowns_agree_with_regiontrace_summary():
    # HTA's temporal and kernel breakdowns of a GPU trace regiontrace wrote,
    # against `regiontrace summary` of the same file: kernel time to the
    # nanosecond (HTA's ns rounding off), each kernel's count and sum.
    a = _load(GPU_TRACES, include_last_profiler_step=True)
    assert a.t.get_ranks() == [0]
    path = a.t.trace_files[0]
    gpu = _cli("summary", "--json", "--top", "0", path)["gpu"]
    kernel_us = sum(r["self_us"] for r in gpu if r["category"] == "kernel")
    copy_us = sum(r["self_us"] for r in gpu if r["category"] in ("gpu_memcpy", "gpu_memset"))
    assert kernel_us > 1000 and copy_us > 0
    temporal = a.get_temporal_breakdown(visualize=False).iloc[0]
    assert temporal["compute_time(us)"] == pytest.approx(kernel_us, abs=0.01)
    assert temporal["non_compute_time(us)"] == pytest.approx(copy_us, abs=0.01)

    _, per_kernel = a.get_gpu_kernel_breakdown(visualize=False, num_kernels=1000,
                                               include_memory_kernels=True)
    ours = {r["name"]: r for r in gpu}
    hta_rows = per_kernel[per_kernel["name"] != "others"]
    assert len(hta_rows) == len(ours)
    for _, row in hta_rows.iterrows():
        mine = ours[row["name"]]
        assert row["sum (us)"] == pytest.approx(mine["self_us"], abs=1.0), row["name"]
        assert row["max (us)"] == pytest.approx(mine["max_us"], abs=1.0), row["name"]


def test_gpu_kernels_are_launched_inside_their_region_span():
    # In HTA's frame: every kernel's launch (the cuda_runtime call with its
    # correlation id) lies inside a regiontrace region span on the CPU.
    a = _load(GPU_TRACES, include_last_profiler_step=True)
    df = _frame(a, 0)
    spans = df[df["s_name"].str.startswith("regiontrace.region::")]
    kernels = df[df["s_cat"] == "kernel"]
    # cudaLaunchKernel and friends, or the driver's cuLaunchKernelEx.
    launches = df[df["s_cat"].isin(["cuda_runtime", "cuda_driver"])].set_index("correlation")
    assert len(spans) >= 1 and len(kernels) == 808
    for corr in kernels["correlation"]:
        launch = launches.loc[corr]
        inside = spans[(spans["ts"] <= launch["ts"]) &
                       (launch["ts"] + launch["dur"] <= spans["ts"] + spans["dur"])]
        assert len(inside) >= 1, (corr, launch["ts"])
