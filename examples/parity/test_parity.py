"""End to end: the Python reference and its C++ port, the same profile (or
the seed's variables) on both sides, then `regiontrace diff`.

Explicit tolerances (--rtol 1e-5 --atol 1e-6): both sides run the same
libtorch kernels in fp32 with one thread, so the faithful port agrees far
tighter than that (bit for bit here), whatever the diff's default
tolerances."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PORT = os.environ["PARITY_PORT"]
CLI = os.environ["REGIONTRACE_CLI"]
PROFILE = os.environ["PARITY_PROFILE"]
TOLERANCE = ["--rtol", "1e-5", "--atol", "1e-6"]
# 3 steps x (embed, temb, blocks.0-3, head, latents)
RECORDS = 3 * 8


def env_for(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REGIONTRACE_", "FASTVIDEO_"))}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(cmd, env, expect=0):
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == expect, f"{cmd} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def records_of(folder):
    files = [f for f in os.listdir(folder) if f.endswith(".jsonl")]
    assert len(files) == 1, files
    path = os.path.join(folder, files[0])
    lines = [json.loads(l) for l in open(path)]
    if "summary" in lines[-1]:
        return path, lines[:-1]
    # The seed's variables: records only in the JSONL, and nothing beside it.
    assert all("module" in l for l in lines), path
    assert not os.path.exists(path + ".summary.json"), path
    return path, lines


def diff(a, b, expect):
    proc = run([CLI, "diff", "--json", *TOLERANCE, a, b], env_for(), expect=expect)
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity")
    weights = root / "weights.safetensors"
    run([sys.executable, os.path.join(HERE, "reference.py"), "--weights", str(weights)],
        env_for(REGIONTRACE_CONFIG=PROFILE, REGIONTRACE_OUTPUT_DIR=root / "ref"))
    return root, weights, records_of(root / "ref")


def port(root, weights, name, *extra, **env):
    env = env or {"REGIONTRACE_CONFIG": PROFILE, "REGIONTRACE_OUTPUT_DIR": root / name}
    run([PORT, "--weights", str(weights), *extra], env_for(**env))
    return records_of(root / name)


def key(r):
    return (r["step"], r["module"], r["tensor"])


def test_faithful_port_matches(reference):
    root, weights, (ref_path, ref) = reference
    port_path, got = port(root, weights, "port")
    assert len(ref) == len(got) == RECORDS
    # same records in the same execution order, module names as named_modules() spells them
    assert [key(r) for r in got] == [key(r) for r in ref]
    assert {r["module"] for r in ref} >= {"embed", "temb", "head"} | {f"blocks.{i}" for i in range(4)}
    for a, b in zip(got, ref):
        for stat in ("abs_mean", "mean", "std", "min", "max", "sum"):
            assert a[stat] == pytest.approx(b[stat], rel=1e-6, abs=1e-7), (key(a), stat)
    report = diff(port_path, ref_path, expect=0)
    assert report["equal"] is True
    assert report["totals"]["matched_records"] == RECORDS
    assert report["totals"]["divergent_records"] == 0


@pytest.mark.parametrize("block", [1, 3])
def test_port_with_one_block_off_names_that_block(reference, block):
    root, weights, (ref_path, ref) = reference
    bad_path, bad = port(root, weights, f"bad{block}", "--perturb-block", str(block))
    # everything before the perturbed block at step 0 is untouched
    first_bad = next(i for i, r in enumerate(bad) if r["module"] == f"blocks.{block}")
    for a, b in zip(bad[:first_bad], ref[:first_bad]):
        assert a["sum"] == pytest.approx(b["sum"], rel=1e-6, abs=1e-7), key(a)
    report = diff(bad_path, ref_path, expect=1)
    assert report["equal"] is False
    first = report["first_divergence"]
    assert (first["module"], first["tensor"], first["step"]) == (f"blocks.{block}", "out", 0)


def test_seed_variables_on_both_sides(reference, tmp_path):
    root, weights, _ = reference
    seed = dict(FASTVIDEO_TRACE_ACTIVATIONS="1", FASTVIDEO_TRACE_LAYERS=r"blocks\.",
                FASTVIDEO_TRACE_STATS="abs_mean,sum,std")
    run([sys.executable, os.path.join(HERE, "reference.py"), "--weights", str(tmp_path / "w")],
        env_for(FASTVIDEO_TRACE_OUTPUT=tmp_path / "ref" / "acts_<pid>.jsonl", **seed))
    run([PORT, "--weights", str(tmp_path / "w")],
        env_for(FASTVIDEO_TRACE_OUTPUT=tmp_path / "port" / "acts_<pid>.jsonl", **seed))
    ref_path, ref = records_of(tmp_path / "ref")
    port_path, got = records_of(tmp_path / "port")
    assert [key(r) for r in got] == [key(r) for r in ref]
    assert sorted({r["module"] for r in ref}) == [f"blocks.{i}" for i in range(4)]
    assert len(ref) == 3 * 4
    assert all([k for k in r if k in ("abs_mean", "sum", "std", "mean")] == ["abs_mean", "sum", "std"]
               for r in ref + got)
    assert diff(port_path, ref_path, expect=0)["totals"]["matched_records"] == 12
