#!/usr/bin/env bash
# Configures and builds regiontrace in build/ (extra arguments go to cmake).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache: paths relative to the checkout, so clones in other folders (CI)
# reuse what an earlier build compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
mkdir -p build
if ! cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > build/configure.log 2>&1; then
  cat build/configure.log
  exit 1
fi
grep -E "^-- regiontrace" build/configure.log || true
cmake --build build -j"$(nproc)"
