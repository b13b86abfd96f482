"""The command line as pip installs it: the `regiontrace` and
`regiontrace-nvtx-record` console scripts run the programs that ship in this
package's bin/ folder. The Python process is replaced (exec), so the
program's exit code, signals and standard streams are the caller's."""

import os
import sys


def _run(program):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", program)
    if not os.access(path, os.X_OK):
        sys.exit(f"{program}: {path} is not in this regiontrace installation (it was built "
                 f"without that program, or this is a build tree: run build/bin/{program})")
    os.execv(path, [program] + sys.argv[1:])


def regiontrace():
    # `regiontrace view` runs its server (view.py) in a Python: this one, the
    # interpreter this package and its UI package were installed into.
    os.environ.setdefault("REGIONTRACE_PYTHON", sys.executable)
    _run("regiontrace")


def nvtx_record():
    _run("regiontrace-nvtx-record")
