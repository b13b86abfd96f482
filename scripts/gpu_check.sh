#!/usr/bin/env bash
# One script, one report: everything regiontrace does on a GPU, checked in one
# run on a machine with `nvidia-smi` and a Python whose PyTorch has CUDA.
#
#   bash scripts/gpu_check.sh                     # GPU machine with the build deps
#   bash scripts/gpu_check.sh --deps .gpu-deps    # ... without a package registry
#                                                 # (see scripts/gpu_bundle_deps.sh)
#
# GPU path: builds build-gpu/ against that PyTorch's libtorch, runs the tests
# labelled `cuda`, video_pipeline on the GPU under quickstart.yaml and
# kernels.yaml, checks kernels in the torch trace (device, stream, inside
# their region spans), device figures and a pickled allocator snapshot that
# PyTorch's own memory_viz reads, NVTX ranges seen by regiontrace-nvtx-record,
# then the whole suite. Writes gpu_check_report.md (pass/fail per item and the
# figures) and exits non-zero on any failure.
#
# Without a GPU (the rehearsal CI runs): checks that build/ (scripts/build.sh,
# configured as the GPU path configures build-gpu/: the CUDA libtorch, nvcc,
# sm_90 plus PTX) compiled its CUDA parts and that the cuda tests skip, and
# exits 0 when they hold. On a GPU machine only running is then left.
#
# A GPU machine without a package registry needs, beside a CUDA PyTorch 2.x
# and a C++ compiler, what scripts/gpu_bundle_deps.sh downloads here: the
# Debian packages regiontrace builds on (yaml-cpp, Boost headers, re2, fmt,
# prometheus-cpp, GoogleTest, simdjson, CLI11, nlohmann-json, zlib) and the
# pybind11 and pytest wheels, about 16 MB in all. Its CUDA toolkit (nvcc,
# NVTX3 headers) must be there.
#
# Environment: REGIONTRACE_PYTHON (the Python with CUDA PyTorch; default: the
# first python3 that has it), GPU_CHECK_BUILD_DIR (build-gpu),
# GPU_CHECK_REPORT (gpu_check_report.md), GPU_CHECK_WORK_DIR (logs and
# outputs; a new folder under /tmp), GPU_CHECK_SUITE_TIMEOUT (seconds for the
# whole suite, 900).
#
#   --quick   builds only what the GPU items run and skips the whole suite:
#             for a short device lease.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
deps=""
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --deps) deps=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    *) echo "gpu_check.sh: unknown argument '$1' (valid: --deps DIR, --quick)" >&2; exit 2 ;;
  esac
done
report=${GPU_CHECK_REPORT:-$root/gpu_check_report.md}
build=${GPU_CHECK_BUILD_DIR:-$root/build-gpu}
work=${GPU_CHECK_WORK_DIR:-$(mktemp -d /tmp/gpu_check.XXXXXX)}
mkdir -p "$work"
failures=0

say() { printf '%s\n' "$*" | tee -a "$report"; }
# check NAME COMMAND...: runs it, logs to $work/NAME.log, records pass/fail.
check() {
  local name=$1; shift
  local start=$SECONDS
  if "$@" >"$work/$name.log" 2>&1; then
    say "| $name | PASS | $((SECONDS - start)) s |"
  else
    failures=$((failures + 1))
    say "| $name | FAIL | $((SECONDS - start)) s: \`$(tail -n 3 "$work/$name.log" | tr '\n|`' '   ' | cut -c1-300)\` |"
    echo "---- $name (last 40 lines of $work/$name.log) ----" >&2
    tail -n 40 "$work/$name.log" >&2
  fi
}

find_cuda_python() {
  for p in "${REGIONTRACE_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && command -v "$p" >/dev/null 2>&1 || continue
    if "$p" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
      command -v "$p"
      return 0
    fi
  done
  return 1
}

: >"$report"
say "# regiontrace GPU check"
say ""
say "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
say ""

python=""
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  python=$(find_cuda_python) || python=""
fi

# --- no GPU: the rehearsal ---------------------------------------------------------
# build/ is configured exactly as the GPU path configures build-gpu/ (the
# CUDA libtorch of REGIONTRACE_PYTHON, nvcc, sm_90 plus PTX), so here the
# check is that that build completed with its CUDA parts and that the cuda
# tests skip with their reason: on a GPU machine only running is left.
if [ -z "$python" ]; then
  say "No GPU here (no working nvidia-smi, or no Python whose PyTorch sees CUDA):"
  say "checking that build/ compiled the CUDA parts against the CUDA libtorch and that the cuda tests skip."
  say ""
  say "| item | result | detail |"
  say "|---|---|---|"
  cpu_build=$root/build
  if [ ! -f "$cpu_build/CMakeCache.txt" ]; then
    say "| rehearsal | SKIP | no build/ (run scripts/build.sh first) |"
    exit 0
  fi
  if ! grep -q 'CUDA: ON' "$cpu_build/configure.log"; then
    # A machine without the toolkit or with a CPU libtorch: nothing to rehearse.
    check cuda_compiled_out bash -c "
      plugin=\$(ls '$cpu_build'/lib/regiontrace/plugins/*memory_snapshot*.so 2>/dev/null | head -1)
      [ -z \"\$plugin\" ] && exit 0
      ! nm -D --undefined-only \"\$plugin\" | grep -q '_ZN3c104cuda' || { echo \"\$plugin needs c10::cuda\"; exit 1; }"
  else
    # The fused statistics kernel: Hopper SASS and PTX for later GPUs (read
    # from the library's fat binary: the toolkit here has no cuobjdump).
    check cuda_kernel_sm90_ptx bash -c "
      lib=\$(ls '$cpu_build'/lib/libregiontrace_tensor_stats.so.*.*.* | head -1)
      archs=\$(python3 '$root/scripts/fatbin_archs.py' \"\$lib\") || { echo \"\$lib has no device code\"; exit 1; }
      echo \"\$archs\"
      echo \"\$archs\" | grep -qx 'elf sm_90' && echo \"\$archs\" | grep -qx 'ptx sm_90'"
    # The allocator snapshots and device figures link libtorch's CUDA side.
    check memory_sink_links_cuda bash -c "
      plugin=\$(ls '$cpu_build'/lib/regiontrace/plugins/*memory_snapshot*.so | head -1)
      nm -D --undefined-only \"\$plugin\" | grep -q '_ZN3c104cuda' || { echo \"\$plugin has no c10::cuda reference\"; exit 1; }"
  fi
  check cuda_tests_skip bash -c "
    cd '$cpu_build' && out=\$(ctest -L cuda --output-on-failure 2>&1); rc=\$?; echo \"\$out\"
    [ \$rc -eq 0 ] || exit 1
    total=\$(echo \"\$out\" | sed -n 's/.*tests passed, [0-9]* tests failed out of \\([0-9]*\\).*/\\1/p')
    skipped=\$(echo \"\$out\" | grep -c '\\*\\*\\*Skipped')
    echo \"total=\$total skipped=\$skipped\"
    [ -n \"\$total\" ] && [ \"\$total\" -gt 0 ] && [ \"\$skipped\" -eq \"\$total\" ]"
  say ""
  say "Not run: everything that needs a GPU."
  [ -n "${GPU_CHECK_WORK_DIR:-}" ] || rm -rf "$work"
  [ "$failures" -eq 0 ]
  exit
fi

# --- GPU -------------------------------------------------------------------------
say "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"
say "Python: $python, $("$python" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)')"
say "Compilers: $(c++ --version | head -1); $(nvcc --version 2>/dev/null | tail -1)"
say ""

# CMake 4 (the GPU image's) refuses dependencies' configs that declare
# compatibility with CMake < 3.5 unless told this minimum.
export CMAKE_POLICY_VERSION_MINIMUM=${CMAKE_POLICY_VERSION_MINIMUM:-3.5}
cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DREGIONTRACE_PYTHON="$python"
            -DREGIONTRACE_BUILD_BENCHMARKS=OFF -DTORCH_CUDA_ARCH_LIST=9.0+PTX)
cuda_root=/usr/local/cuda
[ -x "$cuda_root/bin/nvcc" ] || cuda_root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
[ -x "$cuda_root/bin/nvcc" ] && cmake_args+=(-DCUDAToolkit_ROOT="$cuda_root" -DCMAKE_CUDA_COMPILER="$cuda_root/bin/nvcc")
command -v ninja >/dev/null 2>&1 && cmake_args+=(-G Ninja)
# No GPU item needs the Python module, and an image's CMake and pybind11 may
# not agree (CMake 4.4 with pybind11 3.1: no python_add_library).
[ "$quick" -eq 1 ] && cmake_args+=(-DREGIONTRACE_WITH_PYTHON=OFF)
if [ -n "$deps" ]; then
  # Debian packages unpacked into the build folder; absolute links inside
  # them re-pointed into the unpacked tree.
  prefix=$build/deps
  mkdir -p "$prefix"
  for f in "$deps"/*.deb; do
    if command -v dpkg >/dev/null 2>&1; then
      dpkg -x "$f" "$prefix"
    else  # a .deb is an ar archive holding data.tar.*
      member=$(ar t "$f" | grep '^data.tar')
      case "$member" in
        *.xz) unpack=(-J) ;; *.zst) unpack=(--zstd) ;; *.gz) unpack=(-z) ;; *) unpack=() ;;
      esac
      ar p "$f" "$member" | tar -x "${unpack[@]}" -C "$prefix"
    fi
  done
  find "$prefix" -type l -lname '/*' | while read -r l; do
    ln -sfn "$prefix$(readlink "$l")" "$l"
  done
  cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix/usr;$prefix/usr/lib/x86_64-linux-gnu/cmake")
  if ls "$deps"/*.whl >/dev/null 2>&1; then
    "$python" -m pip install --quiet --no-index --find-links "$deps" pybind11 pytest ||
      say "(the bundled pybind11/pytest wheels did not install for $python)"
  fi
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:$prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export CPATH="$prefix/usr/include${CPATH:+:$CPATH}"
  # The packages' .pc files say prefix=/usr: the sysroot puts their -I and
  # -L inside the unpacked tree, and only that tree is searched.
  export PKG_CONFIG_LIBDIR="$prefix/usr/lib/x86_64-linux-gnu/pkgconfig:$prefix/usr/share/pkgconfig"
  export PKG_CONFIG_SYSROOT_DIR="$prefix"
  command -v pkg-config >/dev/null 2>&1 || cmake_args+=(-DPKG_CONFIG_EXECUTABLE="$prefix/usr/bin/pkgconf")
fi

say "| item | result | detail |"
say "|---|---|---|"
check configure cmake -S "$root" -B "$build" "${cmake_args[@]}"
grep -E 'regiontrace' "$work/configure.log" | sed 's/^-- /    /' >>"$work/summary.txt" || true
# Keep going past a failing file: one run then shows every compile error,
# and whatever did build is still checked below.
keep_going=(-k); [[ " ${cmake_args[*]} " == *" -G Ninja "* ]] && keep_going=(-k 0)
targets=()
if [ "$quick" -eq 1 ]; then
  for t in regiontrace_cuda_tests regiontrace_gpu_figures regiontrace_torch_profiler_workload \
           video_pipeline regiontrace_nvtx_record regiontrace_nvtx_injection \
           regiontrace_sink_torch_profiler regiontrace_sink_memory_snapshot \
           regiontrace_sink_activation_trace regiontrace_sink_nvtx regiontrace_sink_region_stats \
           regiontrace_sink_timeline regiontrace_python; do
    targets+=(--target "$t")
  done
fi
check build cmake --build "$build" -j"$(nproc)" "${targets[@]}" -- "${keep_going[@]}"
bin=$build/bin

# On a GPU none of them may skip.
check cuda_tests bash -c "set -o pipefail; cd '$build' && ctest -L cuda --output-on-failure -j4 --timeout 600 | tee '$work/cuda_ctest.txt' &&
  ! grep -q '\*\*\*Skipped' '$work/cuda_ctest.txt' && ! grep -q 'Total Tests: 0' '$work/cuda_ctest.txt'"

# video_pipeline on the GPU under the two profiles.
pipeline() {  # profile out_dir [env...]
  local profile=$1 out=$2; shift 2
  rm -rf "$out"
  env REGIONTRACE_LOG_LEVEL=warn "$@" "$bin/video_pipeline" --device cuda --profile "$root/config/profiles/$profile" \
    --trace-dir "$out" --output "$out/video" --steps 6
}
check pipeline_quickstart pipeline quickstart.yaml "$work/quickstart" \
  REGIONTRACE_TORCH_PROFILER_ACTIVITIES=cpu,cuda REGIONTRACE_MEMORY_SNAPSHOT_SNAPSHOT_ON_EXIT=inference_denoising \
  REGIONTRACE_MEMORY_SNAPSHOT_CUDA_RECORD_HISTORY=true \
  REGIONTRACE_ACTIVATION_TRACE_STATS=abs_mean,mean,std,min,max,sum,device
check pipeline_kernels pipeline kernels.yaml "$work/kernels" REGIONTRACE_TORCH_PROFILER_ACTIVITIES=cpu,cuda
check trace_kernels_nest "$python" "$root/scripts/gpu_check_outputs.py" kernels "$work/quickstart" "$work/kernels"
check memory_device_stats "$python" "$root/scripts/gpu_check_outputs.py" memory "$work/quickstart"
check allocator_snapshot_reads "$python" "$root/scripts/gpu_check_outputs.py" pickle "$work/quickstart"
check activations_on_device "$python" "$root/scripts/gpu_check_outputs.py" activations "$work/quickstart"
if [ -x "$bin/regiontrace-nvtx-record" ]; then
  check nvtx_ranges bash -c "
    cd '$work' && REGIONTRACE_CONFIG='$root/config/profiles/nsys.yaml' '$bin/regiontrace-nvtx-record' \
      --format json --report nvtx_tree.json -o nvtx_calls.jsonl -- '$bin/video_pipeline' --device cuda \
      --steps 2 --output '$work/nvtx_video' &&
    grep -q 'region::profiler_region_inference_denoising' nvtx_tree.json &&
    grep -q 'region::blocks.0' nvtx_tree.json"
else
  failures=$((failures + 1))
  say "| nvtx_ranges | FAIL | regiontrace-nvtx-record was not built (NVTX3 headers not found) |"
fi
check figures bash -c "'$bin/regiontrace_gpu_figures' '$work/figures' > '$work/figures.json'"
# Issue 47: every statistic of a 1 GiB tensor in at most 1.25x one torch.sum
# of it, per dtype, from the figures (which measure both): one row each.
stats_rows=$("$python" - "$work/figures.json" <<'PY'
import json, sys
figures = json.load(open(sys.argv[1]))
failing = 0
for dtype in ("fp32", "bf16", "fp16"):
    s = figures.get("stats_" + dtype)
    if s is None:
        print(f"| fused_stats_{dtype} | FAIL | no figure |")
        failing += 1
        continue
    print(f"| fused_stats_{dtype} | {s['verdict']} | {s['fused_stats_ms']:.3f} ms against torch.sum "
          f"{s['torch_sum_ms']:.3f} ms: {s['ratio']:.2f}x (target {s['target_ratio']:.2f}x), "
          f"{s['fused_stats_GBps']:.0f} against {s['torch_sum_GBps']:.0f} GB/s |")
    failing += s["verdict"] != "PASS"
sys.exit(failing)
PY
)
stats_failing=$?
[ -n "$stats_rows" ] && say "$stats_rows"
if [ -z "$stats_rows" ]; then
  stats_failing=1
  say "| fused_stats | FAIL | no readable figures in $work/figures.json |"
fi
failures=$((failures + stats_failing))
# Regions inside torch.compile'd code, with and without CUDA graphs.
check compiled_regions env PYTHONPATH="$build/python" "$python" "$root/scripts/gpu_check_compiled.py" "$work/compiled"

suite_timeout=${GPU_CHECK_SUITE_TIMEOUT:-900}
if [ ${#targets[@]} -eq 0 ]; then
  check whole_suite timeout "$suite_timeout" bash -c "cd '$build' && ctest -LE cuda --output-on-failure -j$(nproc) --timeout 300"
else
  say "| whole_suite | NOT RUN | --quick: only what the GPU items run was built |"
fi

say ""
say "## Figures"
say ""
say '```json'
cat "$work/figures.json" 2>/dev/null | tee -a "$report"
say '```'
say ""
say "## Build"
say ""
say '```'
cat "$work/summary.txt" 2>/dev/null | tee -a "$report"
grep -E 'tests passed|tests failed|\*\*\*Failed|Not Run|Timeout' "$work/whole_suite.log" 2>/dev/null | tail -n 30 | tee -a "$report"
say '```'
say ""
say "$failures failing item(s); logs in $work"
[ "$failures" -eq 0 ]
