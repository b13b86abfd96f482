#!/usr/bin/env bash
# A library from Debian's archive missing at build time: configure stops with
# a message that names the Debian package to install. Each library is hidden
# from find_package with CMAKE_DISABLE_FIND_PACKAGE_<name> (no libtorch:
# the messages come before it matters, and the configure takes seconds).
#
#   missing_library_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
source_dir=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
checked=0
for pair in yaml-cpp:libyaml-cpp-dev Boost:libboost-dev ZLIB:zlib1g-dev simdjson:libsimdjson-dev \
  CLI11:libcli11-dev benchmark:libbenchmark-dev; do
  name=${pair%%:*}
  debian=${pair#*:}
  build="$work/$name"
  if cmake -S "$source_dir" -B "$build" -DREGIONTRACE_WITH_TORCH=OFF -DREGIONTRACE_WITH_NVTX=OFF \
    -DREGIONTRACE_WITH_PYTHON=OFF -DREGIONTRACE_BUILD_TESTS=OFF -DREGIONTRACE_BUILD_BENCHMARKS=ON \
    -DCMAKE_DISABLE_FIND_PACKAGE_"$name"=ON > "$work/$name.log" 2>&1; then
    echo "FAIL: configured without $name"
    exit 1
  fi
  # CMake wraps a message's lines: read it as one line.
  tr -s ' \n' '  ' < "$work/$name.log" > "$work/$name.flat"
  if ! grep -q "regiontrace needs $name (.*): install the Debian package $debian (apt-get install $debian" \
    "$work/$name.flat"; then
    cat "$work/$name.log"
    echo "FAIL: without $name, the message does not name $debian"
    exit 1
  fi
  echo "ok: without $name: $(grep -o "regiontrace needs $name[^;]*" "$work/$name.flat" | head -1)"
  checked=$((checked + 1))
done
echo "$checked missing libraries, each named with its Debian package"
