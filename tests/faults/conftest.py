"""The fault tests' shared check: every trace a run leaves in tmp_path nests
(tests/support/trace_nesting.py), also after SIGKILL or a full disk."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
import trace_nesting  # noqa: E402

traces_in_tmp_path_nest = trace_nesting.autouse_fixture()


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_nesting_violations: the test writes a trace "
                            "that breaks the nesting rule on purpose")
