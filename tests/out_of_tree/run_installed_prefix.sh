#!/usr/bin/env bash
# The installed package as a newcomer meets it: installed into one prefix,
# then moved, and used from there with a clean environment (no
# LD_LIBRARY_PATH, no REGIONTRACE_* variables) while nothing points back at
# the build tree. Checks that
#   - no installed binary has a RUNPATH into the build tree or the old prefix,
#     and no installed plugin depends on libregiontrace;
#   - `regiontrace check` passes for every shipped profile, with the sinks
#     loaded from the prefix, and `regiontrace schema --markdown` documents
#     every built-in sink;
#   - a program linking only RegionTrace::core, configured with libtorch's
#     CMake package out of reach, loads every built-in sink and they write;
#   - the installed sink template builds out of tree with
#     find_package(RegionTrace COMPONENTS sdk), Torch unfindable, and its
#     plugin loads through REGIONTRACE_PLUGIN_PATH.
# Environment: RT_BUILD_DIR, RT_LIBDIR (CMAKE_INSTALL_LIBDIR), RT_CONSUMER_DIR, RT_SINKS (built-in sinks,
# comma-separated), CMAKE_COMMAND, RT_CXX_COMPILER.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# What a fresh shell has; TMPDIR so that torch and the sinks find /tmp.
clean=(env -i PATH="$PATH" HOME="$work" TMPDIR="${TMPDIR:-/tmp}" REGIONTRACE_LOG_LEVEL=warn)
python=$(command -v python3)

"$CMAKE_COMMAND" --install "$RT_BUILD_DIR" --prefix "$work/first" > "$work/install.log" \
  || { cat "$work/install.log"; fail "cmake --install"; }
mkdir "$work/moved"
mv "$work/first" "$work/moved/prefix"
P="$work/moved/prefix"
plugins="$P/$RT_LIBDIR/regiontrace/plugins"
IFS=',' read -r -a sinks <<< "$RT_SINKS"
echo "prefix: $P (installed at $work/first, then moved)"

# --- RUNPATHs ------------------------------------------------------------------
checked=0
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep -q 'ELF' || continue
  checked=$((checked + 1))
  runpath=$(readelf -d "$f" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')
  IFS=':' read -r -a entries <<< "$runpath"
  for e in "${entries[@]}"; do
    case "$e" in
      *"$RT_BUILD_DIR"* | *"$work"*) fail "${f#"$P"/} has RUNPATH $e (build tree or install folder)" ;;
    esac
  done
  case "$f" in
    "$plugins"/*.so | "$P"/bin/*)
      [[ "$runpath" == *'$ORIGIN'* ]] || fail "${f#"$P"/} has no \$ORIGIN RUNPATH: '$runpath'"
      ;;
  esac
done < <(find "$P/bin" "$P/$RT_LIBDIR" -type f -print0)
[ "$checked" -gt 0 ] || fail "no ELF files under $P"
echo "RUNPATH: $checked ELF files, none points into the build tree"
bash "$(dirname "$0")/../elf/check_search_paths.sh" "$P/bin" "$P/$RT_LIBDIR" ||
  fail "an installed file searches the current folder for libraries (see above)"

# --- no plugin brings the core: it resolves every dependency from the prefix ----
if [ -n "$RT_SINKS" ]; then
  bash "$(dirname "$0")/../plugin_links/plugins_do_not_link_core.sh" "$plugins" "${#sinks[@]}" \
    || fail "an installed plugin links libregiontrace or misses a dependency"
fi

# --- the built-in sinks are all there --------------------------------------------
installed=$(find "$plugins" -name 'regiontrace_sink_*.so' -printf '%f\n' \
  | sed 's/^regiontrace_sink_//; s/\.so$//' | sort | tr '\n' ' ')
expected=$( ((${#sinks[@]})) && printf '%s\n' "${sinks[@]}" | sort | tr '\n' ' ' || true)
[ "$installed" = "$expected" ] || fail "installed sinks '$installed', built '$expected'"

# --- regiontrace check, every shipped profile -------------------------------------
mkdir "$work/cwd"
profiles=("$P"/share/regiontrace/profiles/*.yaml)
[ -f "${profiles[0]}" ] || fail "no profiles in $P/share/regiontrace/profiles"
for profile in "${profiles[@]}"; do
  name=$(basename "$profile")
  # Sinks the profile configures: keys two spaces in under `sinks:`.
  wanted=$(sed -n '/^sinks:/,/^[^ #]/s/^  \([a-z_][a-z0-9_]*\):.*/\1/p' "$profile" | sort -u)
  missing=""
  for s in $wanted; do
    [[ " $expected " == *" $s "* ]] || missing+=" $s"
  done
  if [ -n "$missing" ]; then
    echo "check $name: skipped, this build has no$missing sink"
    continue
  fi
  (cd "$work/cwd" && "${clean[@]}" "$P/bin/regiontrace" check "$profile") > "$work/check.txt" 2>&1 \
    || { cat "$work/check.txt"; fail "regiontrace check $name"; }
  grep -qx 'configuration is valid' "$work/check.txt" || { cat "$work/check.txt"; fail "check $name: no verdict"; }
  for s in $wanted; do
    line=$(grep -E "^  $s: " "$work/check.txt" || true)
    # An enabled sink names the file it was loaded from: the moved prefix's.
    if [[ "$line" == *": runs ("* ]]; then
      [[ "$line" == *"($plugins/regiontrace_sink_$s.so)"* ]] \
        || { cat "$work/check.txt"; fail "check $name: $s not loaded from $plugins: $line"; }
    fi
  done
  echo "check $name: valid (sinks:" $wanted")"
done
[ -z "$(ls -A "$work/cwd")" ] || fail "regiontrace check created files: $(ls -A "$work/cwd")"

# --- regiontrace schema ------------------------------------------------------------
"${clean[@]}" "$P/bin/regiontrace" schema --markdown > "$work/schema.md" 2> "$work/schema.err" \
  || { cat "$work/schema.err"; fail "regiontrace schema --markdown"; }
for s in "${sinks[@]}"; do
  grep -qx "## Sink \`$s\`" "$work/schema.md" || fail "schema --markdown has no section for $s"
  n=$(sed -n "/^## Sink \`$s\`/,/^## /p" "$work/schema.md" | grep -c "^| \`sinks\.$s\." || true)
  [ "$n" -gt 0 ] || fail "schema --markdown lists no keys of $s"
done
echo "schema --markdown: ${#sinks[@]} sinks documented"

# --- a program that links RegionTrace::core only -------------------------------------
consumer_build="$work/consumer"
"$CMAKE_COMMAND" -S "$RT_CONSUMER_DIR" -B "$consumer_build" -DCMAKE_PREFIX_PATH="$P" \
  -DCMAKE_CXX_COMPILER="$RT_CXX_COMPILER" -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON \
  -DCMAKE_BUILD_TYPE=Release > "$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log"; fail "configure the consumer"; }
"$CMAKE_COMMAND" --build "$consumer_build" >> "$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log"; fail "build the consumer"; }
consumer="$consumer_build/core_consumer"
if readelf -d "$consumer" | grep NEEDED | grep -q regiontrace_torch; then
  fail "the consumer links libregiontrace_torch: it must prove the sinks bring it themselves"
fi
out="$work/out"
all=$(IFS=,; echo "${sinks[*]}")
if [ -z "$all" ]; then
  echo "no built-in sinks in this build: the consumer runs the template's sink only"
else
  (cd "$work/cwd" && "${clean[@]}" REGIONTRACE_SINKS="$all" REGIONTRACE_OUTPUT_DIR="$out" \
    "$consumer") > "$work/run.txt" 2>&1 \
    || { cat "$work/run.txt"; fail "core_consumer with REGIONTRACE_SINKS=$all"; }
  "$python" - "$out" "$all" <<'EOF' || { cat "$work/run.txt"; fail "the sinks' outputs"; }
import glob, gzip, json, os, sys
out, sinks = sys.argv[1], sys.argv[2].split(",")

def only(pattern):
    files = glob.glob(os.path.join(out, "**", pattern), recursive=True)
    assert len(files) == 1, f"{pattern}: {files} in {sorted(os.listdir(out))}"
    return files[0]

def jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]

config = json.load(open(only("regiontrace_config_rank0*.json")))
assert sorted(config["sinks"]) == sorted(sinks), config["sinks"]
if "torch_profiler" in sinks:
    path = only("torch_trace*.json.gz") if glob.glob(
        os.path.join(out, "**", "torch_trace*.json.gz"), recursive=True) \
        else only("torch_trace*[0-9].pt.trace.json")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        names = {e.get("name") for e in json.load(f)["traceEvents"]}
    assert "regiontrace.region::consumer_work" in names, sorted(n for n in names if n)[:40]
if "timeline" in sinks:
    with gzip.open(only("timeline_rank0*.json.gz"), "rt") as f:
        spans = [(e["args"]["path"], e["args"]["step"]) for e in json.load(f)["traceEvents"]
                 if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                 and not e["name"].startswith("ProfilerStep#")]
    assert sorted(spans) == sorted((p, s) for p in ("consumer_step", "consumer_step/consumer_work")
                                   for s in (0, 1)), spans
if "region_stats" in sinks:
    counts = {r["path"]: r["count"] for r in json.load(open(only("region_stats_rank0*.json")))["regions"]}
    assert counts == {"consumer_step": 2, "consumer_step/consumer_work": 2}, counts
if "memory_snapshot" in sinks:
    paths = {(r["path"], r["step"]) for r in jsonl(only("memory_rank0*.jsonl"))}
    assert paths == {(p, s) for p in ("consumer_step", "consumer_step/consumer_work")
                     for s in (0, 1)}, paths
if "activation_trace" in sinks:
    # Loaded (init() would have thrown otherwise) but given no tensor: no
    # record may appear, whether or not the sink leaves a file.
    for path in glob.glob(os.path.join(out, "**", "activations_rank0*.jsonl"), recursive=True):
        records = jsonl(path)
        assert all("module" not in r for r in records), records
print("sinks wrote:", ", ".join(sorted(sinks)))
EOF
fi

if [ -x "$P/bin/regiontrace-nvtx-record" ] && [[ " $expected " == *" nvtx "* ]]; then
  (cd "$work/cwd" && "${clean[@]}" REGIONTRACE_SINKS=nvtx REGIONTRACE_OUTPUT_DIR="$out/nvtx" \
    "$P/bin/regiontrace-nvtx-record" -- "$consumer") > "$work/nvtx.txt" 2>&1 \
    || { cat "$work/nvtx.txt"; fail "regiontrace-nvtx-record -- core_consumer"; }
  grep -q 'consumer_work' "$work/nvtx.txt" || { cat "$work/nvtx.txt"; fail "no NVTX range for consumer_work"; }
  echo "nvtx: ranges recorded through the installed regiontrace-nvtx-record"
fi

# --- the sink template, built against the sdk component without Torch -----------------
template="$P/share/regiontrace/examples/third_party_sink"
[ -f "$template/CMakeLists.txt" ] || fail "no sink template in $template"
cp -r "$template" "$work/my_sink"
"$CMAKE_COMMAND" -S "$work/my_sink" -B "$work/my_sink/build" -DCMAKE_PREFIX_PATH="$P" \
  -DCMAKE_CXX_COMPILER="$RT_CXX_COMPILER" -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON \
  -DCMAKE_BUILD_TYPE=Release > "$work/template.log" 2>&1 \
  || { cat "$work/template.log"; fail "configure the template without Torch"; }
grep -q "RegionTrace_DIR:PATH=$P" "$work/my_sink/build/CMakeCache.txt" \
  || fail "the template did not find RegionTrace in $P"
"$CMAKE_COMMAND" --build "$work/my_sink/build" >> "$work/template.log" 2>&1 \
  || { cat "$work/template.log"; fail "build the template"; }
(cd "$work/cwd" && "${clean[@]}" REGIONTRACE_PLUGIN_PATH="$work/my_sink/build/plugins" \
  REGIONTRACE_SINKS=region_csv REGIONTRACE_OUTPUT_DIR="$out/csv" "$consumer") > "$work/csv.txt" 2>&1 \
  || { cat "$work/csv.txt"; fail "core_consumer with the template's sink"; }
"$python" - "$out/csv" <<'EOF' || fail "the template's CSV"
import csv, glob, os, sys
files = glob.glob(os.path.join(sys.argv[1], "region_timings_rank0_pid*.csv"))
assert len(files) == 1, files
rows = list(csv.DictReader(open(files[0])))
paths = sorted({(r["path"], r["step"]) for r in rows})
assert paths == [("consumer_step", "0"), ("consumer_step", "1"),
                 ("consumer_step/consumer_work", "0"), ("consumer_step/consumer_work", "1")], paths
print("template sink wrote", len(rows), "rows")
EOF
echo "installed prefix OK"
