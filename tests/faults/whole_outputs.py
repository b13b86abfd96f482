"""The shared whole-output checker: every file a run left in a folder is
whole. A JSONL file holds whole, parseable lines only; a .json file parses;
a .json.gz file decompresses and parses. Temporary files of the atomic
writers (`<name>.tmp<pid>.<n>`) are not outputs: a process killed while
writing leaves them, never a half file under the final name.

    python3 whole_outputs.py FOLDER...      exit 1 and one line per problem
"""

import gzip
import json
import os
import re
import sys

_TEMPORARY = re.compile(r"\.tmp\d+\.\d+$")


def problems_of_file(path):
    """Returns a list of problems (empty when the file is whole)."""
    name = os.path.basename(path)
    if _TEMPORARY.search(name):
        return []
    try:
        if name.endswith(".jsonl"):
            with open(path, "rb") as f:
                data = f.read()
            if data and not data.endswith(b"\n"):
                torn = len(data) - data.rfind(b"\n") - 1
                return [f"{path}: ends in a torn line ({torn} bytes after the last newline)"]
            out = []
            for number, line in enumerate(data.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    json.loads(line)
                except ValueError as e:
                    out.append(f"{path}:{number}: not a whole JSON line ({e})")
            return out
        if name.endswith(".json.gz"):
            with gzip.open(path, "rb") as f:
                json.loads(f.read())
            return []
        if name.endswith(".json"):
            with open(path, "rb") as f:
                json.loads(f.read())
            return []
    except (OSError, EOFError, ValueError) as e:
        return [f"{path}: {type(e).__name__}: {e}"]
    return []


def problems(folder):
    """Problems of every output under `folder`, and how many files were read."""
    out, checked = [], 0
    for root, _, files in os.walk(folder):
        for name in sorted(files):
            path = os.path.join(root, name)
            if name.endswith((".jsonl", ".json", ".json.gz")) and not _TEMPORARY.search(name):
                checked += 1
            out.extend(problems_of_file(path))
    return out, checked


def main(folders):
    status = 0
    for folder in folders:
        found, checked = problems(folder)
        for p in found:
            print(p)
        status |= bool(found)
        print(f"{folder}: {checked} outputs, {len(found)} problems")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
