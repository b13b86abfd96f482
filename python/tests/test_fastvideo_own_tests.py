"""FastVideo's own CPU tests of its profiler and activation-trace modules, run
against regiontrace.fastvideo the way a FastVideo developer would switch: the
test files come from the FastVideo 0.2.1 wheel (scripts/install_deps.sh
installs it without its dependencies, as a source of tests, never imported),
and every `from fastvideo.<module> import ...` in them, the child programs'
included, becomes `from regiontrace.fastvideo import *`."""

import importlib.util
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from conftest import clean_env

# The files, and the tests in them (FastVideo 0.2.1).
_SUITES = {
    "tests/contract/test_profiler_regions.py": 6,
    "tests/hooks/test_activation_trace.py": 6,
}
# `from fastvideo.x import a, b` or `(a,\n b,\n)`, also inside the strings
# that hold child programs (where a "\n" escape may follow the names).
_IMPORT = re.compile(r"from fastvideo(?:\.\w+)+ import (?:\([^)]*\)|[\w, *]+)")


def _fastvideo_root():
    spec = importlib.util.find_spec("fastvideo")  # finds it without importing it
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("FastVideo 0.2.1 is not installed (scripts/install_deps.sh installs it)")
    return list(spec.submodule_search_locations)[0]


def _switched(source):
    return _IMPORT.sub("from regiontrace.fastvideo import *", source)


@pytest.mark.parametrize("suite", sorted(_SUITES))
def test_fastvideos_own_tests_pass_on_regiontrace(tmp_path, suite):
    with open(os.path.join(_fastvideo_root(), suite)) as f:
        source = f.read()
    switched = _switched(source)
    assert not re.search(r"^\s*(from|import) fastvideo", switched, re.M), "FastVideo still imported"
    test_file = tmp_path / os.path.basename(suite)
    test_file.write_text(switched)
    report = tmp_path / "report.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
         f"--basetemp={tmp_path / 'tmp'}", f"--junitxml={report}", str(test_file)],
        env=clean_env(), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert report.exists(), proc.stdout[-6000:] + proc.stderr[-3000:]
    outcomes = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        outcomes[case.get("name")] = "failed" if failed else (
            "skipped" if case.find("skipped") is not None else "passed")
    assert len(outcomes) == _SUITES[suite], outcomes
    assert outcomes == {name: "passed" for name in outcomes}, proc.stdout[-8000:]
