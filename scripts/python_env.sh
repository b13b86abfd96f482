# Sourced by the scripts: where the project's Python environment lives.
# One virtual environment per machine, outside the checkout, so that clones
# (CI's among them) share one 5 GB torch install instead of each making its
# own. REGIONTRACE_VENV moves it; REGIONTRACE_PYTHON names an interpreter
# that already has scripts/requirements.txt, and then no environment is made.
# Not exported: builds without libtorch (sanitizers, fuzzers) must not see it.
REGIONTRACE_VENV=${REGIONTRACE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/regiontrace/venv}
REGIONTRACE_PYTHON=${REGIONTRACE_PYTHON:-$REGIONTRACE_VENV/bin/python}
