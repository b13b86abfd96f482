#!/usr/bin/env bash
# Every ELF file under the given folders: each entry of its RUNPATH and
# RPATH is absolute or starts with $ORIGIN. The dynamic loader reads an
# empty entry as the current folder and a relative one from it, so a
# library planted where a user runs the program from would be loaded.
# Usage: check_search_paths.sh <folder>...
set -euo pipefail
checked=0
bad=0
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep -q 'ELF' || continue
  checked=$((checked + 1))
  while IFS= read -r value; do
    if [ -z "$value" ]; then
      echo "$f: an empty search path" >&2
      bad=$((bad + 1))
      continue
    fi
    # awk keeps empty fields: "a::b:" is a, "", b, "".
    while IFS= read -r entry; do
      case "$entry" in
        /* | '$ORIGIN' | '$ORIGIN/'*) ;;
        *)
          echo "$f: search path '$value' has the entry '$entry' (the current folder or relative to it)" >&2
          bad=$((bad + 1))
          ;;
      esac
    done < <(awk -F: '{ for (i = 1; i <= NF; i++) print $i }' <<< "$value")
  done < <(readelf -d "$f" 2>/dev/null | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')
done < <(for d in "$@"; do [ -d "$d" ] && find "$d" -type f \( -name '*.so*' -o -perm -u+x \) -print0; done)
[ "$checked" -gt 0 ] || { echo "no ELF files under $*" >&2; exit 1; }
if [ "$bad" -gt 0 ]; then
  echo "$bad unsafe search path entries in $checked ELF files" >&2
  exit 1
fi
echo "$checked ELF files: every RUNPATH/RPATH entry is absolute or \$ORIGIN-relative"
