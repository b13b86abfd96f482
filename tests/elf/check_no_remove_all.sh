#!/usr/bin/env bash
# No ELF file under the given folders that loads libtorch calls
# std::filesystem::remove_all. PyPI's libtorch 2.5-2.11 exports its own copy
# of it (pytorch/pytorch#133437); in a process that loads libtorch that copy
# wins the lookup and, with a newer system libstdc++, jumps to a null
# recursive_directory_iterator::__erase: a crash seen on the GPU check.
# Usage: check_no_remove_all.sh <folder>...
set -euo pipefail
checked=0
bad=0
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep -q 'ELF' || continue
  # Whole outputs, then grep: grep -q closing a pipe early fails it under pipefail.
  imports=$(nm -D --undefined-only "$f" 2>/dev/null || true)
  grep -q '_ZNSt10filesystem10remove_all' <<< "$imports" || continue
  checked=$((checked + 1))
  libraries=$(ldd "$f" 2>/dev/null || true)
  if grep -q 'libtorch' <<< "$libraries"; then
    echo "$f: calls std::filesystem::remove_all and loads libtorch (use a removal of its own)" >&2
    bad=$((bad + 1))
  fi
done < <(for d in "$@"; do [ -d "$d" ] && find "$d" -type f \( -name '*.so*' -o -perm -u+x \) -print0; done)
echo "$checked file(s) call remove_all, $bad of them load libtorch"
[ "$bad" -eq 0 ]
