#!/usr/bin/env python3
"""Fails when libregiontrace.so exports anything outside its public surface.

Lists the library's dynamic, defined symbols (nm -D --defined-only,
demangled) and accepts only:
  - C functions named regiontrace_* (the C API);
  - names in namespace regiontrace (an inline ABI namespace such as
    regiontrace::v1 included), and their type information and vtables,
    where every part of the name is a word of the public headers
    (core/include/regiontrace); in namespace regiontrace::detail only the
    names those headers declare REGIONTRACE_API (what their inline code calls);
  - the symbols the linker itself defines (_init, _edata, ...).
Prints every other symbol and exits 1.

Usage: check_exported_symbols.py LIBRARY PUBLIC_INCLUDE_DIR [--nm NM]
"""
import argparse
import pathlib
import re
import subprocess
import sys

LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}
SPECIAL_PREFIXES = (
    "typeinfo name for ",
    "typeinfo for ",
    "vtable for ",
    "VTT for ",
    "guard variable for ",
    "TLS init function for ",
    "TLS wrapper function for ",
)
IGNORED_PARTS = {"regiontrace", "detail", "operator"}


def public_words(include_dir):
    """Every word of the public headers, and the names they declare
    REGIONTRACE_API inside a namespace `detail`."""
    words, detail_api = set(), set()
    token = re.compile(r"namespace\s+([\w:]+)\s*\{|\{|\}|REGIONTRACE_API\b[^;{(]*?"
                       r"\b([A-Za-z_]\w*)\s*[;({]")
    for header in sorted(pathlib.Path(include_dir).rglob("*.hpp")):
        text = re.sub(r"//[^\n]*|/\*.*?\*/", "", header.read_text(encoding="utf-8"),
                      flags=re.S)
        # Attributes are not names: `REGIONTRACE_API __thread T* name
        # __attribute__((tls_model("initial-exec")));` declares `name`.
        text = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", "", text)
        words.update(re.findall(r"[A-Za-z_]\w*", text))
        stack = []  # one entry per open brace: the namespace it opens, or None
        for m in token.finditer(text):
            if m.group(1):
                stack.append(m.group(1))
            elif m.group(0) == "{":
                stack.append(None)
            elif m.group(0) == "}":
                if stack:
                    stack.pop()
            elif m.group(2):
                namespaces = [n for n in stack if n]
                if namespaces and namespaces[-1].split("::")[-1] == "detail":
                    detail_api.add(m.group(2))
    return words, detail_api


def strip_templates(name):
    out, depth = [], 0
    for c in name:
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(c)
    return "".join(out)


def allowed(symbol, words, detail_api):
    if symbol in LINKER_SYMBOLS:
        return True
    if symbol.startswith("regiontrace_") and "::" not in symbol and "(" not in symbol:
        return True
    for prefix in SPECIAL_PREFIXES:
        if symbol.startswith(prefix):
            symbol = symbol[len(prefix):]
            break
    if not symbol.startswith("regiontrace::"):
        return False
    qualified = strip_templates(symbol.split("(", 1)[0])
    qualified = re.sub(r"\[abi:\w+\]", "", qualified)
    parts = qualified.split("::")
    if len(parts) > 1 and re.fullmatch(r"v\d+", parts[1]):
        parts = [parts[0]] + parts[2:]  # an inline ABI namespace
    if len(parts) > 1 and parts[1] == "detail":
        return len(parts) == 3 and parts[2] in detail_api
    for part in parts:
        ident = part.strip().lstrip("~")
        if ident in IGNORED_PARTS or ident.startswith("operator"):
            continue
        if ident not in words:
            return False
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("include_dir")
    parser.add_argument("--nm", default="nm")
    args = parser.parse_args()

    out = subprocess.run([args.nm, "-D", "--defined-only", "-C", args.library],
                         check=True, capture_output=True, text=True).stdout
    symbols = []
    for line in out.splitlines():
        fields = line.split(None, 2)
        if len(fields) == 3:
            symbols.append(fields[2])
    if not symbols:
        print(f"no exported symbols read from {args.library}")
        return 1
    words, detail_api = public_words(args.include_dir)
    bad = sorted(s for s in symbols if not allowed(s, words, detail_api))
    print(f"{args.library}: {len(symbols)} exported symbols")
    if bad:
        print(f"{len(bad)} outside the public surface (regiontrace:: public API, "
              f"regiontrace_ C API):")
        for s in bad:
            print("  " + s)
        return 1
    print("all within the public surface")
    return 0


if __name__ == "__main__":
    sys.exit(main())
