#!/usr/bin/env bash
# Runs every built benchmark program (build/**/*_bench, found by name, so new
# ones are picked up) with repetitions and writes bench/results.md: the
# machine, then every VERDICT line the programs printed (see
# bench/ratio_reporter.hpp) as one table. Full output: build/bench_logs/.
#
#   bash scripts/bench.sh                     # 5 repetitions each
#   REPETITIONS=3 bash scripts/bench.sh
#   BUILD_DIR=build-release bash scripts/bench.sh --benchmark_filter=BM_Region
#
# Extra arguments go to every program. Benchmarks do not build here: build
# them first (scripts/build.sh, or cmake --build build --target <name>_bench).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
repetitions="${REPETITIONS:-5}"
results="${RESULTS:-bench/results.md}"
if [ ! -d "$build_dir" ]; then
  echo "bench.sh: no build folder '$build_dir' (set BUILD_DIR, or run scripts/build.sh)" >&2
  exit 1
fi
mapfile -t programs < <(find "$build_dir" -type f -name '*_bench' -perm -u+x | sort)
if [ "${#programs[@]}" -eq 0 ]; then
  echo "bench.sh: no *_bench program under '$build_dir'; build them first" >&2
  exit 1
fi
logs="$build_dir/bench_logs"
mkdir -p "$logs"

rows=""
failed=()
for program in "${programs[@]}"; do
  name="$(basename "$program")"
  echo "== $name" >&2
  log="$logs/$name.txt"
  if ! "$program" --benchmark_repetitions="$repetitions" --benchmark_color=false "$@" \
      > "$log" 2>&1; then
    failed+=("$name")
  fi
  # The console reporter may leave a colour code in front of the first line.
  lines="$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep '^VERDICT | ' || true)"
  if [ -z "$lines" ]; then
    rows+="| $name | (no verdict lines) | | | | | |"$'\n'
    continue
  fi
  while IFS= read -r line; do
    rows+="| $name ${line#VERDICT } |"$'\n'
  done <<< "$lines"
done

model="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || echo unknown)"
# Before the results file is rewritten, which would count as a change.
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
git diff --quiet -- . ":!$results" 2>/dev/null || commit+=" (with local changes)"
{
  echo "# Benchmark results"
  echo
  echo "Written by \`scripts/bench.sh\` (repetitions: $repetitions$([ $# -gt 0 ] && echo "; arguments: $*"))."
  echo "Figures are the fastest repetition, the median beside it; ratios compare"
  echo "figures of the same run. Full output of each program: \`$logs/\`."
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- commit: $commit"
  echo "- nproc: $(nproc)"
  echo "- CPU: $model"
  echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| program | figure | min (median) | baseline | ratio | target | verdict |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s' "$rows"
  if [ "${#failed[@]}" -gt 0 ]; then
    echo
    echo "Programs that exited with an error: ${failed[*]} (see their logs)."
  fi
} > "$results"
echo "bench.sh: wrote $results" >&2
misses="$(grep -c '| MISS |' "$results" || true)"
echo "bench.sh: $misses verdict(s) missed" >&2
