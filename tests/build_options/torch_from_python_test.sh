#!/usr/bin/env bash
# REGIONTRACE_PYTHON / REGIONTRACE_TORCH_FROM_PYTHON, configured for real:
#  1. A Python whose torch has no CMake package (Debian's python3-torch) is
#     refused with the path that was looked for.
#  2. A Python whose torch is laid out as a PyTorch wheel is (torch/ with
#     share/cmake/Torch inside) configures against that libtorch and prints
#     the version, CUDA and C++ ABI it found. The "wheel" is Debian's own
#     torch package with Debian's libtorch CMake package placed where a
#     wheel keeps it: the real interpreter, torch and libtorch, no stand-ins.
# Usage: torch_from_python_test.sh SOURCE_DIR PYTHON TORCH_CMAKE_DIR
set -euo pipefail
src=$1 python=$2 torch_cmake=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
configure() {  # build-dir args...
  local dir=$1; shift
  cmake -S "$src" -B "$dir" -DREGIONTRACE_BUILD_TESTS=OFF -DREGIONTRACE_BUILD_BENCHMARKS=OFF \
    -DREGIONTRACE_BUILD_EXAMPLES=OFF -DREGIONTRACE_BUILD_TOOLS=OFF -DREGIONTRACE_WITH_NVTX=OFF "$@"
}
fail() { echo "FAIL: $*"; exit 1; }

# 1. No CMake package next to torch: a clear refusal.
if configure "$work/plain" -DREGIONTRACE_PYTHON="$python" >"$work/plain.log" 2>&1; then
  fail "configured against a torch without CMake files"
fi
grep -q "no libtorch CMake package" "$work/plain.log" || { cat "$work/plain.log"; fail "no reason given"; }
grep -q "share/cmake/Torch/TorchConfig.cmake is" "$work/plain.log" || fail "the missing path is not named"
echo "refused: $(grep -m1 -A1 'no libtorch CMake package' "$work/plain.log" | tr -s ' \n' ' ')"

# 2. A wheel's layout: torch/ holds the package and share/cmake/Torch.
torch_pkg=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
site=$work/site
mkdir -p "$site/torch/share/cmake"
for entry in "$torch_pkg"/*; do ln -s "$entry" "$site/torch/$(basename "$entry")"; done
ln -s "$torch_cmake" "$site/torch/share/cmake/Torch"
# Debian's TorchConfig finds headers four levels above itself (a wheel's,
# three): give the layout what that points at.
libtorch_prefix=$(cd "$torch_cmake/../../../.." && pwd)
for d in include lib; do
  [ -e "$libtorch_prefix/$d" ] && ln -s "$libtorch_prefix/$d" "$site/$d"
done
cat >"$work/python" <<PY
#!/bin/sh
PYTHONPATH="$site" exec "$python" "\$@"
PY
chmod +x "$work/python"
[ "$("$work/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')" = "$site/torch/share/cmake" ] ||
  fail "the wheel layout is not what torch.utils.cmake_prefix_path reports"
configure "$work/wheel" -DREGIONTRACE_PYTHON="$work/python" >"$work/wheel.log" 2>&1 ||
  { cat "$work/wheel.log"; fail "configure against the wheel layout failed"; }
version=$("$python" -c 'import torch; print(torch.__version__)')
grep -q "libtorch from $work/python: torch $version, CUDA none, _GLIBCXX_USE_CXX11_ABI=1" "$work/wheel.log" ||
  { grep regiontrace "$work/wheel.log"; fail "the found torch is not reported"; }
grep -q "^Torch_DIR:PATH=$site/torch/share/cmake/Torch$" "$work/wheel/CMakeCache.txt" || fail "Torch_DIR not set"
grep -q "torch=ON" "$work/wheel.log" || fail "libtorch not used"
grep "libtorch from" "$work/wheel.log"
echo "PASS"
