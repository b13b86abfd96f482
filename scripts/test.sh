#!/usr/bin/env bash
# Everything CI runs: install, build, the whole ctest suite, the pip install
# of the sdist into a fresh venv, the GPU check
# (its CPU path without a GPU), the core suite again under
# AddressSanitizer+UBSan and ThreadSanitizer, the exit paths of the sinks
# and examples under ASan+UBSan with libtorch, and 30 s of libFuzzer on each
# parser of user input.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
# Tests and benchmarks on, also after scripts/demo.sh built without them.
bash scripts/build.sh -DREGIONTRACE_BUILD_TESTS=ON -DREGIONTRACE_BUILD_BENCHMARKS=ON
(cd build && ctest --output-on-failure -j"$(nproc)" --timeout 900)

# The pip route as a user takes it: the sdist into a fresh venv with the
# pinned torch, then the package, CLI, CMake package and repaired wheel used
# from outside the checkout (tests/pip_install/check_pip_install.sh).
bash tests/pip_install/check_pip_install.sh

# The GPU check: on a machine without a GPU it checks that the CUDA code
# compiled out of build/ and that the cuda tests skip; with one, everything.
bash scripts/gpu_check.sh

# GCC 12's sanitizer runtimes predate kernels with 32 bits of mmap
# randomisation (vm.mmap_rnd_bits=32): ASan then hangs at random in
# "AddressSanitizer:DEADLYSIGNAL" and TSan dies with "unexpected memory
# mapping". Address-space randomisation is switched off for the sanitized
# runs only, by personality (setarch -R) when the machine allows it: their
# builds too, since gtest_discover_tests runs each test program to list it.
sanitized=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  sanitized=(setarch "$(uname -m)" -R)
elif [ "$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 28)" -gt 28 ]; then
  echo "test.sh: setarch -R is not allowed here and vm.mmap_rnd_bits is above 28:" \
    "sanitized tests may hang; each has a 300 s limit" >&2
fi
# GCC 12's ASan guesses the extent of a dlopen'd library's thread-local block
# (our plugins') from the 16 bytes before it when it starts 16 bytes into a
# page, as glibc 2.19 laid it out. glibc 2.36 mallocs the block, so those
# bytes are ASan's own chunk header, and at exit LeakSanitizer scans from a
# stack-depot id as if it were an address ("Tracer caught signal 11"), in
# whichever run's heap layout puts a block there. Without the interception
# LeakSanitizer still reaches those blocks: ld.so allocated them, and it
# scans what the linker allocates.
export ASAN_OPTIONS="intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

# Sanitizers: the core alone (no libtorch, whose prebuilt libraries are not
# instrumented), with the test plugins, and the timeline sink (no libtorch
# either: this is also its REGIONTRACE_WITH_TORCH=OFF build).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
for sanitizer in address thread; do
  dir=build-$sanitizer
  mkdir -p "$dir"  # its configure.log goes inside, like build/'s
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREGIONTRACE_SANITIZER=$sanitizer \
    -DREGIONTRACE_WITH_TORCH=OFF -DREGIONTRACE_WITH_NVTX=OFF -DREGIONTRACE_BUILD_EXAMPLES=OFF \
    -DREGIONTRACE_BUILD_BENCHMARKS=OFF > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
  "${sanitized[@]}" cmake --build "$dir" -j"$(nproc)" --target regiontrace_core_tests \
    regiontrace_core_internal_tests regiontrace_timeline_tests regiontrace_timeline_unit_tests
  # A forked child starting its own sinks starts a thread: allowed, though
  # TSan cannot follow it.
  (cd "$dir" && TSAN_OPTIONS=die_after_fork=0 "${sanitized[@]}" \
    ctest --output-on-failure -j"$(nproc)" --timeout 300 -L 'core|timeline' -E out_of_tree)
done

# The sinks, core/torch and the examples under ASan+UBSan, with libtorch:
# the wheel's prebuilt libtorch is not instrumented, our code around it is,
# and the exit-path tests close every sink from the exit handler.
# Only what those tests run is built.
source scripts/python_env.sh
dir=build-address-torch
mkdir -p "$dir"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREGIONTRACE_SANITIZER=address \
  -DREGIONTRACE_PYTHON="$REGIONTRACE_PYTHON" -DREGIONTRACE_WITH_PYTHON=OFF \
  -DREGIONTRACE_BUILD_BENCHMARKS=OFF > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
"${sanitized[@]}" cmake --build "$dir" -j"$(nproc)" --target regiontrace_examples_tests
# libtorch's own leaks (only those) are suppressed; print_suppressions=0 keeps
# LeakSanitizer's tally out of the output the tests read.
(cd "$dir" && LSAN_OPTIONS="suppressions=$PWD/../tests/sanitizers/lsan_libtorch.supp:print_suppressions=0" \
  "${sanitized[@]}" ctest --output-on-failure -j"$(nproc)" --timeout 300 -R '^ExitPath\.')

# The parsers of user input (profiles, catalogs, activation JSONL, Chrome
# traces) under libFuzzer with ASan+UBSan, 30 s each from the seed corpora.
bash scripts/fuzz.sh 30
