"""The Python nesting check on hand-written traces, and its pytest fixture on
a violating trace left in tmp_path."""

import gzip
import json
import os
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_nesting  # noqa: E402

ISSUE_TRACE = {"traceEvents": [
    {"ph": "X", "name": "aten::_to_copy", "pid": 7, "tid": 11, "ts": 799.895, "dur": 16},
    {"ph": "X", "name": "aten::copy_", "pid": 7, "tid": 11, "ts": 813.895, "dur": 3},
]}


def x(name, ts, dur, tid=11, pid=7):
    return {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


def test_finds_the_issues_child_that_ends_after_its_parent():
    found = trace_nesting.violations(ISSUE_TRACE)
    assert len(found) == 1
    assert "pid 7 tid 11" in found[0]
    assert '"aten::copy_" [813.895, 816.895]' in found[0]
    assert '"aten::_to_copy" [799.895, 815.895]' in found[0]


def test_accepts_nested_touching_equal_and_other_tracks():
    trace = {"traceEvents": [
        x("outer", 0, 100), x("a", 0, 40), x("a.1", 10.5, 29.5), x("b", 40, 60),
        x("empty", 100, 0), x("same", 200, 5), x("same", 200, 5), x("later", 205, 1),
        x("other tid", 50, 100, tid=12), x("other pid", 50, 100, pid=8),
        x("p", 0.1, 0.2, tid=13), x("c", 0.2, 0.1, tid=13),
        {"ph": "i", "name": "mark", "pid": 7, "tid": 11, "ts": 30, "s": "t"},
    ]}
    assert trace_nesting.violations(trace) == []


def test_one_nanosecond_past_the_end_and_negative_durations_are_violations():
    assert len(trace_nesting.violations({"traceEvents": [x("p", 0.1, 0.2), x("c", 0.2, 0.101)]})) == 1
    assert "negative dur" in trace_nesting.violations({"traceEvents": [x("n", 5, -1)]})[0]


def test_files_gzip_and_not_traces(tmp_path):
    (tmp_path / "plain.json").write_text(json.dumps(ISSUE_TRACE))
    with gzip.open(tmp_path / "packed.json.gz", "wt") as f:
        json.dump(ISSUE_TRACE, f)
    (tmp_path / "broken.json").write_text('{"traceEvents":[')
    (tmp_path / "records.json").write_text('{"summary": {}}')
    assert trace_nesting.check_file(tmp_path / "broken.json") is None
    assert trace_nesting.check_file(tmp_path / "records.json") is None
    bad = trace_nesting.check_folder(tmp_path)
    assert sorted(os.path.basename(p) for p in bad) == ["packed.json.gz", "plain.json"]
    assert "plain.json: 1 slice(s) break the nesting rule" in trace_nesting.describe(bad)
    for name in ("plain.json", "packed.json.gz"):
        os.remove(tmp_path / name)  # this test's own fixture checks tmp_path too


def test_the_fixture_fails_a_test_that_leaves_a_violating_trace(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
        import trace_nesting
        traces_in_tmp_path_nest = trace_nesting.autouse_fixture()
        def pytest_configure(config):
            config.addinivalue_line("markers", "allow_nesting_violations: on purpose")
    """))
    (suite / "test_leaves_trace.py").write_text(textwrap.dedent(f"""
        import json, pytest
        TRACE = {json.dumps(ISSUE_TRACE)!r}
        def test_bad(tmp_path):
            (tmp_path / "t.json").write_text(TRACE)
        @pytest.mark.allow_nesting_violations
        def test_bad_on_purpose(tmp_path):
            (tmp_path / "t.json").write_text(TRACE)
        def test_good(tmp_path):
            (tmp_path / "t.json").write_text('{{"traceEvents": []}}')
    """))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--basetemp", str(tmp_path / "base"), str(suite)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "3 passed, 1 error" in proc.stdout, proc.stdout  # the error: at teardown
    assert "ERROR at teardown of test_bad" in proc.stdout, proc.stdout
    assert '"aten::copy_" [813.895, 816.895]' in proc.stdout, proc.stdout
