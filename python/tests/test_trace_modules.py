"""trace_modules(): regions named by named_modules(), outputs observed as `out`."""

from conftest import run_python, trace_records

MODEL = """
import torch, regiontrace
from torch import nn

class Block(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.i = i
    def forward(self, x):
        return torch.tanh(self.fc(x))

class Pair(nn.Module):
    def forward(self, x):
        return x, {"scale": x * 2, "skip": None}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(i) for i in range(4)])
        self.head = Pair()
    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)

torch.manual_seed(0)
net = Net()
x = torch.randn(3, 4)
"""


def test_blocks_and_nested_outputs(tmp_path, trace_env):
    run_python(MODEL + """
handle = regiontrace.trace_modules(net, layers=r"^(blocks\\.\\d+|head)$")
assert handle.names == ["blocks.0", "blocks.1", "blocks.2", "blocks.3", "head"], handle.names
with torch.no_grad():
    for step in range(2):
        regiontrace.set_step(step)
        y, extra = net(x)
torch.save({"y": y, "scale": extra["scale"]}, %r)
handle.remove()
assert "forward" not in net.blocks[0].__dict__
regiontrace.set_step(5)
net(x)                                     # removed: no records
""" % str(tmp_path / "y.pt"), env=trace_env)
    import torch
    saved = torch.load(tmp_path / "y.pt")
    records = trace_records(tmp_path)
    keys = [(r["step"], r["module"], r["tensor"]) for r in records]
    expected = []
    for step in (0, 1):
        expected += [(step, f"blocks.{i}", "out") for i in range(4)]
        expected += [(step, "head", "out[0]"), (step, "head", "out[1].scale")]
    assert keys == expected
    last = [r for r in records if r["step"] == 1]
    assert abs(last[4]["sum"] - saved["y"].double().sum().item()) < 1e-9
    assert abs(last[5]["sum"] - saved["scale"].double().sum().item()) < 1e-9


def test_all_modules_root_and_prefix(tmp_path, trace_env):
    run_python(MODEL + """
with regiontrace.trace_modules(net.blocks[0], prefix="transformer") as h:
    assert h.names == ["transformer", "transformer.fc"], h.names
    net.blocks[0](x)
h = regiontrace.trace_modules(net.blocks[1])
assert h.names == ["model", "fc"], h.names
net.blocks[1](x)
""", env=trace_env)
    got = [(r["module"], r["tensor"]) for r in trace_records(tmp_path)]
    # inner modules finish first
    assert got == [("transformer.fc", "out"), ("transformer", "out"), ("fc", "out"),
                   ("model", "out")]


def test_forward_that_raises_closes_its_region(tmp_path, trace_env):
    run_python(MODEL + """
class Bad(nn.Module):
    def forward(self, x):
        regiontrace.observe("before_raise", x)
        raise RuntimeError("bad")
bad = Bad()
regiontrace.trace_modules(bad, prefix="bad")
with regiontrace.region("outer"):
    try:
        bad(x)
    except RuntimeError:
        pass
    regiontrace.observe("after", x)
""", env=trace_env)
    got = [(r["module"], r["tensor"]) for r in trace_records(tmp_path)]
    assert got == [("bad", "before_raise"), ("outer", "after")]
