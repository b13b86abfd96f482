"""FastVideo's entry points with the seed's FASTVIDEO_TRACE_* variables."""

import os
import subprocess

from conftest import clean_env, regiontrace_cli, run_python, read_jsonl, one_file

SCRIPT = """
import os, torch, regiontrace
from torch import nn
from regiontrace import attach_activation_trace, detach_activation_trace, trace_step

class DiT(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x

torch.manual_seed(0)
model = DiT()
mgr = attach_activation_trace(model)
print("mgr", None if mgr is None else mgr.layers)
x = torch.randn(2, 8)
with torch.no_grad():
    for i in range(4):
        with trace_step(i) as s:
            assert s == i
            x = model(x)
detach_activation_trace(mgr)
detach_activation_trace(None)
assert "forward" not in model.blocks[0].__dict__
regiontrace.set_step(2)
model(x)                                    # detached: nothing more
print("pid", os.getpid())
"""


def test_without_the_variable_nothing_is_traced(tmp_path):
    proc = run_python(SCRIPT, env=clean_env(FASTVIDEO_TRACE_OUTPUT=tmp_path / "a_<pid>.jsonl"),
                      cwd=tmp_path)
    assert "mgr None" in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_seed_variables_select_layers_stats_steps_and_file(tmp_path):
    env = clean_env(FASTVIDEO_TRACE_ACTIVATIONS="1",
                    FASTVIDEO_TRACE_OUTPUT=str(tmp_path / "acts_<pid>.jsonl"),
                    FASTVIDEO_TRACE_LAYERS=r"blocks\.(0|2)$",
                    FASTVIDEO_TRACE_STATS="abs_mean,sum,max",
                    FASTVIDEO_TRACE_STEPS="1-2")
    proc = run_python(SCRIPT, env=env, cwd=tmp_path)
    assert "mgr ['blocks.0', 'blocks.2']" in proc.stdout
    pid = proc.stdout.split("pid")[-1].strip()
    path = one_file(str(tmp_path / "acts_*.jsonl"))
    assert os.path.basename(path) == f"acts_{pid}.jsonl"
    # Nothing beside it, as FastVideo writes it (docs/parity.md): no
    # summary file, no ./regiontrace_out in the working folder.
    assert sorted(os.listdir(tmp_path)) == [f"acts_{pid}.jsonl"]
    records, summary = read_jsonl(path)
    assert summary is None
    assert [(r["step"], r["module"], r["tensor"]) for r in records] == [
        (1, "blocks.0", "out"), (1, "blocks.2", "out"), (2, "blocks.0", "out"),
        (2, "blocks.2", "out")]
    for r in records:
        stats = [k for k in r if k not in ("v", "module", "tensor", "step", "rank", "seq")]
        assert stats == ["abs_mean", "sum", "max"], r
        assert r["abs_mean"] > 0
    # The offline reader takes the file: identical runs do not diverge.
    diff = subprocess.run([regiontrace_cli(), "diff", path, path], capture_output=True, text=True)
    assert diff.returncode == 0, diff.stdout + diff.stderr
    assert "4" in diff.stdout, diff.stdout


def test_seed_output_name_is_kept_exactly_in_a_ranked_worker(tmp_path):
    """FASTVIDEO_TRACE_OUTPUT=<dir>/act_<pid>.jsonl in a worker with RANK set
    writes that very name, as FastVideo does (it used to get _rank<r>)."""
    env = clean_env(FASTVIDEO_TRACE_ACTIVATIONS="1",
                    FASTVIDEO_TRACE_OUTPUT=str(tmp_path / "act_<pid>.jsonl"),
                    RANK="1", WORLD_SIZE="2", LOCAL_RANK="1")
    proc = run_python(SCRIPT, env=env, cwd=tmp_path)
    pid = proc.stdout.split("pid")[-1].strip()
    assert sorted(os.listdir(tmp_path)) == [f"act_{pid}.jsonl"]
    records, _ = read_jsonl(str(tmp_path / f"act_{pid}.jsonl"))
    assert records and {r["rank"] for r in records} == {1}


# --- FastVideo's behaviours, as its modules have them -------------------------

REATTACH = """
import json, os, torch, regiontrace
from torch import nn
from regiontrace.fastvideo import *

class Toy(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    def forward(self, x):
        return self.block(x)

def lines(path):
    with open(path) as f:
        return [json.loads(l) for l in f]

model = Toy()
os.environ["FASTVIDEO_TRACE_ACTIVATIONS"] = "1"
os.environ["FASTVIDEO_TRACE_LAYERS"] = ""          # every named submodule, not the root
for n, name in enumerate(["first.jsonl", "second.jsonl"]):
    os.environ["FASTVIDEO_TRACE_OUTPUT"] = os.path.join(os.getcwd(), name)
    os.environ["FASTVIDEO_TRACE_STATS"] = "abs_mean,bogus" if n == 0 else "sum,shape"
    mgr = attach_activation_trace(model)
    assert ModuleHookManager.get_from(model.block[0]) is not None
    assert ModuleHookManager.get_from(model) is None
    with trace_step(5):
        with trace_step(7):
            model(torch.ones(1, 2))
        assert current_step_idx() == 5            # the outer step again
    assert current_step_idx() is None             # none before the block, none after
    detach_activation_trace(mgr)                  # every record written when it returns
    assert ModuleHookManager.get_from(model.block[0]) is None
    got = lines(name)
    print(name, [(r["module"], r["step"]) for r in got], sorted(set(got[-1]) - {"v", "rank", "seq"}))
os.environ["FASTVIDEO_TRACE_STATS"] = "bogus"
print("none", attach_activation_trace(model), attach_activation_trace(None))
"""


def test_each_attach_reads_the_variables_and_detach_leaves_every_record_written(tmp_path):
    # An existing file is added to, as FastVideo opens it with "a".
    (tmp_path / "first.jsonl").write_text('{"module": "before", "step": null}\n')
    proc = run_python(REATTACH, env=clean_env(), cwd=tmp_path)
    expected_modules = [("block.0", 7), ("block.1", 7), ("block", 7)]
    assert (f"first.jsonl {[('before', None)] + expected_modules} "
            "['abs_mean', 'module', 'step', 'tensor']"
            in proc.stdout), proc.stdout + proc.stderr
    assert (f"second.jsonl {expected_modules} ['module', 'shape', 'step', 'sum', 'tensor']"
            in proc.stdout), proc.stdout + proc.stderr
    # FastVideo's warnings, and no trace when no statistic is valid.
    assert proc.stderr.count("FASTVIDEO_TRACE_STATS contains unknown stat 'bogus'") == 2
    assert "FASTVIDEO_TRACE_STATS yielded no valid stats; trace disabled." in proc.stderr
    assert "none None None" in proc.stdout


THREAD_STEPS = """
import json, os, threading, torch, regiontrace
from torch import nn
from regiontrace.fastvideo import *

model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
os.environ["FASTVIDEO_TRACE_ACTIVATIONS"] = "1"
os.environ["FASTVIDEO_TRACE_LAYERS"] = ""
os.environ["FASTVIDEO_TRACE_STEPS"] = "1,3"
os.environ["FASTVIDEO_TRACE_OUTPUT"] = os.path.join(os.getcwd(), "steps.jsonl")
mgr = attach_activation_trace(model)
both_inside = threading.Barrier(2)
seen = {}

def worker(step, name):
    with torch.no_grad(), trace_step(step):
        both_inside.wait()                 # the two steps are set at once
        model(torch.ones(1, 2))
        seen[name] = current_step_idx()
        both_inside.wait()

threads = [threading.Thread(target=worker, args=(1, "a")),
           threading.Thread(target=worker, args=(3, "b"))]
for t in threads:
    t.start()
with trace_step(2):                         # the main thread's own step: not kept
    for t in threads:
        t.join()
    model(torch.ones(1, 2))
    main_step = current_step_idx()
detach_activation_trace(mgr)
with open("steps.jsonl") as f:
    steps = sorted(json.loads(l)["step"] for l in f)
print("seen", seen["a"], seen["b"], main_step, current_step_idx(), regiontrace.current_step())
print("steps", steps)
"""


def test_trace_step_is_each_threads_own(tmp_path):
    # FastVideo keeps the step in a thread-local: two threads tracing at once
    # write their own steps, and the process's step (regions, the profiler's
    # step spans) is not touched.
    proc = run_python(THREAD_STEPS, env=clean_env(), cwd=tmp_path)
    assert "seen 1 3 2 None None" in proc.stdout, proc.stdout + proc.stderr
    # Each pass writes 0 (Linear) and 1 (ReLU): steps 1 and 3 kept, 2 filtered.
    assert "steps [1, 1, 3, 3]" in proc.stdout, proc.stdout + proc.stderr


PROFILER_API = """
import os, torch
from regiontrace.fastvideo import *

names = [r.name for r in list_profiler_regions()]
print("regions", len(names), names == sorted(names))
print("short", resolve_profiler_region("training_train").name)
try:
    register_profiler_region("profiler_region_model_loading", "again")
except ValueError as e:
    print("twice", e)
try:
    TorchProfilerConfig.from_env()
except ValueError as e:
    print("empty", str(e)[:60])
os.environ["FASTVIDEO_TORCH_PROFILE_REGIONS"] = "model_loading,not_a_region"
print("config", TorchProfilerConfig.from_env().regions)
off = get_or_create_profiler(None)
print("off", off.has_profiler, off.is_enabled, get_global_controller())
with profiler_region("model_loading"):
    pass

class Stage:
    profiler_controller = None
    @profile_region("model_loading")
    def run(self, x):
        return x + 1
print("decorated", Stage().run(1))
"""


def test_the_profiler_registry_config_and_helpers_follow_fastvideo(tmp_path):
    proc = run_python(PROFILER_API, env=clean_env(), cwd=tmp_path)
    out = proc.stdout
    # The seed's 15 regions and the 3 FastVideo's code adds.
    assert "regions 18 True" in out, out
    assert "short profiler_region_training_train" in out, out
    assert "twice Profiler region 'profiler_region_model_loading' is already registered" in out
    assert "empty FASTVIDEO_TORCH_PROFILE_REGIONS must list at least one regio" in out
    assert "config {'profiler_region_model_loading': True}" in out, out
    assert "Unknown profiler region 'not_a_region'; available regions: " in proc.stderr
    assert "off False False None" in out, out
    assert "decorated 2" in out
    assert not list(tmp_path.iterdir()), "nothing is written without a profiler"
