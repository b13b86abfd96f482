#!/usr/bin/env bash
# Installs what regiontrace builds on (run as root on Debian 12): tools and
# C++ libraries from Debian's archive, then libtorch 2.x and the Python side
# from PyPI into the project's virtual environment (scripts/python_env.sh,
# pins in scripts/requirements.txt). The CUDA toolkit under /usr/local/cuda
# (nvcc, NVTX3 headers) is used when present; without it the build is CPU
# only and says why.
#
#   bash scripts/install_deps.sh          # everything: build, tests, benches, viewers
#   bash scripts/install_deps.sh --demo   # what scripts/demo.sh builds and runs (the
#                                         # first README command; the test command
#                                         # installs the rest)
#   bash scripts/install_deps.sh --system # the Debian packages alone, for `pip install
#                                         # --no-build-isolation .` in your own venv
set -euo pipefail
demo=0
system_only=0
case "${1:-}" in
  --demo) demo=1 ;;
  --system) demo=1 system_only=1 ;;
  "") ;;
  *) echo "install_deps.sh: unknown argument '$1' (valid: --demo, --system)" >&2; exit 2 ;;
esac
packages=(
  build-essential cmake ccache git pkg-config
  libyaml-cpp-dev         # YAML profiles and region catalogs
  libre2-dev              # the activation_trace sink's user patterns (linear-time regex)
  libfmt-dev              # activation_trace: Dragonbox for the JSONL's doubles (header-only use)
  libboost-dev            # Boost.DLL (plugins) and Boost.PropertyTree (config tree)
  libsimdjson-dev         # the CLI's JSON reader (diff, merge, summary)
  libcli11-dev            # the CLI's argument parser
  zlib1g-dev              # .json.gz traces
  python3 python3-dev python3-venv   # the interpreter the environment is made from, where PATH has none
  prometheus-cpp-dev      # the region_stats sink's live metrics endpoint
)
if [ "$demo" -eq 0 ]; then
  packages+=(
    libgtest-dev libbenchmark-dev
    nlohmann-json3-dev      # the tests and the parity example parse JSON
    clang libclang-rt-14-dev   # libFuzzer targets (scripts/fuzz.sh)
    openmpi-bin libopenmpi-dev   # launcher tests: 4 ranks under mpirun
    chromium                # headless viewer tests (report HTML, TensorBoard's profiler plugin)
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$system_only" -eq 0 ] || exit 0

# libtorch comes with PyPI's torch wheel. The environment is made once per
# machine; pip leaves what already matches the pins as it is, so a second run
# takes seconds.
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/python_env.sh"
if [ ! -x "$REGIONTRACE_PYTHON" ]; then
  base_python=$(command -v python3)
  echo "install_deps: making the Python environment $REGIONTRACE_VENV from $base_python"
  mkdir -p "$(dirname "$REGIONTRACE_VENV")"
  "$base_python" -m venv "$REGIONTRACE_VENV"
fi
if [ "$demo" -eq 1 ]; then
  # libtorch (and the numpy its Python side imports), at the pins.
  "$REGIONTRACE_PYTHON" -m pip install --quiet --disable-pip-version-check \
    "$(grep '^torch==' "$here/requirements.txt")" "$(grep '^numpy==' "$here/requirements.txt")"
  exit 0
fi
"$REGIONTRACE_PYTHON" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
# FastVideo's own tests of the modules regiontrace.fastvideo replaces run
# against it (python/tests/test_fastvideo_own_tests.py): its wheel, without
# its ~50 dependencies, is their source; it is never imported. HolisticTrace-
# Analysis (python/tests/test_hta.py) comes the same way: its declared
# dependencies include JupyterLab, and what it imports is in requirements.txt.
"$REGIONTRACE_PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps \
  -r "$here/requirements-no-deps.txt"
