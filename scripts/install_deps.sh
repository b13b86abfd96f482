#!/usr/bin/env bash
# Installs what regiontrace builds on, from Debian's archive (run as root on
# Debian 12). NVTX3 headers come from the CUDA toolkit under /usr/local/cuda
# when present; without them the nvtx sink is skipped.
set -euo pipefail
packages=(
  build-essential cmake ccache git pkg-config
  libtorch-dev            # libtorch (CPU) for core/torch and the torch sinks
  libyaml-cpp-dev         # YAML profiles and region catalogs
  libre2-dev              # the activation_trace sink's user patterns (linear-time regex)
  libfmt-dev              # activation_trace: Dragonbox for the JSONL's doubles (header-only use)
  libboost-dev            # Boost.DLL (plugins) and Boost.PropertyTree (config tree)
  libgtest-dev libbenchmark-dev
  libsimdjson-dev         # the CLI's JSON reader (diff, merge, summary)
  libcli11-dev            # the CLI's argument parser
  nlohmann-json3-dev      # tests parse what sinks write
  zlib1g-dev              # .json.gz traces
  python3-torch           # PyTorch for /usr/bin/python3 (the same libtorch): Python-side tests
  python3-dev pybind11-dev python3-pybind11   # the `regiontrace` Python module (python/)
  python3-pytest          # the Python package's tests, run by ctest
  clang libclang-rt-14-dev   # libFuzzer targets (scripts/fuzz.sh)
  prometheus-cpp-dev      # the region_stats sink's live metrics endpoint
  openmpi-bin libopenmpi-dev   # launcher tests: 4 ranks under mpirun
  chromium                # headless viewer tests (report HTML; speedscope where it is installed)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

