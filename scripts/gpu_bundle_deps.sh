#!/usr/bin/env bash
# Downloads (does not install) the Debian packages regiontrace builds on,
# into one folder, for a GPU machine that has CUDA PyTorch and a compiler but
# no package registry:
#
#   bash scripts/gpu_bundle_deps.sh .gpu-deps        # here, where apt works
#   bash scripts/gpu_check.sh --deps .gpu-deps       # there
#
# gpu_check.sh unpacks them into its build folder (dpkg -x, nothing is
# installed system-wide) and points CMake at them. About 13 MB.
set -euo pipefail
dest=${1:-.gpu-deps}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
packages=(
  libyaml-cpp-dev libyaml-cpp0.7
  libboost1.81-dev
  libgtest-dev libgmock-dev
  libsimdjson-dev libsimdjson14
  libcli11-dev nlohmann-json3-dev
  zlib1g-dev zlib1g
)
if ! apt-cache show "${packages[0]}" >/dev/null 2>&1; then
  apt-get update -qq
fi
rm -f "$dest"/*.deb
(cd "$dest" && apt-get download -qq "${packages[@]}")
du -sh "$dest"
