"""region (context manager and decorator), steps, init/shutdown, errors."""

import sys

from conftest import clean_env, run_python, trace_records, read_jsonl, one_file

# Every scenario observes a small tensor where it wants to know which region
# is innermost: the record's `module` says so.
PRELUDE = """
import torch, regiontrace
def probe(label):
    regiontrace.observe(label, torch.ones(2))
"""


def by_tensor(records):
    out = {}
    for r in records:
        out.setdefault(r["tensor"], []).append(r)
    return out


def test_context_manager_nests_and_closes(tmp_path, trace_env):
    run_python(PRELUDE + """
with regiontrace.region("outer"):
    probe("a")
    with regiontrace.region("inner") as r:
        assert r.name == "inner"
        probe("b")
    probe("c")
probe("d")
r = regiontrace.region("reused")
with r:
    with r:
        probe("e")
    probe("f")
probe("g")
""", env=trace_env)
    recs = by_tensor(trace_records(tmp_path))
    assert [recs[t][0]["module"] for t in "abcdefg"] == [
        "outer", "inner", "outer", "", "reused", "reused", ""]
    # the statistics are real: two ones
    assert recs["a"][0]["sum"] == 2.0 and recs["a"][0]["numel"] == 2


def test_region_closes_when_the_body_raises(tmp_path, trace_env):
    run_python(PRELUDE + """
with regiontrace.region("outer"):
    try:
        with regiontrace.region("failing"):
            probe("inside")
            raise ValueError("boom")
    except ValueError:
        pass
    probe("after")
""", env=trace_env)
    recs = by_tensor(trace_records(tmp_path))
    assert recs["inside"][0]["module"] == "failing"
    assert recs["after"][0]["module"] == "outer"


def test_decorator_on_functions_methods_and_generators(tmp_path, trace_env):
    run_python(PRELUDE + """
import functools

@regiontrace.region("fn")
def fn(x):
    probe("fn_body")
    return x + 1

class Model:
    @regiontrace.region("method")
    def method(self, x):
        probe("method_body")
        return x * 2

    @classmethod
    @regiontrace.region("cm")
    def cm(cls):
        probe("cm_body")
        return cls.__name__

    @regiontrace.region("sm")
    @staticmethod
    def sm():
        probe("sm_body")
        return "sm"

@regiontrace.region("gen")
def gen(n):
    for i in range(n):
        probe(f"gen_{i}")
        got = yield i
        probe(f"gen_got_{got}")
    return "done"

@regiontrace.region("rec")
def rec(n):
    probe(f"rec_{n}")
    return 0 if n == 0 else 1 + rec(n - 1)

assert fn(1) == 2 and fn.__name__ == "fn"
assert Model().method(3) == 6
assert Model.cm() == "Model"
assert Model.sm() == "sm"
with regiontrace.region("caller"):
    g = gen(2)
    v = next(g)
    probe("caller_between")      # the generator's region is closed while suspended
    v = g.send("x")
    try:
        g.send("y")
        raise AssertionError("no StopIteration")
    except StopIteration as stop:
        assert stop.value == "done"
    g2 = gen(5)
    next(g2)
    g2.close()                   # GeneratorExit reaches the generator inside its region
    probe("caller_end")
assert rec(2) == 2
try:
    @regiontrace.region("async")
    async def coro():
        pass
    raise AssertionError("async accepted")
except TypeError as e:
    assert "async" in str(e)
""", env=trace_env)
    recs = by_tensor(trace_records(tmp_path))
    assert recs["fn_body"][0]["module"] == "fn"
    assert recs["method_body"][0]["module"] == "method"
    assert recs["cm_body"][0]["module"] == "cm"
    assert recs["sm_body"][0]["module"] == "sm"
    for label in ("gen_0", "gen_got_x", "gen_1", "gen_got_y"):
        assert recs[label][0]["module"] == "gen", label
    assert recs["gen_0"][1]["module"] == "gen"          # g2's first resumption
    assert recs["caller_between"][0]["module"] == "caller"
    assert recs["caller_end"][0]["module"] == "caller"
    assert [recs[f"rec_{n}"][0]["module"] for n in (2, 1, 0)] == ["rec"] * 3


def test_steps(tmp_path, trace_env):
    run_python(PRELUDE + """
assert regiontrace.current_step() is None
# observe() alone starts nothing, as in C++: the first region does
regiontrace.region("start").__enter__()
probe("nostep")
assert regiontrace.step() == 0
probe("s0")
assert regiontrace.step() == 1
probe("s1")
regiontrace.set_step(7)
assert regiontrace.current_step() == 7
probe("s7")
""", env=trace_env)
    recs = by_tensor(trace_records(tmp_path))
    assert recs["nostep"][0]["step"] is None and recs["nostep"][0]["module"] == "start"
    assert [recs[t][0]["step"] for t in ("s0", "s1", "s7")] == [0, 1, 7]


def test_init_keywords_and_shutdown(tmp_path):
    out = tmp_path / "out"
    run_python(PRELUDE + f"""
assert not regiontrace.enabled()
regiontrace.init(sinks=["activation_trace"], output_dir={str(out)!r},
                 sinks__activation_trace__stats=["abs_mean", "max"],
                 values={{"sinks.activation_trace.regions": "kep*"}})
assert regiontrace.enabled()
with regiontrace.region("kept"):
    probe("in_kept")
with regiontrace.region("other"):
    probe("in_other")
regiontrace.shutdown()
regiontrace.shutdown()           # idempotent
assert not regiontrace.enabled()
""", env=clean_env())
    records, summary = read_jsonl(one_file(str(out / "activations_*.jsonl")))
    assert summary == {"records": 1, "dropped": 0, "rank": 0}
    (rec,) = records
    assert rec["module"] == "kept" and rec["tensor"] == "in_kept"
    # exactly the statistics asked for, in that order
    assert [k for k in rec if k in ("abs_mean", "max", "sum", "min")] == ["abs_mean", "max"]


def test_profiles_and_errors(tmp_path):
    profile = tmp_path / "p.yaml"
    out = tmp_path / "out"
    profile.write_text(f"output_dir: {out}\nsinks:\n  activation_trace:\n    stats: [sum]\n")
    run_python(PRELUDE + f"""
try:
    regiontrace.init(profiles=[{str(tmp_path / 'missing.yaml')!r}])
    raise AssertionError("no error")
except regiontrace.Error as e:
    assert "missing.yaml" in str(e), str(e)
assert isinstance(regiontrace.Error("x"), RuntimeError)
regiontrace.init({str(profile)!r})
with regiontrace.region("r"):
    probe("x")
""", env=clean_env())
    records, _ = read_jsonl(one_file(str(out / "activations_*.jsonl")))
    assert [(r["module"], r["sum"]) for r in records] == [("r", 2.0)]
    assert "abs_mean" not in records[0]


def test_nothing_configured_writes_nothing(tmp_path):
    proc = run_python(PRELUDE + """
import regiontrace._regiontrace as m
with regiontrace.region("a"):
    probe("x")
    regiontrace.mark("m")
    regiontrace.snapshot("s")
assert not regiontrace.enabled()
assert not regiontrace.tensors_wanted()
print("ok")
""", env=clean_env(), cwd=tmp_path)
    assert proc.stdout.strip() == "ok"
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())


def test_region_argument_errors():
    proc = run_python("""
import regiontrace
for args in [(), (1,), ("a", "b")]:
    try:
        regiontrace.region(*args)
        raise AssertionError(args)
    except TypeError:
        pass
try:
    regiontrace.region("x").__exit__(None, None, None)
    raise AssertionError("exit without enter")
except RuntimeError:
    pass
print(repr(regiontrace.region("abc")))
""")
    assert proc.stdout.strip() == "regiontrace.region('abc')"


def test_memory_snapshot_sees_paths_exceptions_threads_and_snapshots(tmp_path):
    """Another sink on the same marks: region paths, exits by exception,
    per-thread stacks and snapshot() requests all reach it from Python."""
    import json
    env = clean_env(REGIONTRACE_SINKS="memory_snapshot", REGIONTRACE_OUTPUT_DIR=tmp_path)
    run_python("""
import threading, regiontrace
def worker(name):
    with regiontrace.region(name):
        with regiontrace.region("leaf"):
            pass
with regiontrace.region("outer"):
    threads = [threading.Thread(target=worker, args=(f"thread{i}",)) for i in range(2)]
    for t in threads: t.start()
    for t in threads: t.join()
    try:
        with regiontrace.region("failing"):
            raise KeyError("x")
    except KeyError:
        pass
    regiontrace.set_step(3)
    regiontrace.snapshot("from python")
""", env=env)
    with open(one_file(str(tmp_path / "memory_rank0_pid*.jsonl"))) as f:
        records = [json.loads(line) for line in f]
    paths = {(r["path"], r["unwinding"]) for r in records if "path" in r}
    # thread stacks start empty: a worker's regions are not under "outer"
    assert {("thread0/leaf", False), ("thread1/leaf", False), ("thread0", False),
            ("thread1", False), ("outer/failing", True), ("outer", False)} <= paths, paths
    assert not any(p.startswith("outer/thread") for p, _ in paths), paths
    with open(one_file(str(tmp_path / "memory_summary_rank0_pid*.json"))) as f:
        summary = json.load(f)
    written = summary["snapshots"]["written"]
    assert any(s["trigger"] == "request" and "from python" in s["reason"] and s["step"] == 3
               for s in written), written


def test_ctrl_c_flushes_and_python_still_gets_keyboardinterrupt(tmp_path, trace_env):
    """SIGINT: the core flushes and closes the sinks, then hands the signal to
    the handler it replaced, here Python's: the program sees KeyboardInterrupt
    as without regiontrace, and the file is complete."""
    proc = run_python(PRELUDE + """
import os, signal, time
with regiontrace.region("before_ctrl_c"):
    probe("x")
try:
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(500):
        time.sleep(0.01)
    print("no KeyboardInterrupt")
except KeyboardInterrupt:
    print("KeyboardInterrupt")
print("enabled after", regiontrace.enabled())
""", env=trace_env)
    assert proc.stdout.split("\n")[:2] == ["KeyboardInterrupt", "enabled after False"], proc.stdout
    records = trace_records(tmp_path)  # summary line present: closed by the handler
    assert [(r["module"], r["tensor"]) for r in records] == [("before_ctrl_c", "x")]


def test_a_later_session_keeps_the_first_sessions_files(tmp_path):
    """init() after shutdown() writes every sink's files under other names
    (`<stem>_1_rank0_pid<p>`), so the first session's files stay as written."""
    import gzip
    import os
    out = tmp_path / "out"
    sinks = ["timeline", "region_stats", "memory_snapshot", "activation_trace", "torch_profiler"]
    proc = run_python(PRELUDE + f"""
import os
for session, name in enumerate(["first_session", "second_session"]):
    regiontrace.init(sinks={sinks!r}, output_dir={str(out)!r},
                     values={{"sinks.region_stats.table": "file"}})
    for _ in range(3):
        with regiontrace.region(name):
            probe(name)
            torch.ones(4).sin()
    regiontrace.shutdown()
print(os.getpid())
""", env=clean_env())
    pid = proc.stdout.split()[-1]
    stems = ["timeline", "region_stats", "memory", "activations", "torch_trace",
             "regiontrace_config"]

    def text(path):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            return f.read()

    # The folder and its subfolders: the op summaries are in summaries/,
    # the configuration snapshots in regiontrace_config/.
    paths = {f: os.path.join(root, f) for root, _, files in os.walk(out) for f in files}
    names = sorted(paths)
    for stem in stems:
        first = [n for n in names if n.startswith(f"{stem}_rank0_pid{pid}")]
        later = [n for n in names if n.startswith(f"{stem}_1_rank0_pid{pid}")]
        assert first and later, f"{stem}: first session {first}, second {later}; all: {names}"
        for n in first + later:
            if n.endswith((".txt", ".json", ".jsonl", ".gz")) and stem != "regiontrace_config":
                body = text(paths[n])
                mine, other = ("first", "second") if n in first else ("second", "first")
                assert f"{mine}_session" in body, f"{n} lacks {mine}_session"
                assert f"{other}_session" not in body, f"{n} holds {other}_session"
