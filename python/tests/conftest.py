"""Helpers for the Python package's tests: run a scenario in a child
interpreter (regiontrace's configuration is per process) and read what the
sinks wrote."""

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                "tests", "support"))
import trace_nesting  # noqa: E402

# Every trace a test leaves in its tmp_path must nest (trace_nesting.py).
traces_in_tmp_path_nest = trace_nesting.autouse_fixture()


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_nesting_violations: the test writes a trace "
                            "that breaks the nesting rule on purpose")

# Nothing from the caller's environment may configure regiontrace here.
_CONFIG_PREFIXES = ("REGIONTRACE_", "FASTVIDEO_")


def regiontrace_cli():
    """The `regiontrace` program under test: the build tree's (RT_TEST_BUILD_DIR),
    or, against an installed package, the console script on PATH."""
    build = os.environ.get("RT_TEST_BUILD_DIR")
    if build:
        return os.path.join(build, "bin", "regiontrace")
    found = shutil.which("regiontrace")
    assert found, "no RT_TEST_BUILD_DIR and no `regiontrace` on PATH"
    return found


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CONFIG_PREFIXES)}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_python(code, env=None, cwd=None, check=True, timeout=300):
    """Runs `code` (dedented) in a fresh interpreter; returns CompletedProcess."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          env=env if env is not None else clean_env(), cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"child exited {proc.returncode}\nstdout:\n{proc.stdout}\n"
                             f"stderr:\n{proc.stderr}")
    return proc


def read_jsonl(path):
    """Returns (records, summary) of an activation-trace file; every line must parse."""
    records, summary = [], None
    with open(path) as f:
        for line in f:
            obj = json.loads(line)
            if "summary" in obj:
                assert summary is None, f"two summary lines in {path}"
                summary = obj["summary"]
            else:
                assert summary is None, f"record after the summary line in {path}"
                records.append(obj)
    # With `summary: file` the JSONL holds records only and the summary has
    # its own file; with the seed's FASTVIDEO_TRACE_OUTPUT there is none.
    side = path + ".summary.json"
    if os.path.exists(side):
        assert summary is None, f"a summary line in {path} and {side}"
        with open(side) as f:
            summary = json.load(f)["summary"]
    return records, summary


def one_file(pattern):
    files = sorted(glob.glob(pattern))
    assert len(files) == 1, f"expected one file for {pattern}, found {files}"
    return files[0]


@pytest.fixture
def trace_env(tmp_path):
    """Environment for a child whose activation_trace sink writes into tmp_path."""
    return clean_env(REGIONTRACE_SINKS="activation_trace", REGIONTRACE_OUTPUT_DIR=tmp_path,
                     REGIONTRACE_ACTIVATION_TRACE_STATS="abs_mean,sum,min,max,mean,std,numel,shape,dtype")


def trace_records(tmp_path):
    records, summary = read_jsonl(one_file(str(tmp_path / "activations_*.jsonl")))
    assert summary is not None, "file closed without its summary line"
    assert summary["records"] == len(records)
    return records
