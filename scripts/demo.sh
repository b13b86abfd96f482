#!/usr/bin/env bash
# The main job: install, build, and run the video diffusion example under the
# quickstart profile (torch profiler on two denoising steps, activation trace
# on the transformer blocks, memory accounting), then say where everything is.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
out="$PWD/out/quickstart"
rm -rf "$out"
REGIONTRACE_CONFIG=config/profiles/quickstart.yaml REGIONTRACE_OUTPUT_DIR="$out" \
  build/bin/video_pipeline --output "$out/video"
echo
echo "== regiontrace outputs in $out"
find "$out" -type f | sort | sed "s|$out/|  |"
echo
echo "Open the trace (*.json.gz) in https://ui.perfetto.dev (drag and drop) or chrome://tracing."
echo "Op summary: the *.txt next to it. Activations: activations_*.jsonl. Memory: memory_*."
echo "Parity check: run again with --perturb-block 3 and compare with build/bin/regiontrace diff."
