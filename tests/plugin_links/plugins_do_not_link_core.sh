#!/usr/bin/env bash
# No built-in plugin has libregiontrace among its dependencies, direct
# (readelf's NEEDED) or indirect (what the loader maps for it, per ldd): a
# plugin that brings the core with it puts a second registry and dispatcher
# into a process that loaded the core already, or fails to load where the core
# is not on its RUNPATH (docs/architecture.md: `sinks/* -> plugins/sdk <- core`).
# Usage: plugins_do_not_link_core.sh <plugins folder> [expected plugin count]
set -euo pipefail
dir=$1
expected=${2:-}
shopt -s nullglob
plugins=("$dir"/regiontrace_sink_*.so)
[ ${#plugins[@]} -gt 0 ] || { echo "FAIL: no regiontrace_sink_*.so in $dir"; exit 1; }
if [ -n "$expected" ] && [ ${#plugins[@]} -ne "$expected" ]; then
  echo "FAIL: ${#plugins[@]} plugins in $dir, expected $expected: ${plugins[*]}"
  exit 1
fi
status=0
for plugin in "${plugins[@]}"; do
  needed=$(readelf -d "$plugin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  if grep -qE '^libregiontrace(_torch)?\.so' <<< "$needed"; then
    echo "FAIL: $(basename "$plugin") has NEEDED $(grep -E '^libregiontrace(_torch)?\.so' <<< "$needed" | tr '\n' ' ')"
    status=1
  fi
  mapped=$(env -u LD_LIBRARY_PATH ldd "$plugin")
  if grep -q "not found" <<< "$mapped"; then
    echo "FAIL: $(basename "$plugin") has unresolved dependencies:"
    grep "not found" <<< "$mapped"
    status=1
  fi
  if grep -qE '^\s*libregiontrace(_torch)?\.so' <<< "$mapped"; then
    echo "FAIL: $(basename "$plugin") brings in the core indirectly:"
    grep -E '^\s*libregiontrace(_torch)?\.so' <<< "$mapped"
    status=1
  fi
  echo "$(basename "$plugin"): NEEDED $(tr '\n' ' ' <<< "$needed")"
done
exit $status
