#!/usr/bin/env bash
# A CUDA torch wheel on a machine without the CUDA toolkit: configure must
# succeed CPU only, say why in one line, and what links libtorch must build.
# The toolkit is hidden in a private mount namespace (root only; exit 77,
# skipped, where unshare is not allowed).
#
#   no_cuda_toolkit_test.sh SOURCE_DIR PYTHON WORK_DIR
set -euo pipefail
source_dir=$1
python=$2
work=$3
if ! unshare -m true 2>/dev/null; then
  echo "SKIP: unshare -m is not allowed here (needs root): cannot hide the CUDA toolkit"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/empty" "$work/build"
: > "$work/not_a_program"  # no execute bit: nothing to run in its place
# Every toolkit folder, and every nvcc on PATH or beside it outside those
# folders (a wrapper in /usr/local/bin, say), hidden behind an empty one.
dirs=()
for d in /usr/local/cuda /usr/local/cuda-*; do
  [ -d "$d" ] && dirs+=("$(readlink -f "$d")")
done
files=()
for f in $(which -a nvcc 2>/dev/null) /usr/local/bin/nvcc /usr/bin/nvcc; do
  [ -f "$f" ] || continue
  f=$(readlink -f "$f")
  inside=no
  for d in "${dirs[@]}"; do case "$f" in "$d"/*) inside=yes ;; esac; done
  [ "$inside" = no ] && files+=("$f")
done
hide=($(printf '%s\n' "${files[@]}" "${dirs[@]}" | awk '!seen[$0]++'))
printf 'hiding: %s\n' "${hide[@]}"
unshare -m bash -s "$source_dir" "$python" "$work" "${hide[@]}" > "$work/log.txt" 2>&1 << 'INNER' || { cat "$work/log.txt"; exit 1; }
set -euo pipefail
source_dir=$1 python=$2 work=$3
shift 3
for p in "$@"; do
  if [ -d "$p" ]; then mount --bind "$work/empty" "$p"; else mount --bind "$work/not_a_program" "$p"; fi
done
export PATH=$(echo "$PATH" | tr ':' '\n' | grep -v cuda | paste -sd:)
nvcc=$(command -v nvcc || true)  # bash names a non-executable match too
if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then echo "nvcc is still reachable: $nvcc"; exit 1; fi
cmake -S "$source_dir" -B "$work/build" -DREGIONTRACE_PYTHON="$python" \
  -DREGIONTRACE_BUILD_TESTS=OFF -DREGIONTRACE_BUILD_BENCHMARKS=OFF -DREGIONTRACE_BUILD_EXAMPLES=OFF
cmake --build "$work/build" --target regiontrace_tensor_stats -j2
INNER
log=$work/log.txt
grep -q "regiontrace: CUDA parts off: this libtorch has CUDA .* but no CUDA toolkit (nvcc) was found" "$log" ||
  { echo "FAIL: no line saying why CUDA parts are off"; cat "$log"; exit 1; }
grep -q "regiontrace: libtorch [0-9.]* found (CUDA: OFF)" "$log" ||
  { echo "FAIL: no 'libtorch <version> found (CUDA: OFF)'"; cat "$log"; exit 1; }
[ "$(grep -c 'CUDA parts off' "$log")" -eq 1 ] || { echo "FAIL: said more than once"; cat "$log"; exit 1; }
lib=$(ls "$work"/build/lib/libregiontrace_tensor_stats.so.*.*.* 2>/dev/null | head -1)
[ -n "$lib" ] || { echo "FAIL: libregiontrace_tensor_stats was not built"; cat "$log"; exit 1; }
if nm -D --undefined-only "$lib" | grep -q 'cudaLaunchKernel\|__cudaRegisterFatBinary'; then
  echo "FAIL: $lib has device code although CUDA parts are off"; exit 1
fi
echo "PASS: configured CPU only and built $lib"
