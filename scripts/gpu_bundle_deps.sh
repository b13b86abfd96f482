#!/usr/bin/env bash
# Downloads (does not install) the Debian packages regiontrace builds on, and
# the pybind11 and pytest wheels its Python module and tests need, into one
# folder, for a GPU machine that has CUDA PyTorch, the CUDA toolkit and a
# compiler but no package registry:
#
#   bash scripts/gpu_bundle_deps.sh .gpu-deps        # here, where apt works
#   bash scripts/gpu_check.sh --deps .gpu-deps       # there
#
# gpu_check.sh unpacks them into its build folder (dpkg -x, nothing is
# installed system-wide) and points CMake at them, and pip-installs the
# wheels for the interpreter it uses. About 16 MB.
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
  libre2-dev libre2-9 libfmt-dev libfmt9
  prometheus-cpp-dev libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0
  libprometheus-cpp-push1.0 libcivetweb-dev libcivetweb1
  civetweb  # civetweb-targets.cmake insists its server program exists
  pkgconf-bin libpkgconf3  # CMake finds re2 through pkg-config; an image may lack it
)
if ! apt-cache show "${packages[0]}" >/dev/null 2>&1; then
  apt-get update -qq
fi
rm -f "$dest"/*.deb
(cd "$dest" && apt-get download -qq "${packages[@]}")
# Pure-Python wheels, any interpreter 3.x: pybind11 as scripts/requirements.txt pins it.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/python_env.sh"
"$REGIONTRACE_PYTHON" -m pip download --quiet --only-binary=:all: --python-version 3.12 \
  --dest "$dest" "$(grep '^pybind11==' "$here/requirements.txt")" \
  "$(grep '^pytest==' "$here/requirements.txt")"
du -sh "$dest"
