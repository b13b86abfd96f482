#!/usr/bin/env bash
# Configures and builds regiontrace in build/ (extra arguments go to cmake).
# REGIONTRACE_TARGETS="a b" builds only those targets (scripts/demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache: paths relative to the checkout, so clones in other folders (CI)
# reuse what an earlier build compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
source scripts/python_env.sh
# libtorch, the Python module and the Python tests all come from the
# environment's interpreter (its torch wheel), unless Torch_DIR is given.
python_args=()
case " $* " in
  *" -DTorch_DIR="*) ;;
  *) python_args=(-DREGIONTRACE_PYTHON="$REGIONTRACE_PYTHON") ;;
esac
mkdir -p build
if ! cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${python_args[@]}" "$@" > build/configure.log 2>&1; then
  cat build/configure.log
  exit 1
fi
grep -E "^-- regiontrace" build/configure.log || true
targets=()
for t in ${REGIONTRACE_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
