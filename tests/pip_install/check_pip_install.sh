#!/usr/bin/env bash
# regiontrace as a FastVideo developer gets it: their own venv with their own
# torch, one pip command, then nothing from this checkout.
#   1. the sdist (`python -m build --sdist`), as a release would ship it;
#   2. wrong environments: no torch, pip's default build isolation;
#   3. a fresh venv with the pinned torch (pip's cache), `pip install
#      --no-build-isolation regiontrace-<version>.tar.gz`;
#   4. from another folder, no PYTHONPATH: the package imports from the venv,
#      `regiontrace check quickstart.yaml` and `summary` run from PATH, the
#      Python suites and FastVideo's own tests run against the installed
#      package, a torch of another version is refused at import;
#   5. a libtorch app and a third-party sink built with
#      regiontrace.cmake_prefix_path, recording into the installed sinks;
#   6. `pip uninstall -y regiontrace` leaves no file behind;
#   7. `pip wheel` + `auditwheel repair` with torch's libraries excluded:
#      every ELF file of the repaired wheel, installed, resolves (ldd) only
#      to glibc, libstdc++/libgcc, torch's libraries and the wheel's own.
# Prints each stage's seconds (the closing line gives the whole).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/scripts/python_env.sh"
# A fixed folder under /tmp, where pip also unpacks the sdist: with ccache's
# base_dir there, every path the compiler sees is relative and the same from
# one run to the next, so a second run compiles nothing.
work=/tmp/regiontrace-pip-check
rm -rf "$work"
mkdir -p "$work"
export TMPDIR=/tmp CCACHE_BASEDIR=/tmp CCACHE_NOHASHDIR=1
export CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" PIP_DISABLE_PIP_VERSION_CHECK=1
unset PYTHONPATH LD_LIBRARY_PATH
started=$SECONDS
stage_started=$SECONDS
stage() {
  echo "pip_install: $1 ($((SECONDS - stage_started)) s)"
  stage_started=$SECONDS
}
fail() {
  echo "pip_install: FAIL: $*" >&2
  exit 1
}
passed=0
pass() {
  passed=$((passed + 1))
  echo "pip_install: ok: $*"
}

# --- 1. the sdist ---------------------------------------------------------------
"$REGIONTRACE_PYTHON" -m build --sdist --no-isolation --outdir "$work/dist" "$root" > "$work/sdist.log" 2>&1 \
  || { cat "$work/sdist.log"; fail "python -m build --sdist"; }
sdist=$(ls "$work"/dist/regiontrace-*.tar.gz)
tar -tzf "$sdist" > "$work/sdist.files"
for f in pyproject.toml CMakeLists.txt python/build_backend/regiontrace_build/backend.py \
  config/profiles/quickstart.yaml sinks/timeline/CMakeLists.txt; do
  grep -q "^regiontrace-[0-9.]*/$f$" "$work/sdist.files" || fail "the sdist lacks $f"
done
! grep -qE '^regiontrace-[0-9.]*/(build|\.git)/' "$work/sdist.files" || fail "the sdist holds build output or .git"
pass "sdist $(basename "$sdist"): $(wc -l < "$work/sdist.files") files"
stage "sdist made"

# --- 2. environments that cannot build it, said in one line -----------------------
base_python=$("$REGIONTRACE_PYTHON" -c 'import sys; print(sys._base_executable)')
"$base_python" -m venv "$work/notorch"
if "$work/notorch/bin/pip" install --no-build-isolation "$sdist" > "$work/notorch.log" 2>&1; then
  fail "a venv without torch built regiontrace"
fi
grep -q "regiontrace: no torch is importable in $work/notorch/bin/python" "$work/notorch.log" \
  || { cat "$work/notorch.log"; fail "no torch: not said"; }
pass "no torch in the venv: $(grep -o 'regiontrace: no torch[^.]*' "$work/notorch.log" | head -1)"
stage "environment without torch refused"

# --- 3. the user's venv: their torch, then regiontrace from the sdist -----------------
"$base_python" -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install --quiet -r "$root/scripts/requirements.txt"
"$py" -m pip install --quiet --no-deps -r "$root/scripts/requirements-no-deps.txt"
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
( cd "$work/venv" && find . -mindepth 1 | sort ) > "$work/venv.before"
stage "venv with torch $("$py" -c 'import torch; print(torch.__version__)')"

# pip's default isolation builds in an environment without the user's torch.
if "$py" -m pip install "$sdist" > "$work/isolated.log" 2>&1; then
  fail "pip built regiontrace with build isolation (against which torch?)"
fi
grep -q "regiontrace: no torch is importable" "$work/isolated.log" \
  && grep -q -- "--no-build-isolation" "$work/isolated.log" \
  || { tail -30 "$work/isolated.log"; fail "build isolation: not said"; }
pass "pip install without --no-build-isolation stops and says to use it"
stage "isolated build refused"

"$py" -m pip install --no-build-isolation "$sdist" > "$work/install.log" 2>&1 \
  || { tail -60 "$work/install.log"; fail "pip install --no-build-isolation $(basename "$sdist")"; }
stage "pip install --no-build-isolation $(basename "$sdist")"

# --- 4. used from elsewhere ---------------------------------------------------
user=$work/user
mkdir -p "$user"
cd "$user"
export PATH="$work/venv/bin:$PATH" PYTHONDONTWRITEBYTECODE=1
package=$("$py" -c 'import regiontrace; print(regiontrace.__file__)')
[ "$package" = "$site/regiontrace/__init__.py" ] || fail "regiontrace imported from $package"
for f in "$site"/regiontrace/lib/libregiontrace.so* "$site"/regiontrace/bin/regiontrace \
  "$site"/regiontrace/share/regiontrace/profiles/quickstart.yaml \
  "$site"/regiontrace/lib/cmake/RegionTrace/RegionTraceConfig.cmake; do
  [ -e "$f" ] || fail "the installed package lacks $f"
done
sinks=$(cd "$site/regiontrace/lib/regiontrace/plugins" && ls regiontrace_sink_*.so | sed 's/regiontrace_sink_//; s/\.so$//' | sort | tr '\n' ' ')
for s in activation_trace memory_snapshot nvtx region_stats timeline torch_profiler; do
  case " $sinks" in *" $s "*) ;; *) fail "the installed package lacks the $s sink (has: $sinks)" ;; esac
done
pass "import regiontrace from $site; sinks: $sinks"
[ "$(command -v regiontrace)" = "$work/venv/bin/regiontrace" ] || fail "regiontrace is not on the venv's PATH"
[ -x "$work/venv/bin/regiontrace-nvtx-record" ] || fail "no regiontrace-nvtx-record console script"
regiontrace check quickstart.yaml > "$user/check.txt" 2>&1 || { cat "$user/check.txt"; fail "regiontrace check quickstart.yaml"; }
grep -q "$site/regiontrace/share/regiontrace/profiles/quickstart.yaml" "$user/check.txt" \
  || { cat "$user/check.txt"; fail "check did not read the shipped quickstart.yaml"; }
pass "regiontrace check quickstart.yaml (by name, from PATH)"
regiontrace-nvtx-record --help > /dev/null || fail "regiontrace-nvtx-record --help"

# A Python program into the installed sinks, then the installed CLI reads it.
REGIONTRACE_SINKS=timeline,torch_profiler,region_stats REGIONTRACE_REGIONS=inference_denoising \
  REGIONTRACE_OUTPUT_DIR="$user/run" "$py" - <<'EOF'
import torch, regiontrace
a = torch.randn(16, 16)
for step in range(3):
    regiontrace.set_step(step)
    with regiontrace.region("inference_denoising"):
        torch.mm(a, a)
regiontrace.shutdown()
EOF
torch_trace=$(ls "$user"/run/*.pt.trace.json.gz | head -1)
regiontrace summary --json "$torch_trace" > "$user/summary.json" || fail "regiontrace summary"
"$py" - "$user/summary.json" <<'EOF' || fail "the summary of the installed sinks' trace"
import json, sys
summary = json.load(open(sys.argv[1]))
text = json.dumps(summary)
assert "inference_denoising" in text and "aten::mm" in text, text[:2000]
EOF
pass "a Python program's torch trace, read by regiontrace summary from PATH"

# The Python suites against the installed package (no build tree: the CLI is
# the console script). shared_dispatcher, hta and installed_prefix need
# programs of the build tree and run in ctest only.
suites=()
for s in api observe trace_modules fastvideo fastvideo_own_tests torch_profiler kineto_format \
  fastvideo_side_by_side steps metrics_endpoint; do
  suites+=("$root/python/tests/test_$s.py")
done
env -u RT_TEST_BUILD_DIR "$py" -m pytest -q -p no:cacheprovider --basetemp="$work/pytest" \
  "${suites[@]}" > "$work/pytest.log" 2>&1 || { tail -80 "$work/pytest.log"; fail "the Python suites against the installed package"; }
pass "Python suites against the installed package: $(tail -1 "$work/pytest.log")"
stage "the installed package, its CLI and the Python suites"

# Another torch than the one it was built for is refused at import, with both
# versions and the fix; torch itself is not imported to find out.
mkdir -p "$work/othertorch/torch"
echo 'raise RuntimeError("the other torch was imported")' > "$work/othertorch/torch/__init__.py"
echo "__version__ = '2.14.1+cu999'" > "$work/othertorch/torch/version.py"
if PYTHONPATH="$work/othertorch" "$py" -c 'import regiontrace' > "$work/othertorch.log" 2>&1; then
  fail "regiontrace imported under another torch"
fi
grep -q "ImportError: regiontrace was built against torch 2.15.0.* but this Python imports torch 2.14.1+cu999: .*pip install" \
  "$work/othertorch.log" || { cat "$work/othertorch.log"; fail "another torch: not said"; }
pass "another torch: $(grep -o 'ImportError: [^:]*' "$work/othertorch.log")"

# --- 5. a C++ program and a sink of the user's, against the installed package -------
prefix_path=$("$py" -c 'import regiontrace, torch.utils; print(regiontrace.cmake_prefix_path + ";" + torch.utils.cmake_prefix_path)')
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix_path" > "$work/consumer.log" 2>&1 \
  || { tail -40 "$work/consumer.log"; fail "configuring a C++ project with regiontrace.cmake_prefix_path"; }
cmake --build "$work/consumer" -j"$(nproc)" >> "$work/consumer.log" 2>&1 \
  || { tail -40 "$work/consumer.log"; fail "building a C++ project against the installed package"; }
readelf -d "$work/consumer/torch_app" | grep -q "(RPATH).*nvidia" \
  || fail "torch_app has no RPATH to the pip torch's CUDA libraries"
REGIONTRACE_PLUGIN_PATH="$work/consumer/plugins" REGIONTRACE_OUTPUT_DIR="$user/cxx" \
  REGIONTRACE_SINKS=line_counter,timeline,activation_trace REGIONTRACE_LINE_COUNTER_LABEL=pip \
  "$work/consumer/torch_app" || fail "torch_app"
[ "$(cat "$user"/cxx/line_counter_rank0_pid*.txt)" = "pip: 6 regions, deepest path profiler_region_inference_denoising/blocks.0" ] \
  || fail "line_counter wrote: $(cat "$user"/cxx/line_counter_rank0_pid*.txt)"
"$py" - "$user/cxx" <<'EOF' || fail "what torch_app's installed sinks wrote"
import glob, gzip, json, sys
out = sys.argv[1]
records = [json.loads(l) for f in glob.glob(out + "/activations_*.jsonl") for l in open(f)]
records = [r for r in records if "summary" not in r]
assert [(r["module"], r["tensor"], r["step"]) for r in records] == [
    ("blocks.0", "out", s) for s in range(3)], records
[trace] = glob.glob(out + "/timeline_*.json*")
opener = gzip.open if trace.endswith(".gz") else open
events = json.load(opener(trace, "rt"))["traceEvents"]
spans = [e for e in events if e.get("ph") == "X" and e.get("name", "").endswith("blocks.0")]
assert len(spans) == 3, [e.get("name") for e in events]
EOF
pass "a libtorch app and a third-party sink built with regiontrace.cmake_prefix_path"
stage "C++ consumer"

# --- 6. uninstall ---------------------------------------------------------------
"$py" -m pip uninstall -y regiontrace > /dev/null
( cd "$work/venv" && find . -mindepth 1 | sort ) > "$work/venv.after"
# Bytecode that running the tests left in other packages is theirs.
left=$(comm -13 "$work/venv.before" "$work/venv.after" | grep -v '/__pycache__' || true)
left_ours=$(comm -13 "$work/venv.before" "$work/venv.after" | grep -i 'regiontrace' || true)
[ -z "$left$left_ours" ] || fail "pip uninstall left: $left $left_ours"
pass "pip uninstall -y regiontrace leaves no file behind"
stage "uninstalled"

# --- 7. a wheel that carries its own libraries ------------------------------------
"$py" -m pip wheel --no-build-isolation --no-deps -w "$work/wheel" "$sdist" > "$work/wheel.log" 2>&1 \
  || { tail -40 "$work/wheel.log"; fail "pip wheel"; }
wheel=$(ls "$work"/wheel/regiontrace-*.whl)
"$py" - "$wheel" <<'EOF' || fail "the wheel's metadata"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = z.read([n for n in z.namelist() if n.endswith(".dist-info/METADATA")][0]).decode()
assert "Requires-Dist: torch==2.15.0" in meta, meta
EOF
pass "$(basename "$wheel") requires torch==2.15.0"
# torch's libraries, and the CUDA libraries of its nvidia-* packages, come
# with torch: never grafted into our wheel (a second copy in the process).
excluded=()
for soname in $(cd "$site" && ls torch/lib nvidia/*/lib 2>/dev/null | grep '\.so' | sort -u); do
  excluded+=(--exclude "$soname")
done
"$py" -m auditwheel repair "${excluded[@]}" -w "$work/repaired" "$wheel" > "$work/repair.log" 2>&1 \
  || { tail -40 "$work/repair.log"; fail "auditwheel repair"; }
repaired=$(ls "$work"/repaired/regiontrace-*.whl)
"$py" -m pip install --quiet --no-deps "$repaired"
grafted=$(ls "$site/regiontrace.libs" 2>/dev/null | tr '\n' ' ')
[ -n "$grafted" ] || fail "auditwheel grafted nothing"
elf_count=0
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep -q 'ELF' || continue
  elf_count=$((elf_count + 1))
  while read -r line; do
    case "$line" in
      *"not found"*) fail "$f: $line" ;;
      *"=>"*) lib=$(echo "$line" | awk '{print $3}') ;;
      *) continue ;;
    esac
    name=$(basename "$lib")
    case "$lib" in
      "$site/torch/lib/"* | "$site"/nvidia/*/lib/* | "$site/regiontrace.libs/"* | "$site/regiontrace/"*) ;;
      /lib/x86_64-linux-gnu/* | /usr/lib/x86_64-linux-gnu/*)
        case "$name" in
          # glibc, the C++ runtime, and zlib: the libraries every manylinux
          # platform has (auditwheel's policy never grafts them; Debian's
          # prometheus-cpp, which the wheel carries, needs libz.so.1).
          libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libutil.so.* | \
            libresolv.so.* | ld-linux-x86-64.so.* | libstdc++.so.* | libgcc_s.so.* | libz.so.1) ;;
          *) fail "$f resolves $name to the system's $lib" ;;
        esac ;;
      *) fail "$f resolves $name to $lib" ;;
    esac
  done < <(ldd "$f" 2>&1)
done < <(find "$site/regiontrace" "$site/regiontrace.libs" -type f -print0)
pass "$(basename "$repaired"): $elf_count ELF files resolve only to glibc, libstdc++/libgcc, zlib, torch's and the wheel's own libraries; grafted: $grafted"
REGIONTRACE_SINKS=timeline REGIONTRACE_OUTPUT_DIR="$user/repaired" "$py" -c '
import regiontrace
with regiontrace.region("repaired"):
    pass
regiontrace.shutdown()'
regiontrace summary "$user"/repaired/timeline_*.json* | grep -q repaired || fail "the repaired wheel's timeline"
"$py" -m pip uninstall -y regiontrace > /dev/null
pass "the repaired wheel records and reads a region"
stage "wheel repaired and checked"

echo "pip_install: $passed passed, 0 failed in $((SECONDS - started)) s"
