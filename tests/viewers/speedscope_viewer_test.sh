#!/usr/bin/env bash
# The demo's torch_profiler trace, written here and now, opened by a viewer
# nobody here wrote: speedscope in headless Chromium (speedscope_check.js)
# must import it with no complaint about slices that do not nest. First, the
# negative control: the issue's trace (a child that ends 1 us after its
# parent) must draw a complaint, or the check proves nothing.
#
#   speedscope_viewer_test.sh VIDEO_PIPELINE WORK_DIR
#
# Exit 77 (ctest: skipped) when Chromium, Node.js or speedscope is missing.
set -euo pipefail
pipeline=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
if ! command -v node > /dev/null; then
  echo "SKIP: no node on PATH (Debian: apt-get install nodejs npm)"
  exit 77
fi
if ! command -v chromium > /dev/null && ! command -v chromium-browser > /dev/null; then
  echo "SKIP: no chromium on PATH (Debian: apt-get install chromium)"
  exit 77
fi
# npm is no registry this project installs from any more (Debian and PyPI
# only): speedscope is there only where someone ran
# `npm ci --prefix tests/viewers` by hand.
if [ ! -f "$here/node_modules/speedscope/package.json" ]; then
  echo "SKIP: speedscope is not installed in $here/node_modules" \
    "(where npm reaches its registry: npm ci --prefix tests/viewers)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/trace"

cat > "$work/issue_trace.json" << 'TRACE'
{"traceEvents":[
 {"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"rank 0 (pid 7)"}},
 {"ph":"X","cat":"cpu_op","name":"aten::_to_copy","pid":7,"tid":11,"ts":799.895,"dur":16},
 {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":7,"tid":11,"ts":813.895,"dur":3}]}
TRACE
node "$here/speedscope_check.js" --expect-broken "$work/issue_trace.json"

# The demo under the kernels profile (shapes, memory, stack, a step
# schedule), small enough for a test: its trace has thousands of ops.
env -u REGIONTRACE_CONFIG REGIONTRACE_LOG_LEVEL=warn "$pipeline" \
  --profile "$source_dir/config/profiles/kernels.yaml" --trace-dir "$work/trace" \
  --output-dir "$work" --blocks 2 --steps 4 --frames 2 --height 32 --width 32 > "$work/demo.log" 2>&1 ||
  { cat "$work/demo.log"; exit 1; }
traces=("$work"/trace/torch_trace_*.json.gz)
if [ ! -f "${traces[0]}" ]; then
  echo "FAIL: the demo wrote no torch trace into $work/trace"
  cat "$work/demo.log"
  exit 1
fi
for t in "${traces[@]}"; do
  python3 "$source_dir/tests/support/trace_nesting.py" "$t"  # our own check agrees
  node "$here/speedscope_check.js" "$t"
done
