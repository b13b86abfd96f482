#!/usr/bin/env bash
# The path an outside user takes: install, find_package, build a sink and an
# app, run the app with the sink on REGIONTRACE_PLUGIN_PATH, read its output.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$CMAKE_COMMAND" --install "$RT_OOT_BUILD_DIR" --prefix "$work/prefix" > "$work/install.log"
"$CMAKE_COMMAND" -S "$RT_OOT_PROJECT_DIR" -B "$work/build" \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
"$CMAKE_COMMAND" --build "$work/build" -j2 > "$work/build.log" || { cat "$work/build.log"; exit 1; }
plugin=$(find "$work/build" -name 'regiontrace_sink_line_counter.so' | head -1)
test -n "$plugin" || { echo "the sink was not built"; exit 1; }
out="$work/out"
env -u REGIONTRACE_CONFIG REGIONTRACE_PLUGIN_PATH="$(dirname "$plugin")" \
  REGIONTRACE_SINKS=line_counter REGIONTRACE_OUTPUT_DIR="$out" \
  REGIONTRACE_LINE_COUNTER_LABEL=outside "$work/build/app"
result=$(cat "$out"/line_counter_rank0_pid*.txt)
echo "sink wrote: $result"
[ "$result" = "outside: 3 regions, deepest path app/load/parse" ] || { echo "unexpected output"; exit 1; }
# The installed package has the command line and the built-in plugin folder.
test -x "$work/prefix/bin/regiontrace"
test -d "$work/prefix/$RT_OOT_LIBDIR/regiontrace/plugins"
"$work/prefix/bin/regiontrace" regions | grep -q profiler_region_training_step
echo "out-of-tree build OK"
