#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang in build-fuzz/ and runs
# each for a bounded time from its seed corpus. Fails on any crash, leak,
# sanitizer report or input slower than the per-input limit; the input that
# did it is kept as build-fuzz/findings/<target>-crash-* (or leak-, timeout-).
# The repository's corpora stay as they are: what a run discovers goes to
# build-fuzz/corpus/<target>/.
# Usage: scripts/fuzz.sh [seconds per target, default 30] [target ...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(profile catalog activation_records chrome_trace)

export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
dir=build-fuzz
mkdir -p "$dir"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DREGIONTRACE_SANITIZER=fuzzer -DREGIONTRACE_WITH_TORCH=OFF \
  -DREGIONTRACE_WITH_NVTX=OFF -DREGIONTRACE_WITH_PYTHON=OFF -DREGIONTRACE_BUILD_TESTS=OFF \
  -DREGIONTRACE_BUILD_TOOLS=OFF -DREGIONTRACE_BUILD_EXAMPLES=OFF \
  -DREGIONTRACE_BUILD_BENCHMARKS=OFF > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j"$(nproc)" --target regiontrace_fuzzers

# Sanitizer runtimes and 32-bit mmap randomisation do not mix (see test.sh).
run=()
setarch "$(uname -m)" -R true 2>/dev/null && run=(setarch "$(uname -m)" -R)
mkdir -p "$dir/findings"
status=0
for t in "${targets[@]}"; do
  mkdir -p "$dir/corpus/$t"
  log="$dir/fuzz_$t.log"
  if "${run[@]}" "$dir/bin/regiontrace_fuzz_$t" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$dir/findings/$t-" "$dir/corpus/$t" "tests/fuzz/corpus/$t" > "$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz $t: ${runs:-?} inputs in ${seconds}s, no finding"
  else
    echo "fuzz $t: FINDING (log $log):"
    grep -E "ERROR|SUMMARY|Test unit written|==[0-9]+==" "$log" | head -20
    status=1
  fi
done
exit $status
