#!/usr/bin/env bash
# The soak benchmark (not a test): 64 threads running regions, ops and
# observed tensors with every file-writing sink on (bench/soak/soak.yaml) for
# 10 minutes; prints the RSS curve at each tenth, the peak against the bound,
# and whether every observation is a record or counted as dropped. Then the
# shared whole-output checker reads every file the run left. Mind the disk:
# on 2 cores, 64 threads write about 2 GB of outputs a minute (10 minutes:
# 21 GB, most of it activation records), and reading them back takes minutes.
# Usage: scripts/soak.sh [seconds, default 600] [threads, default 64] [bound MB, default 3072]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
threads=${2:-64}
bound=${3:-3072}
out=$(mktemp -d /tmp/regiontrace_soak.XXXXXX)
REGIONTRACE_CONFIG=bench/soak/soak.yaml REGIONTRACE_OUTPUT_DIR="$out" RT_SOAK_OUTPUT_DIR="$out" \
  REGIONTRACE_LOG_LEVEL=warn \
  build/bin/regiontrace_soak --threads "$threads" --seconds "$seconds" --rss-bound-mb "$bound" \
  --csv "$out/rss.csv"
python3 tests/faults/whole_outputs.py "$out"
echo "outputs and rss.csv: $out"
