"""regiontrace run the way FastVideo's executor runs its workers, ended every
way that executor (and the machine) ends them, and the files each ending
must leave (issue 46, items 1, 3 and 5).

FastVideo 0.2.1 runs one spawned daemon worker per GPU and builds the
profiler inside each; it shuts them down with a "shutdown" message, 5 s,
SIGTERM, 2 s, SIGKILL. executor_harness.py is such an executor (its
docstring says what it copies from FastVideo's), with a toy training step in
FastVideo's registered regions. The scenarios:

- graceful: the workers answer "shutdown" and return: every file is whole and
  holds exactly the regions each worker ran;
- a worker still inside a long region when the executor gives up on it:
  regiontrace's SIGTERM handler closes the sinks, the open region is in the
  timeline as open at the end;
- a worker deaf to SIGTERM, a fork child ending with os._exit, and SIGKILL at
  random moments mid-run: nothing closes the sinks, so the timeline and
  region_stats sinks must be flight recorders: their files exist from the
  start, always parse, say "incomplete": true, and hold what ran up to about
  one flush interval (REGIONTRACE_FLUSH_INTERVAL_S, 1 s by default) before
  the end; `regiontrace summary` opens them and says they are incomplete.
  Each worker writes when each step finished (CLOCK_MONOTONIC, the clock of
  the files' written_until_ns), which bounds what its files may hold;
- FastVideo's own settings in spawned ranked workers, FastVideo 0.2.1's
  modules beside regiontrace.fastvideo: what one writes, the other writes.
  test_fastvideo.py and test_fastvideo_side_by_side.py cover these in one
  process; here each worker sets RANK itself after importing the modules,
  as FastVideo's do.

Every scenario runs in an executor of its own (a child interpreter: the
configuration is per process); the tests parse what the sinks wrote.
"""

import collections
import glob
import gzip
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import time

import pytest

import executor_harness as harness
from conftest import clean_env, regiontrace_cli, run_python, read_jsonl
import trace_nesting

HARNESS = os.path.abspath(harness.__file__)
STEP, LOADING, LONG = harness.STEP, harness.LOADING, harness.LONG
CHILDREN = [f"{STEP}/{c}" for c in harness.STEP_CHILDREN]

# The flight recorder's default flush interval, and what a busy 2-core machine
# may add to it (a flush thread that waits for a CPU, a kill that lands while
# the file is being replaced): a killed worker's files hold every step
# finished WINDOW_S before the kill.
FLUSH_INTERVAL_S = 1.0
FLUSH_SLACK_S = 0.5
WINDOW_S = FLUSH_INTERVAL_S + FLUSH_SLACK_S


def run_executor(plan, env, cwd, timeout=300, check=True):
    """Runs executor_harness.py with `plan`; returns (report by rank, output);
    the report is None when the executor failed and not `check`."""
    proc = subprocess.run([sys.executable, HARNESS, json.dumps(plan)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        if not check:
            return None, output
        raise AssertionError(f"executor exited {proc.returncode}\n{output}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return {int(rank): r for rank, r in report.items()}, output


def profiled_env(base, **extra):
    """FastVideo's profiler on every training region, plus regiontrace's
    timeline and region_stats sinks, each into a folder of `base`."""
    return clean_env(FASTVIDEO_TORCH_PROFILER_DIR=base / "traces",
                     FASTVIDEO_TORCH_PROFILE_REGIONS=harness.PROFILE_REGIONS,
                     REGIONTRACE_SINKS="timeline,region_stats",
                     REGIONTRACE_OUTPUT_DIR=base / "out", **extra)


def scenario_dirs(tmp_path_factory, name):
    base = tmp_path_factory.mktemp(name)
    for sub in ("harness", "work"):
        (base / sub).mkdir()
    return base


def workers(ranks, behaviour, **spec):
    return [dict(rank=r, world_size=len(ranks), impl="regiontrace", behaviour=behaviour, **spec)
            for r in ranks]


# --- reading the files ----------------------------------------------------------

def timeline_path(base, rank, pid):
    return base / "out" / f"timeline_rank{rank}_pid{pid}.json.gz"


def stats_path(base, rank, pid):
    return base / "out" / f"region_stats_rank{rank}_pid{pid}.json"


def load_timeline(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def region_spans(doc):
    return [e for e in doc["traceEvents"]
            if e.get("ph") == "X" and "region" in e.get("args", {})]


def finished_counts(doc):
    """{path: spans that ended} of a timeline."""
    return collections.Counter(e["args"]["path"] for e in region_spans(doc)
                               if not e["args"].get("open_at_end"))


def open_paths(doc):
    return sorted(e["args"]["path"] for e in region_spans(doc) if e["args"].get("open_at_end"))


def stats_counts(doc):
    return {r["path"]: r["count"] for r in doc["regions"] if r["count"]}


def expected_counts(steps, loading=1):
    counts = {STEP: steps, **{c: steps for c in CHILDREN}}
    if loading:
        counts[LOADING] = loading
    return counts


def torch_traces(base, pid):
    host = os.uname().nodename
    return sorted(glob.glob(str(base / "traces" / f"{host}_{pid}.*.pt.trace.json.gz")))


def summary_cli(path):
    return subprocess.run([regiontrace_cli(), "summary", str(path)], capture_output=True,
                          text=True, timeout=60)


def check_whole(base, rank, pid, counts, open_at_end=()):
    """A worker whose sinks were closed: its timeline and region statistics
    parse, say nothing of being incomplete, and hold `counts` spans per path
    and the `open_at_end` paths as open; its torch trace and summaries exist.
    Returns the problems found."""
    problems = []
    where = f"rank {rank} pid {pid}"
    doc = load_timeline(timeline_path(base, rank, pid))
    if "incomplete" in doc["regiontrace"]:
        problems.append(f"{where}: a closed timeline says incomplete: {doc['regiontrace']}")
    if dict(finished_counts(doc)) != counts:
        problems.append(f"{where}: timeline spans {dict(finished_counts(doc))} != {counts}")
    if open_paths(doc) != sorted(open_at_end):
        problems.append(f"{where}: open at the end {open_paths(doc)} != {sorted(open_at_end)}")
    problems += [f"{where}: {v}" for v in trace_nesting.violations(doc)]
    with open(stats_path(base, rank, pid)) as f:
        stats = json.load(f)
    if "incomplete" in stats:
        problems.append(f"{where}: closed region statistics say incomplete")
    if stats_counts(stats) != counts:
        problems.append(f"{where}: region_stats counts {stats_counts(stats)} != {counts}")
    traces = torch_traces(base, pid)
    if len(traces) != 1:
        problems.append(f"{where}: torch traces {traces}")
    for trace in traces:
        names = collections.Counter(e.get("name") for e in load_timeline(trace)["traceEvents"])
        if names[f"fastvideo.region::{STEP}"] != counts[STEP]:
            problems.append(f"{where}: {trace} has {names[f'fastvideo.region::{STEP}']} "
                            f"step spans, not {counts[STEP]}")
    for name in (f"summary_rank{rank}.json", f"summary_rank{rank}.txt"):
        if not (base / "traces" / name).exists():
            problems.append(f"{where}: no {name}")
    return problems


def bounds(done_ns, end_ns, until_ns, window_s, cap=None):
    """What the files of a process that ended between `end_ns` and `until_ns`
    may count of events that finished at `done_ns`: every one finished
    `window_s` before the end, at most one more than had finished when it
    was gone (that one's progress line was not written yet)."""
    low = sum(1 for ns in done_ns if ns <= end_ns - window_s * 1e9)
    high = sum(1 for ns in done_ns if ns <= until_ns) + 1
    return low, high if cap is None else min(high, cap)


def check_flight_record(base, rank, pid, label, end_ns, until_ns=None, loaded=True,
                        window_s=WINDOW_S):
    """A worker that ended without closing its sinks (SIGKILL, os._exit), at
    `end_ns` (kill() called, os._exit about to be) and gone by `until_ns`
    (kill() returned): its files follow the flight recorder's contract, its
    last flush at most `window_s` before the end. `label` names its progress
    file. Returns the problems found."""
    until_ns = end_ns if until_ns is None else until_ns
    problems = []
    where = f"rank {rank} pid {pid}"
    steps, notes = harness.read_progress(base / "harness", label)
    step_ns = [ns for _, ns in steps]
    began_ns = notes.get("loaded", step_ns[0] if step_ns else end_ns)

    path = timeline_path(base, rank, pid)
    if not path.exists():
        return [f"{where}: no {path.name} (the timeline must exist from the sink's start); "
                f"{base / 'out'} holds {sorted(os.listdir(base / 'out'))}"]
    try:
        doc = load_timeline(path)
    except (OSError, EOFError, ValueError) as error:
        return [f"{where}: {path.name} does not parse: {error!r}"]
    meta = doc.get("regiontrace", {})
    if meta.get("incomplete") is not True:
        problems.append(f"{where}: the timeline of a killed worker lacks \"incomplete\": true: "
                        f"{meta}")
    written = meta.get("written_until_ns")
    if not isinstance(written, int):
        problems.append(f"{where}: no written_until_ns in {meta}")
    elif written > until_ns + 0.25e9:  # a flush that began as the process ended
        problems.append(f"{where}: written_until_ns {written} after the end {until_ns}")
    elif end_ns - began_ns > window_s * 1e9 and written < end_ns - window_s * 1e9:
        problems.append(f"{where}: last flush {(end_ns - written) / 1e9:.2f} s before the end")

    def check_counts(counts, what):
        low, high = bounds(step_ns, end_ns, until_ns, window_s)
        if not low <= counts.get(STEP, 0) <= high:
            problems.append(f"{where}: {what}: {counts.get(STEP, 0)} steps, {low}..{high} "
                            f"expected (ran {len(steps)} steps, ended "
                            f"{(end_ns - began_ns) / 1e9:.2f} s after loading)")
        for child in CHILDREN:
            # A step's children end before it: at most one more than its steps.
            if not counts.get(STEP, 0) <= counts.get(child, 0) <= counts.get(STEP, 0) + 1:
                problems.append(f"{where}: {what}: {counts.get(child, 0)} {child} for "
                                f"{counts.get(STEP, 0)} steps")
        if loaded:
            low, high = bounds([notes["loaded"]], end_ns, until_ns, window_s, cap=1)
            if not low <= counts.get(LOADING, 0) <= high:
                problems.append(f"{where}: {what}: {counts.get(LOADING, 0)} loadings, "
                                f"{low}..{high} expected")

    check_counts(finished_counts(doc), "timeline")
    for open_path in open_paths(doc):
        if open_path not in (STEP, *CHILDREN, LONG):
            problems.append(f"{where}: {open_path} open at the end")
    problems += [f"{where}: {v}" for v in trace_nesting.violations(doc)]

    stats_file = stats_path(base, rank, pid)
    if stats_file.exists():
        try:
            with open(stats_file) as f:
                stats = json.load(f)
        except ValueError as error:
            problems.append(f"{where}: {stats_file.name} does not parse (torn): {error!r}")
        else:
            if stats.get("incomplete") is not True:
                problems.append(f"{where}: region_stats of a killed worker lacks "
                                "\"incomplete\": true")
            check_counts(stats_counts(stats), "region_stats")
    elif end_ns - began_ns > window_s * 1e9:
        # Rewritten at each flush: after the first one it is there.
        problems.append(f"{where}: no {stats_file.name} after "
                        f"{(end_ns - began_ns) / 1e9:.2f} s of steps")

    # A torch trace, if one was written at all, is never torn.
    for trace in torch_traces(base, pid):
        try:
            load_timeline(trace)
        except (OSError, EOFError, ValueError) as error:
            problems.append(f"{where}: torn torch trace {trace}: {error!r}")

    proc = summary_cli(path)
    if proc.returncode != 0 or "incomplete" not in (proc.stdout + proc.stderr).lower():
        problems.append(f"{where}: `regiontrace summary {path.name}` exited "
                        f"{proc.returncode} without naming it incomplete:\n"
                        f"{proc.stdout}{proc.stderr}")
    return problems


def no_problems(problems):
    assert not problems, "\n".join(problems)


# --- a. graceful: "shutdown" answered, the workers return -------------------------

GRACEFUL_STEPS = {0: 3, 1: 5}  # each rank its own count: a file holds its own worker's


@pytest.fixture(scope="module")
def graceful(tmp_path_factory):
    base = scenario_dirs(tmp_path_factory, "graceful")
    plan = {"method": "spawn", "harness_dir": str(base / "harness"), "end": "shutdown",
            "workers": [dict(spec, steps=GRACEFUL_STEPS[spec["rank"]])
                        for spec in workers([0, 1], "graceful")]}
    report, output = run_executor(plan, profiled_env(base), cwd=base / "work")
    return base, report, output


def test_graceful_workers_answer_shutdown_and_exit_0(graceful):
    _, report, output = graceful
    for rank, r in report.items():
        assert r["exitcode"] == 0, (rank, r, output)
        assert "sigterm_ns" not in r, f"rank {rank} needed SIGTERM\n{output}"
        assert [m["status"] for m in r["messages"]] == ["done"], r


def test_graceful_every_file_is_whole_with_each_workers_regions(graceful):
    base, report, _ = graceful
    problems = []
    for rank, r in report.items():
        problems += check_whole(base, rank, r["pid"], expected_counts(GRACEFUL_STEPS[rank]))
    no_problems(problems)
    # One timeline and one region_stats file per worker, named by its rank
    # and pid (and the regiontrace_config/ folder of configuration snapshots).
    names = sorted(n for n in os.listdir(base / "out") if n != "regiontrace_config")
    assert names == sorted(f"{kind}_rank{rank}_pid{r['pid']}.{ext}"
                           for rank, r in report.items()
                           for kind, ext in (("region_stats", "json"), ("timeline", "json.gz")))
    # Nothing in the executor's working folder (no ./regiontrace_out).
    assert os.listdir(base / "work") == []


def test_graceful_timeline_opens_in_the_cli_as_complete(graceful):
    base, report, _ = graceful
    path = timeline_path(base, 1, report[1]["pid"])
    proc = summary_cli(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "incomplete" not in (proc.stdout + proc.stderr).lower(), proc.stdout + proc.stderr
    assert STEP.removeprefix("profiler_region_") in proc.stdout, proc.stdout


# --- b and c. the executor gives up: SIGTERM, then SIGKILL ------------------------

STUCK_STEPS = 3


@pytest.fixture(scope="module")
def stuck(tmp_path_factory):
    """Three workers that never read "shutdown": rank 0 with FastVideo's own
    SIGTERM handler (SystemExit), rank 1 with none (SIGTERM kills), both
    sleeping in a region; rank 2 ignores SIGTERM, which leaves SIGKILL."""
    base = scenario_dirs(tmp_path_factory, "stuck")
    specs = workers([0, 1], "stuck", steps=STUCK_STEPS) + workers([2], "ignore_sigterm",
                                                                  steps=STUCK_STEPS)
    specs[1]["signals"] = "default"
    for spec in specs:
        spec["world_size"] = 3
    plan = {"method": "spawn", "harness_dir": str(base / "harness"), "end": "shutdown",
            "workers": specs}
    report, output = run_executor(plan, profiled_env(base), cwd=base / "work")
    return base, report, output


def test_stuck_workers_end_at_the_stage_that_ends_them(stuck):
    _, report, output = stuck
    for rank in (0, 1, 2):
        assert [m["status"] for m in report[rank]["messages"]] == ["in_long_region"], output
        assert "sigterm_ns" in report[rank], (rank, report[rank])
    # SIGTERM ends ranks 0 and 1 within FastVideo's 2 s: regiontrace's handler
    # closes the sinks, then the signal takes its course: FastVideo's handler
    # raises SystemExit (exit 0), the default disposition kills.
    assert "sigkill_ns" not in report[0] and report[0]["exitcode"] == 0, (report[0], output)
    assert "sigkill_ns" not in report[1] and report[1]["exitcode"] == -15, (report[1], output)
    assert "sigkill_ns" in report[2] and report[2]["exitcode"] == -9, (report[2], output)


def test_sigterm_closes_every_file_with_the_open_region_marked(stuck):
    base, report, _ = stuck
    problems = []
    for rank in (0, 1):
        problems += check_whole(base, rank, report[rank]["pid"], expected_counts(STUCK_STEPS),
                                open_at_end=[LONG])
    no_problems(problems)


def test_sigkill_after_ignored_sigterm_leaves_a_flight_record(stuck):
    """Rank 2 sat in its long region for 7 s before SIGKILL: its files hold
    every step, the region as open at the end, and say incomplete."""
    base, report, _ = stuck
    r = report[2]
    problems = check_flight_record(base, 2, r["pid"], "rank2", r["sigkill_ns"], r["killed_ns"])
    path = timeline_path(base, 2, r["pid"])
    if path.exists() and not problems:
        doc = load_timeline(path)
        # Everything ran seconds before the kill: the counts are exact.
        if dict(finished_counts(doc)) != expected_counts(STUCK_STEPS):
            problems.append(f"spans {dict(finished_counts(doc))}")
        if open_paths(doc) != [LONG]:
            problems.append(f"open at the end: {open_paths(doc)}")
    no_problems(problems)


# --- d. fork children and os._exit ------------------------------------------------

FORK_RUN_S = 2.5  # two flush intervals and more: a flush happened before the exit
FAST_FLUSH_S = 0.25


@pytest.fixture(scope="module")
def forked(tmp_path_factory):
    """multiprocessing's fork method: rank 0 returns (multiprocessing then
    ends the child with os._exit after its finalizers, among them
    regiontrace's shutdown), rank 1 calls os._exit(0) itself (no finalizer)."""
    base = scenario_dirs(tmp_path_factory, "forked")
    returns, exits = workers([0, 1], "graceful", steps=4, step_sleep_s=0.02)
    exits.update(behaviour="exit_abruptly", run_s=FORK_RUN_S)
    report, output = {}, ""
    # One executor each: rank 1 never answers "run", so its executor only
    # joins it ("wait").
    for end, spec in (("shutdown", returns), ("wait", exits)):
        plan = {"method": "fork", "harness_dir": str(base / "harness"), "end": end,
                "workers": [spec]}
        got, out = run_executor(plan, profiled_env(base), cwd=base / "work")
        report.update(got)
        output += out
    return base, report, output


def test_a_fork_child_that_returns_closes_its_sinks(forked):
    base, report, output = forked
    assert report[0]["exitcode"] == 0, output
    no_problems(check_whole(base, 0, report[0]["pid"], expected_counts(4)))


def test_a_fork_child_ending_with_os_exit_leaves_a_flight_record(forked):
    base, report, output = forked
    assert report[1]["exitcode"] == 0, output
    _, notes = harness.read_progress(base / "harness", "rank1")
    no_problems(check_flight_record(base, 1, report[1]["pid"], "rank1", notes["exit"]))


# A process that already records forks a child (os.fork, as a data loader or a
# launcher might): the child forgets the parent's sinks, starts its own
# (docs/architecture.md: init() in the child), records into files of its own
# and ends with os._exit; the parent's files stay its own.
FORK_FROM_RECORDING = """
import os, sys, time
sys.path.insert(0, TESTS)
import executor_harness as h
import regiontrace
api = h.fastvideo_api("regiontrace")
os.environ["RANK"] = "0"
api.get_or_create_profiler(os.environ["FASTVIDEO_TORCH_PROFILER_DIR"])
model = h.Model(api, 0, 0.02)
for i in range(3):
    model.step(i)
child = os.fork()
if child == 0:
    regiontrace.init()
    progress = h.Progress(HARNESS_DIR, "child")
    deadline = time.monotonic() + RUN_S
    i = 0
    while time.monotonic() < deadline:
        model.step(i)
        progress.done(i)
        i += 1
    progress.note("exit")
    os._exit(0)
_, status = os.waitpid(child, 0)
for i in range(3, 5):
    model.step(i)
print("pids", os.getpid(), child, status)
"""


@pytest.fixture(scope="module")
def fork_from_recording(tmp_path_factory):
    base = scenario_dirs(tmp_path_factory, "fork_from_recording")
    code = (f"TESTS = {os.path.dirname(HARNESS)!r}\nHARNESS_DIR = {str(base / 'harness')!r}\n"
            f"RUN_S = {FORK_RUN_S}\n" + FORK_FROM_RECORDING)
    proc = run_python(code, env=profiled_env(base), cwd=base / "work", timeout=120)
    parent, child, status = (int(v) for v in proc.stdout.split("pids")[-1].split())
    assert status == 0, proc.stdout + proc.stderr
    return base, parent, child


def test_the_recording_parent_keeps_its_own_files_whole(fork_from_recording):
    base, parent, child = fork_from_recording
    no_problems(check_whole(base, 0, parent, expected_counts(5)))
    doc = load_timeline(timeline_path(base, 0, parent))
    assert {e["pid"] for e in doc["traceEvents"] if e.get("ph") == "X"} == {parent}


def test_its_fork_child_ending_with_os_exit_leaves_a_flight_record(fork_from_recording):
    base, _, child = fork_from_recording
    _, notes = harness.read_progress(base / "harness", "child")
    # The child's regions began after the fork: no loading of its own.
    no_problems(check_flight_record(base, 0, child, "child", notes["exit"], loaded=False))


# One process, flushed every 0.25 s, ending with os._exit: its files lag the
# end by that interval, not the default one.
SHORT_INTERVAL = """
import os, sys, time
sys.path.insert(0, TESTS)
import executor_harness as h
api = h.fastvideo_api("regiontrace")
os.environ["RANK"] = "0"
api.get_or_create_profiler(os.environ["FASTVIDEO_TORCH_PROFILER_DIR"])
model = h.Model(api, 0, 0.02)
progress = h.Progress(HARNESS_DIR, "rank0")
progress.note("loaded")
deadline = time.monotonic() + RUN_S
i = 0
while time.monotonic() < deadline:
    model.step(i)
    progress.done(i)
    i += 1
print("pid", os.getpid(), flush=True)
progress.note("exit")
os._exit(0)
"""


def test_the_flush_interval_is_read_from_the_environment(tmp_path):
    base = tmp_path
    for sub in ("harness", "work"):
        (base / sub).mkdir()
    code = (f"TESTS = {os.path.dirname(HARNESS)!r}\nHARNESS_DIR = {str(base / 'harness')!r}\n"
            f"RUN_S = {FORK_RUN_S}\n" + SHORT_INTERVAL)
    proc = run_python(code, env=profiled_env(base, REGIONTRACE_FLUSH_INTERVAL_S=FAST_FLUSH_S),
                      cwd=base / "work", timeout=120)
    pid = int(proc.stdout.split("pid")[-1])
    _, notes = harness.read_progress(base / "harness", "rank0")
    no_problems(check_flight_record(base, 0, pid, "rank0", notes["exit"],
                                    window_s=FAST_FLUSH_S + FLUSH_SLACK_S))


# --- e. SIGKILL at random moments -------------------------------------------------

KILL_RUNS = 10        # executors of two workers each: 20 kills
KILL_AFTER_S = (0.0, 3.5)  # after the worker's first step


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """[(base, report, plan)] of KILL_RUNS executors whose endless workers
    were each killed at a random moment; the seed is in every failure. The
    workers fork from a server that imported torch and regiontrace (the
    workers still build the profiler themselves): 20 spawned workers would
    spend a minute of a 2-core machine importing torch; the spawned ones
    above already show what spawn changes."""
    seed = int(os.environ.get("RT_TEST_KILL_SEED", time.time_ns() % 2**32))
    rng = random.Random(seed)
    runs = []
    for n in range(KILL_RUNS):
        base = scenario_dirs(tmp_path_factory, f"killed{n}")
        specs = workers([0, 1], "endless", step_sleep_s=0.02)
        for spec in specs:
            spec["kill_after_s"] = round(rng.uniform(*KILL_AFTER_S), 3)
        plan = {"method": "forkserver", "harness_dir": str(base / "harness"), "end": "kill",
                "workers": specs}
        report, _ = run_executor(plan, profiled_env(base), cwd=base / "work")
        runs.append((base, report, plan))
    return seed, runs


def test_sigkill_at_random_moments_leaves_flight_records(killed):
    seed, runs = killed
    problems = []
    for base, report, plan in runs:
        for spec in plan["workers"]:
            rank = spec["rank"]
            r = report[rank]
            if r["exitcode"] != -9:
                problems.append(f"{base.name} rank {rank}: exit {r['exitcode']}, not SIGKILL")
            found = check_flight_record(base, rank, r["pid"], f"rank{rank}", r["sigkill_ns"],
                                        r["killed_ns"])
            problems += [f"{base.name} (killed {spec['kill_after_s']} s after its first step): "
                         f"{p}" for p in found]
    assert not problems, f"RT_TEST_KILL_SEED={seed}\n" + "\n".join(problems)


# --- FastVideo's settings in spawned workers, FastVideo's modules beside ours ------

IMPLS = ("fastvideo", "regiontrace")


def run_both(tmp_path_factory, name, settings):
    """{impl: (base, report, output)}: two spawned graceful workers (ranks 0
    and 1, three steps) per implementation, with FastVideo's variables alone;
    `settings(base)` gives them."""
    if importlib.util.find_spec("fastvideo") is None:
        pytest.skip("FastVideo 0.2.1 is not installed (scripts/install_deps.sh installs it)")
    out = {}
    for impl in IMPLS:
        base = scenario_dirs(tmp_path_factory, f"{name}_{impl}")
        specs = workers([0, 1], "graceful", steps=3)
        for spec in specs:
            spec["impl"] = impl
        plan = {"method": "spawn", "harness_dir": str(base / "harness"), "end": "shutdown",
                "workers": specs}
        # A worker that fails is a failed test (all_exit_0), not an error of
        # the fixture: the other implementation's run is still compared.
        report, output = run_executor(plan, clean_env(**settings(base)), cwd=base / "work",
                                      check=False)
        out[impl] = (base, report, output)
    return out


def files_under(base):
    """Every file a run left outside the harness's own folder, relative to base."""
    found = []
    for root, _, files in os.walk(base):
        if os.path.basename(root) == "harness":
            continue
        found += [os.path.relpath(os.path.join(root, f), base) for f in files]
    return sorted(found)


def generic(names, report):
    """File names with each worker's pid as <pid> and a trace's time as <ns>, sorted."""
    pids = {str(r["pid"]) for r in report.values()}
    out = []
    for name in names:
        for pid in pids:
            name = re.sub(rf"(?<![0-9]){pid}(?![0-9])", "<pid>", name)
        out.append(re.sub(r"\.[0-9]+\.pt\.trace\.json\.gz$", ".<ns>.pt.trace.json.gz", name))
    return sorted(out)


def all_exit_0(runs):
    for impl, (_, report, output) in runs.items():
        assert report is not None, f"{impl}: the executor failed\n{output}"
        for rank, r in report.items():
            assert r["exitcode"] == 0 and [m["status"] for m in r["messages"]] == ["done"], (
                impl, rank, r, output)


@pytest.fixture(scope="module")
def regions_without_dir(tmp_path_factory):
    """The profiler's regions without its folder; the activation trace on, so
    that regiontrace does start in each worker (the activation sink)."""
    return run_both(tmp_path_factory, "regions_without_dir", lambda base: {
        "FASTVIDEO_TORCH_PROFILE_REGIONS": harness.PROFILE_REGIONS,
        "FASTVIDEO_TRACE_ACTIVATIONS": "1",
        "FASTVIDEO_TRACE_OUTPUT": base / "acts" / "act_<pid>.jsonl"})


def test_profile_regions_without_a_profiler_dir_profile_nothing(regions_without_dir):
    all_exit_0(regions_without_dir)
    for impl, (base, report, output) in regions_without_dir.items():
        # FastVideo builds no profiler without FASTVIDEO_TORCH_PROFILER_DIR:
        # no trace anywhere, no ./regiontrace_out in the working folder; the
        # activation files only (what else may lie beside them is
        # test_no_file_appears_that_fastvideo_would_not_write's).
        listed = generic(files_under(base), report)
        assert [n for n in listed if not n.startswith("acts/")] == [], (impl, listed, output)
        assert "acts/act_<pid>.jsonl" in listed, (impl, listed)


def fastvideo_order_settings(stats):
    def settings(base):
        return {"FASTVIDEO_TORCH_PROFILER_DIR": base / "traces",
                "FASTVIDEO_TORCH_PROFILE_REGIONS": harness.PROFILE_REGIONS,
                "FASTVIDEO_TRACE_ACTIVATIONS": "1", "FASTVIDEO_TRACE_STATS": stats,
                "FASTVIDEO_TRACE_OUTPUT": base / "acts" / "act_<pid>.jsonl"}
    return settings


@pytest.fixture(scope="module")
def fastvideo_order(tmp_path_factory):
    """The profiler, then attach_activation_trace, in each ranked worker."""
    return run_both(tmp_path_factory, "fastvideo_order", fastvideo_order_settings("abs_mean,sum"))


def test_profiler_then_activation_trace_runs_without_a_restart_warning(fastvideo_order):
    all_exit_0(fastvideo_order)
    output = fastvideo_order["regiontrace"][2]
    # Attaching the activation trace to a process whose profiler runs is
    # FastVideo's normal order: no "init() while sinks run ... shutdown() first".
    assert "while sinks run" not in output, output
    assert "shutdown() first" not in output, output


def test_each_ranked_worker_writes_exactly_the_name_act_pid_jsonl(fastvideo_order):
    all_exit_0(fastvideo_order)
    for impl, (base, report, _) in fastvideo_order.items():
        # <pid> replaced, no _rank<r> added, in each ranked worker.
        jsonl = sorted(n for n in os.listdir(base / "acts") if n.endswith(".jsonl"))
        assert jsonl == sorted(f"act_{r['pid']}.jsonl" for r in report.values()), (impl, jsonl)


def test_no_file_appears_that_fastvideo_would_not_write(fastvideo_order):
    all_exit_0(fastvideo_order)
    listed = {impl: generic(files_under(base), report)
              for impl, (base, report, _) in fastvideo_order.items()}
    # The same files in the same folders: the activation files and nothing
    # beside them (no .jsonl.summary.json), each rank's trace and summaries,
    # nothing in the working folder (no regiontrace_config_*, no
    # ./regiontrace_out).
    assert listed["regiontrace"] == listed["fastvideo"]


def test_each_ranked_worker_writes_fastvideos_records(fastvideo_order):
    all_exit_0(fastvideo_order)
    records = {}
    for impl, (base, report, _) in fastvideo_order.items():
        for rank, r in report.items():
            got, _ = read_jsonl(str(base / "acts" / f"act_{r['pid']}.jsonl"))
            records[impl, rank] = got
    for rank in (0, 1):
        ours, theirs = records["regiontrace", rank], records["fastvideo", rank]
        assert [(r["module"], r["tensor"], r["step"]) for r in ours] == [
            (r["module"], r["tensor"], r["step"]) for r in theirs], rank
        assert len(theirs) == 9  # three modules, three steps
        for a, b in zip(ours, theirs):
            assert a["rank"] == rank
            for stat in ("abs_mean", "sum"):
                assert a[stat] == pytest.approx(b[stat], rel=1e-5, abs=1e-6), (rank, a, b)


@pytest.fixture(scope="module")
def unknown_stat(tmp_path_factory):
    return run_both(tmp_path_factory, "unknown_stat", fastvideo_order_settings("abs_mean,median"))


def test_an_unknown_statistic_is_dropped_with_fastvideos_warning(unknown_stat):
    all_exit_0(unknown_stat)
    warning = "FASTVIDEO_TRACE_STATS contains unknown stat 'median'"
    for impl, (base, report, output) in unknown_stat.items():
        # Once per worker, and the run goes on with the statistics that are valid.
        assert output.count(warning) == 2, (impl, output)
        for r in report.values():
            got, _ = read_jsonl(str(base / "acts" / f"act_{r['pid']}.jsonl"))
            assert len(got) == 9, (impl, got)
            for record in got:
                assert "abs_mean" in record and "median" not in record, (impl, record)
