"""The nesting rule of Chrome/Perfetto traces, for the Python suites: on one
(pid, tid), two complete slices ("ph": "X") either nest or do not overlap, in
the microseconds as written (compared to the nanosecond). The same check as
tests/support/trace_nesting_check.cpp, which TempDir runs for the C++ suites.

`autouse_fixture()` (bound to a name in the suites' conftest.py) applies it
to every trace a test leaves in its tmp_path, so each test that makes a trace
checks it without asking."""

import gzip
import json
import os
from decimal import Decimal

MAX_LISTED = 20


def _ns(value):
    # Decimal from the number's text: 0.1 + 0.2 is 0.3 here, as written.
    return int((Decimal(str(value)) * 1000).to_integral_value())


def _text(event, start, end):
    def us(ns):
        return str(Decimal(ns) / 1000).rstrip("0").rstrip(".") if ns % 1000 else str(ns // 1000)
    return f'"{event.get("name", "(no name)")}" [{us(start)}, {us(end)}]'


def violations(trace):
    """Every violation in a parsed trace (the object form), as text; None if
    `trace` is not a Chrome trace."""
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return None
    found = []
    tracks = {}
    for index, e in enumerate(trace["traceEvents"]):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool):
            continue
        start = _ns(ts)
        dur = e.get("dur", 0)
        dur = _ns(dur) if isinstance(dur, (int, float)) and not isinstance(dur, bool) else 0
        key = (json.dumps(e.get("pid")), json.dumps(e.get("tid")))
        if dur < 0:
            found.append(f"pid {key[0]} tid {key[1]}: {_text(e, start, start + dur)} "
                         f"(event #{index}) has a negative dur")
            dur = 0
        tracks.setdefault(key, []).append((start, -(start + dur), index, e))
    for (pid, tid), slices in tracks.items():
        slices.sort(key=lambda s: (s[0], s[1], s[2]))
        open_slices = []
        for start, neg_end, index, e in slices:
            end = -neg_end
            while open_slices and open_slices[-1][1] <= start:
                open_slices.pop()
            for o_start, o_end, o_index, o_event in reversed(open_slices):
                if o_end > start and end > o_end:
                    found.append(
                        f"pid {pid} tid {tid}: {_text(e, start, end)} (event #{index}) starts "
                        f"inside {_text(o_event, o_start, o_end)} (event #{o_index}) and ends "
                        f"{(end - o_end) / 1000:g} us after it")
            open_slices.append((start, end, index, e))
    return found


def check_file(path):
    """Violations in a .json or .json.gz file; None if it is not a Chrome
    trace (not JSON, JSONL, or without traceEvents)."""
    try:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError, EOFError):
        return None
    return violations(trace)


def check_folder(folder):
    """{path: violations} for every trace under `folder` that breaks the rule."""
    bad = {}
    for root, _dirs, files in os.walk(folder):
        for name in sorted(files):
            if not (name.endswith(".json") or name.endswith(".json.gz")):
                continue
            path = os.path.join(root, name)
            found = check_file(path)
            if found:
                bad[path] = found
    return bad


def describe(bad):
    lines = []
    for path, found in sorted(bad.items()):
        lines.append(f"{path}: {len(found)} slice(s) break the nesting rule")
        lines.extend("  " + v for v in found[:MAX_LISTED])
        if len(found) > MAX_LISTED:
            lines.append("  ...")
    return "\n".join(lines)


def autouse_fixture():
    """A pytest fixture, used by every test of the conftest.py that binds it
    to a name, that fails the test when a trace in its tmp_path breaks the
    rule. A test that writes one on purpose is marked
    @pytest.mark.allow_nesting_violations."""
    import pytest

    @pytest.fixture(autouse=True)
    def traces_in_tmp_path_nest(request):
        # Asked for before the test runs, so it is torn down after this.
        wanted = ("tmp_path" in request.fixturenames and
                  request.node.get_closest_marker("allow_nesting_violations") is None)
        folder = request.getfixturevalue("tmp_path") if wanted else None
        yield
        if folder is None:
            return
        bad = check_folder(folder)
        if bad:
            pytest.fail(describe(bad), pytrace=False)

    return traces_in_tmp_path_nest


if __name__ == "__main__":
    import sys
    bad = {}
    for arg in sys.argv[1:]:
        found = check_file(arg)
        if found is None:
            print(f"{arg}: not a Chrome trace", file=sys.stderr)
            sys.exit(2)
        if found:
            bad[arg] = found
    if bad:
        print(describe(bad))
    sys.exit(1 if bad else 0)
