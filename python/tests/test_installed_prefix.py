"""The installed layout: `cmake --install build --prefix P`, then
PYTHONPATH=P/<site dir> finds the package, which loads P's libregiontrace and
P's sinks, even after P was moved; nothing comes from the build tree."""

import os
import shutil
import subprocess

from conftest import clean_env, run_python, read_jsonl, one_file


def test_installed_package_from_a_moved_prefix(tmp_path):
    build = os.environ["RT_TEST_BUILD_DIR"]
    staged = tmp_path / "staged"
    subprocess.run([os.environ["RT_TEST_CMAKE"], "--install", build, "--prefix", str(staged)],
                   check=True, capture_output=True, text=True)
    prefix = tmp_path / "moved"
    shutil.move(str(staged), str(prefix))
    site = prefix / os.environ["RT_TEST_SITE_DIR"]
    assert (site / "regiontrace" / "__init__.py").is_file()

    out = tmp_path / "out"
    env = clean_env(PYTHONPATH=site, REGIONTRACE_SINKS="activation_trace",
                    REGIONTRACE_OUTPUT_DIR=out)
    proc = run_python("""
import torch, regiontrace
with regiontrace.region("installed"):
    regiontrace.observe("x", torch.arange(4.0))
regiontrace.shutdown()
print("package", regiontrace.__file__)
import os
with open("/proc/self/maps") as f:
    paths = {line.split()[-1] for line in f if "/" in line}
# Our files by name: the environment's own folder may be called regiontrace.
for path in sorted(p for p in paths if "regiontrace" in os.path.basename(p)):
    print("mapped", path)
""", env=env, cwd=tmp_path)
    lines = proc.stdout.splitlines()
    package = [l.split(" ", 1)[1] for l in lines if l.startswith("package ")]
    assert package == [str(site / "regiontrace" / "__init__.py")]
    mapped = [l.split(" ", 1)[1] for l in lines if l.startswith("mapped ")]
    assert any(m.endswith("/libregiontrace.so.0.1.0") for m in mapped), mapped
    assert any(m.endswith("regiontrace_sink_activation_trace.so") for m in mapped), mapped
    for m in mapped:
        assert m.startswith(str(prefix) + "/"), f"{m} is not from the installed prefix"
    records, summary = read_jsonl(one_file(str(out / "activations_*.jsonl")))
    assert [(r["module"], r["tensor"], r["sum"]) for r in records] == [("installed", "x", 6.0)]
