#!/usr/bin/env bash
# The main job: install, build, and run the video diffusion example under the
# quickstart profile (torch profiler on two denoising steps, activation trace
# on the transformer blocks, memory accounting), then say where everything is.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh --demo  # what the demo needs; scripts/test.sh installs the rest
# Only what the demo runs: the library, the sinks quickstart.yaml names, the
# command line and the example; scripts/test.sh builds the rest.
REGIONTRACE_TARGETS="video_pipeline regiontrace_cli regiontrace_sink_torch_profiler
  regiontrace_sink_activation_trace regiontrace_sink_memory_snapshot
  regiontrace_sink_region_stats regiontrace_sink_timeline" \
  bash scripts/build.sh -DREGIONTRACE_BUILD_TESTS=OFF -DREGIONTRACE_BUILD_BENCHMARKS=OFF
out="$PWD/out/quickstart"
rm -rf "$out"
build/bin/video_pipeline --profile config/profiles/quickstart.yaml --trace-dir "$out" \
  --output-dir "$out/video"
echo
echo "== regiontrace outputs in $out"
(cd "$out" && find . -type f | sort | sed 's|^\./|  |')
cat <<MSG

Open the trace:   drag $out/torch_trace_*.json.gz onto https://ui.perfetto.dev (or chrome://tracing)
Op summary:       $out/summaries/torch_trace_*.summary.txt (which ops dominate, per input shape)
Activations:      $out/activations_*.jsonl, one record per block output per step
Memory:           $out/memory_*.jsonl, memory_summary_*.json; memory_trace_*.json opens in Perfetto
Timeline:         $out/timeline_*.json.gz, every region and step of the run (opens in Perfetto)
Region stats:     $out/region_stats_*.txt (count, total, self, p50/p90/p99 per region), region_stats_*.json
The video:        $out/video/video.gif

Parity demo (finds the layer where two runs diverge):
  build/bin/video_pipeline --profile config/profiles/parity.yaml --trace-dir /tmp/ref
  build/bin/video_pipeline --profile config/profiles/parity.yaml --trace-dir /tmp/port --perturb-block 3
  build/bin/regiontrace diff /tmp/port/activations_rank0_*.jsonl /tmp/ref/activations_rank0_*.jsonl
MSG
