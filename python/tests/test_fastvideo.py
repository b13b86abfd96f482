"""FastVideo's entry points with the seed's FASTVIDEO_TRACE_* variables."""

import os
import subprocess

from conftest import clean_env, run_python, read_jsonl, one_file

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
    records, summary = read_jsonl(path)
    assert summary["records"] == 4 and summary["dropped"] == 0
    assert [(r["step"], r["module"], r["tensor"]) for r in records] == [
        (1, "blocks.0", "out"), (1, "blocks.2", "out"), (2, "blocks.0", "out"),
        (2, "blocks.2", "out")]
    for r in records:
        stats = [k for k in r if k not in ("v", "module", "tensor", "step", "rank", "seq")]
        assert stats == ["abs_mean", "sum", "max"], r
        assert r["abs_mean"] > 0
    # The offline reader takes the file: identical runs do not diverge.
    cli = os.path.join(os.environ["RT_TEST_BUILD_DIR"], "bin", "regiontrace")
    diff = subprocess.run([cli, "diff", path, path], capture_output=True, text=True)
    assert diff.returncode == 0, diff.stdout + diff.stderr
    assert "4" in diff.stdout, diff.stdout
