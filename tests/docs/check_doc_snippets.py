#!/usr/bin/env python3
"""Checks that README.md and docs/*.md run as written.

Installs the build into a temporary prefix, then:
  - every ```cpp block compiles against that prefix (find_package(RegionTrace));
  - every ```sh / ```bash block passes `bash -n`, and no shell line (in a
    block, or an inline `VAR=... cmd` span) has an unquoted `<placeholder>`,
    which a shell reads as a redirection;
  - every ```sh / ```bash block runs, as a user would run it, unless marked
    `<!-- snippet: illustrative <reason> -->`: the blocks of one page in order,
    in one fresh folder laid out like a checkout (build/, config/, examples/),
    with the installed prefix's bin/ first on PATH; what the text says a
    block prints or writes, stated in `<!-- snippet: expect ... -->` comments
    under it, is checked;
  - every profile or catalog path named anywhere (config/profiles/x.yaml,
    share/regiontrace/regions/y.yaml) exists, and relative links resolve;
  - docs/cli.md has a section, with its exit codes, for every command that
    `regiontrace --help` lists, and README's command list names them all;
  - docs/writing-a-sink.md names every field of every event struct and every
    Sink callback that the SDK headers declare;
  - defaults the docs state are the program's: key tables under a
    `(`sinks.<name>.*`)` heading against `regiontrace schema --markdown`
    (and the regex engine a row names against the schema's), `regiontrace
    diff`'s tolerances against `regiontrace diff --help`, and a profile's
    statistics list against the profile.

Conventions for C++ blocks (see tests/docs/README.md):
  - A block with an #include, a top-level definition or REGIONTRACE_SINK_PLUGIN
    is a translation unit as it stands; any other block is a fragment, compiled
    as the body of a function.
  - An HTML comment right above the block, `<!-- snippet: prelude ... -->`,
    holds declarations the block relies on (a model, a tensor), invisible in
    the rendered page.
  - `<!-- snippet: skip <reason> -->` right above a block leaves it out; the
    reason is required.

Shell blocks (see tests/docs/README.md): a `prelude` above one is shell run
first, unseen (a file the text assumes); `illustrative <reason>` above one
leaves it unrun (it is still parsed); under one, any of
  `<!-- snippet: expect <regex> -->`       its output (stdout and stderr) matches
  `<!-- snippet: expect-file <glob> -->`   the glob, from the page's folder, matches
  `<!-- snippet: expect-exit <n> -->`      its last command exits n (default: every
                                           command exits 0, as under set -e)
  `<!-- snippet: timeout <seconds> -->`    instead of the default 60
"""

import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CPP_LANGS = {"cpp", "c++", "cxx"}
SHELL_LANGS = {"sh", "bash", "shell"}
TORCH_WORDS = re.compile(r"\btorch::|\bat::|\bregiontrace::(observe|forward|name_modules)\b|"
                         r"regiontrace/torch\.hpp|\bTORCH_MODULE\b")
TU_LINE = re.compile(r"^(#include|(class|struct|namespace|template|int|void|static|"
                     r"REGIONTRACE_SINK_PLUGIN)\b)")
PLACEHOLDER = re.compile(r"<[A-Za-z][\w.-]*>")
DATA_PATH = re.compile(r"\b(config|share/regiontrace)/(profiles|regions)/([\w.-]+\.ya?ml)\b")
LINK = re.compile(r"\]\(([^)\s]+)\)")


class Block:
    def __init__(self, path, line, lang, text, directive, after=()):
        self.path, self.line, self.lang, self.text, self.directive = path, line, lang, text, directive
        self.after = list(after)  # (name, argument) of the snippet comments under the block

    def where(self):
        return f"{self.path}:{self.line}"


def read_blocks(rel, text):
    """Fenced blocks with the line of their first content line and the
    snippet directive (an HTML comment) right above the fence."""
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = len(m.group(1)), m.group(2).lower(), i + 1
        j = start
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        body = "\n".join(l[indent:] if l[:indent].isspace() else l for l in lines[start:j])
        blocks.append(Block(rel, start + 1, lang, body, directive_above(lines, i),
                            directives_below(lines, j)))
        i = j + 1
    return blocks


def directives_below(lines, fence_end):
    """The `<!-- snippet: ... -->` comments right under a closing fence (blank
    lines between them allowed), one per comment."""
    out, k = [], fence_end + 1
    while k < len(lines):
        if not lines[k].strip():
            k += 1
            continue
        if not lines[k].lstrip().startswith("<!--"):
            break
        end = k
        while end < len(lines) and "-->" not in lines[end]:
            end += 1
        m = re.match(r"<!--\s*snippet:\s*([\w-]+)(.*?)-->$",
                     "\n".join(lines[k:end + 1]).strip(), re.S)
        if not m:
            break
        out.append((m.group(1), m.group(2).strip()))
        k = end + 1
    return out


def directive_above(lines, fence):
    k = fence - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    if k < 0 or not lines[k].strip().endswith("-->"):
        return None
    end = k
    while k >= 0 and "<!--" not in lines[k]:
        k -= 1
    comment = "\n".join(lines[k:end + 1]).strip()
    m = re.match(r"<!--\s*snippet:\s*([\w-]+)(.*?)-->$", comment, re.S)
    return (m.group(1), m.group(2).strip()) if m else None


def unquoted_text(line):
    """The parts of a shell line outside quotes, up to an unquoted comment."""
    out, quote, i = [], None, 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = None
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            break
        else:
            out.append(c)
        i += 1
    return "".join(out)


def check_shell_placeholders(where, text, errors):
    for n, line in enumerate(text.split("\n")):
        for p in PLACEHOLDER.findall(unquoted_text(line)):
            errors.append(f"{where(n)}: unquoted {p} is a redirection in a shell; quote the word")


def check_shell_block(block, tmp, errors):
    script = os.path.join(tmp, "snippet.sh")
    with open(script, "w") as f:
        f.write(block.text + "\n")
    r = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
    if r.returncode != 0:
        errors.append(f"{block.where()}: bash -n: {r.stderr.strip()}")
    check_shell_placeholders(lambda n: f"{block.path}:{block.line + n}", block.text, errors)


def check_inline_shell(rel, text, errors):
    """Inline code spans written as commands (`VAR=value cmd ...`)."""
    in_fence = False
    for n, line in enumerate(text.split("\n"), 1):
        if re.match(r"^\s*```", line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for span in re.findall(r"`([^`]+)`", line):
            if re.match(r"^[A-Z][A-Z0-9_]*=", span):
                check_shell_placeholders(lambda _: f"{rel}:{n}", span, errors)


def check_paths(rel, text, source_dir, prefix, errors):
    for m in DATA_PATH.finditer(text):
        root, kind, name = m.groups()
        base = os.path.join(source_dir, "config") if root == "config" else \
            os.path.join(prefix, "share", "regiontrace")
        if not os.path.isfile(os.path.join(base, kind, name)):
            line = text.count("\n", 0, m.start()) + 1
            errors.append(f"{rel}:{line}: {m.group(0)} does not exist")
    for m in LINK.finditer(text):
        target = m.group(1).split("#")[0]
        if not target or re.match(r"^[a-z]+:", target):
            continue
        if not os.path.exists(os.path.join(source_dir, os.path.dirname(rel), target)):
            line = text.count("\n", 0, m.start()) + 1
            errors.append(f"{rel}:{line}: link target {target} does not exist")


# What an application includes from RegionTrace::core (inspect.hpp is the
# tools' API); the docs name the header beside each call.
CORE_HEADERS = ["regiontrace/regiontrace.hpp", "regiontrace/thread_step.hpp"]


def translation_unit(block, prelude):
    """The block as a .cpp file; #line keeps compiler messages on the .md."""
    out = ["#include <%s>" % h for h in CORE_HEADERS]
    if TORCH_WORDS.search(block.text + prelude):
        out += ["#include <torch/torch.h>", "#include <regiontrace/torch.hpp>"]
    if prelude:
        out += [prelude]
    is_tu = any(TU_LINE.match(l) for l in block.text.split("\n"))
    out.append(f'#line {block.line} "{block.path}"')
    if is_tu:
        out.append(block.text)
    else:
        out += ["[[maybe_unused]] static void snippet_body() {", block.text, "}"]
    return "\n".join(out) + "\n"


def compile_cpp(blocks, tmp, args, prefix, errors):
    sources = {"core": [], "torch": []}
    skipped = []
    for k, b in enumerate(blocks):
        prelude = b.directive[1] if b.directive and b.directive[0] == "prelude" else ""
        code = translation_unit(b, prelude)
        kind = "torch" if "regiontrace/torch.hpp" in code else "core"
        if kind == "torch" and not args.with_torch:
            skipped.append(f"{b.where()} (needs RegionTrace::torch, not built)")
            continue
        name = f"snippet_{k}.cpp"
        with open(os.path.join(tmp, name), "w") as f:
            f.write(code)
        sources[kind].append(name)
    for s in skipped:
        print(f"skipped {s}")
    if not sources["core"] and not sources["torch"]:
        return
    cmake = ["cmake_minimum_required(VERSION 3.25)", "project(doc_snippets CXX)",
             "find_package(RegionTrace REQUIRED COMPONENTS core%s)" %
             (" torch" if sources["torch"] else "")]
    for kind, files in sources.items():
        if files:
            cmake += [f"add_library(snippets_{kind} OBJECT {' '.join(files)})",
                      f"target_link_libraries(snippets_{kind} PRIVATE RegionTrace::{kind})"]
    with open(os.path.join(tmp, "CMakeLists.txt"), "w") as f:
        f.write("\n".join(cmake) + "\n")
    build = os.path.join(tmp, "build")
    configure = [args.cmake, "-S", tmp, "-B", build, "-G", "Unix Makefiles",
                 f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release"]
    if args.cxx:
        configure.append(f"-DCMAKE_CXX_COMPILER={args.cxx}")
    if args.torch_dir:  # libtorch outside CMake's search path (a pip wheel)
        configure.append(f"-DTorch_DIR={args.torch_dir}")
    r = subprocess.run(configure, capture_output=True, text=True)
    if r.returncode != 0:
        errors.append("configuring the snippets against the installed package failed:\n" +
                      r.stdout + r.stderr)
        return
    r = subprocess.run([args.cmake, "--build", build, "-j2", "--", "-k"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        msgs = [l for l in (r.stdout + r.stderr).split("\n") if ".md:" in l or "error" in l]
        errors.append("C++ snippets do not compile against the installed package:\n" +
                      "\n".join(msgs or [r.stdout + r.stderr]))


def section(text, heading_regex):
    m = re.search(heading_regex, text, re.M)
    if not m:
        return None
    level = len(re.match(r"#+", text[m.start():]).group(0))
    rest = text[m.end():]
    end = re.search(r"^#{1,%d} " % level, rest, re.M)
    return rest[:end.start()] if end else rest


def check_cli_docs(source_dir, prefix, errors):
    cli = os.path.join(prefix, "bin", "regiontrace")
    if not os.path.exists(cli):
        print("skipped the command list: no regiontrace command line installed")
        return
    r = subprocess.run([cli, "--help"], capture_output=True, text=True)
    listed = re.split(r"^subcommands:", r.stdout, flags=re.I | re.M)[-1]
    commands = re.findall(r"^\s+([a-z][a-z-]*)\s", listed, re.M)
    if not commands:
        errors.append(f"`regiontrace --help` lists no commands:\n{r.stdout}{r.stderr}")
        return
    cli_md = open(os.path.join(source_dir, "docs", "cli.md")).read()
    readme = open(os.path.join(source_dir, "README.md")).read()
    readme_cli = section(readme, r"^#+ Command line.*$") or ""
    for c in commands:
        body = section(cli_md, r"^## .*`?regiontrace %s\b.*$" % re.escape(c))
        if body is None:
            errors.append(f"docs/cli.md: no `## ... regiontrace {c}` section")
        elif not re.search(r"\bexit", body, re.I):
            errors.append(f"docs/cli.md: the `regiontrace {c}` section gives no exit codes")
        if not re.search(r"^regiontrace %s\b" % re.escape(c), readme_cli, re.M):
            errors.append(f"README.md: the command-line list does not name `regiontrace {c}`")


def check_sink_docs(source_dir, errors):
    sdk = os.path.join(source_dir, "plugins", "sdk", "include", "regiontrace", "sdk")
    doc_path = os.path.join(source_dir, "docs", "writing-a-sink.md")
    doc = open(doc_path).read()
    events = open(os.path.join(sdk, "events.hpp")).read()
    for name, body in re.findall(r"^struct (\w+) \{(.*?)^\};", events, re.M | re.S):
        part = section(doc, r"^#+ .*`%s`.*$" % name)
        if part is None:
            errors.append(f"docs/writing-a-sink.md: no section for `{name}`")
            continue
        for field in re.findall(r"^\s+[\w:<>*, ]+?[\s*]+(\w+)(?:\s*=[^;]*)?;", body, re.M):
            if f"`{field}`" not in part:
                errors.append(f"docs/writing-a-sink.md: `{name}` section does not list `{field}`")
    sink = open(os.path.join(sdk, "sink.hpp")).read()
    callbacks = section(doc, r"^#+ Callbacks.*$") or ""
    for method in re.findall(r"virtual [\w:]+ (\w+)\(", sink):
        if f"`{method}`" not in callbacks:
            errors.append(f"docs/writing-a-sink.md: the Callbacks section does not list `{method}`")


DTYPE_ALIASES = {"fp32": "float32", "float32": "float32", "bf16": "bfloat16",
                 "bfloat16": "bfloat16", "fp16": "float16", "float16": "float16",
                 "fp64": "float64", "float64": "float64"}
DTYPE_WORD = re.compile(r"\b(%s)\b" % "|".join(DTYPE_ALIASES))
TOL_NUMBER = re.compile(r"\b(rtol|atol)\b[ =`]*(\d[\d.]*(?:e-?\d+)?)")
REGEX_ENGINES = ("RE2", "ECMAScript", "std::regex", "POSIX", "PCRE")


def prose(text):
    """Paragraphs outside code fences, each joined into one line."""
    out, para, in_fence = [], [], False
    for n, line in enumerate(text.split("\n"), 1):
        if re.match(r"^\s*```", line):
            in_fence = not in_fence
        elif not in_fence and line.strip() and not line.lstrip().startswith("|"):
            para.append((n, line.strip()))
            continue
        if para:
            out.append((para[0][0], " ".join(l for _, l in para)))
            para = []
    if para:
        out.append((para[0][0], " ".join(l for _, l in para)))
    return out


def sentences(paragraph):
    return re.split(r"(?<=[.;])\s+(?=[A-Z`(*-])", paragraph)


def diff_tolerances(cli):
    """{dtype: (rtol, atol)} and the dtype of records without one, as
    `regiontrace diff --help` prints them from the comparison's table."""
    r = subprocess.run([cli, "diff", "--help"], capture_output=True, text=True)
    text = " ".join(r.stdout.split())
    table, default = {}, None
    for name, note, rtol, atol in re.findall(
            r"\b(float\d+|bfloat16)( \([^)]*\))? rtol=(\S+) atol=([^;\s]+)", text):
        table[name] = (float(rtol), float(atol))
        if "without dtype" in note:
            default = name
    return table, default


def check_tolerance_claims(rel, text, table, default, errors):
    """Sentences about diff's default tolerances: each rtol/atol number belongs
    to the nearest dtype named before it (else to the no-dtype default) and
    must be the program's; a dtype named without numbers must be that default."""
    for line, para in prose(text):
        for sent in sentences(para):
            if not re.search(r"\bdefault", sent, re.I) or \
                    not re.search(r"toleranc|\brtol\b|\batol\b", sent, re.I):
                continue
            dtypes = [(m.start(), DTYPE_ALIASES[m.group(1)]) for m in DTYPE_WORD.finditer(sent)]
            numbers = list(TOL_NUMBER.finditer(sent))
            for m in numbers:
                before = [d for pos, d in dtypes if pos < m.start()]
                dtype = before[-1] if before else default
                if dtype not in table:
                    continue
                want = table[dtype][0 if m.group(1) == "rtol" else 1]
                if abs(float(m.group(2)) - want) > 1e-12 * max(1.0, want):
                    errors.append(f"{rel}:{line}: says {dtype}'s default {m.group(1)} is "
                                  f"{m.group(2)}; `regiontrace diff --help` says {want:g}")
            if not numbers:
                for _, dtype in dtypes:
                    if dtype != default:
                        errors.append(
                            f"{rel}:{line}: ties diff's default tolerances to {dtype}, but they "
                            f"follow each record's dtype ({default}'s without one); state them "
                            f"as `{dtype} rtol=X atol=Y` (see `regiontrace diff --help`)")
                        break
    for row in re.findall(r"^\s*\|(.+)\|\s*$", text, re.M):
        cells = [c.strip() for c in row.split("|")]
        if len(cells) < 3 or not re.match(r"^[\d.e-]+$", cells[1]) or \
                not re.match(r"^[\d.e-]+$", cells[2]):
            continue
        for word in DTYPE_WORD.findall(cells[0])[:1]:
            dtype = DTYPE_ALIASES[word]
            if dtype in table and (abs(float(cells[1]) - table[dtype][0]) > 1e-12 or
                                   abs(float(cells[2]) - table[dtype][1]) > 1e-12):
                errors.append(f"{rel}: the tolerance row `{row.strip()}` is not "
                              f"`regiontrace diff --help`'s {dtype}: {table[dtype]}")


def schema_keys(cli, source_dir):
    """{key: (default cell, description)} from `regiontrace schema --markdown`;
    for sinks this build lacks (activation_trace without libtorch), from
    docs/configuration.md, that command's output as a test keeps it."""
    r = subprocess.run([cli, "schema", "--markdown"], capture_output=True, text=True)
    generated = open(os.path.join(source_dir, "docs", "configuration.md")).read()
    keys = {}
    for row in re.findall(r"^\| `([^`]+)` \|(.*)\|\s*$", generated + "\n" + r.stdout, re.M):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row[1])]
        if len(cells) >= 4:
            keys[row[0]] = (cells[1].replace("\\|", "|"), cells[3].replace("\\|", "|"))
    return keys


def check_key_tables(rel, text, keys, errors):
    """Tables of `| key | default | ... |` under a heading naming `sinks.x.*`."""
    for m in re.finditer(r"^#+ .*`(sinks\.\w+)\.\*`.*$", text, re.M):
        body = section(text, r"^%s$" % re.escape(m.group(0))) or ""
        header = re.search(r"^\|\s*key\s*\|\s*default\s*\|.*$", body, re.M)
        if not header:
            continue
        line0 = text.count("\n", 0, m.start()) + 1
        for row in re.findall(r"^\| `(\w+)` \|(.*)\|\s*$", body[header.end():], re.M):
            key = f"{m.group(1)}.{row[0]}"
            if key not in keys:
                continue
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", row[1])]
            stated, meaning = cells[0].replace("\\|", "|"), " ".join(cells[1:])
            default, description = keys[key]
            want = "" if default == "(empty)" else default.strip("`")
            values = re.findall(r"`([^`]*)`", stated)
            if values:
                got = ", ".join(values)
                said_default = re.search(r"Default: (\S+)", description)
                if got.replace(", ", ",") != want.replace(", ", ",") and \
                        not (said_default and said_default.group(1) == got):
                    errors.append(f"{rel}:{line0}: `{key}` defaults to `{got}` here, "
                                  f"`regiontrace schema` says `{want}`")
            elif stated.lower().startswith("empty") and want:
                errors.append(f"{rel}:{line0}: `{key}` defaults to empty here, "
                              f"`regiontrace schema` says `{want}`")
            engines = [e for e in REGEX_ENGINES if e in description]
            for e in REGEX_ENGINES:
                if engines and e in meaning and e not in engines:
                    errors.append(f"{rel}:{line0}: `{key}` is described as {e} here; "
                                  f"`regiontrace schema` says {engines[0]}")


def check_profile_stats(rel, text, source_dir, errors):
    """A sentence naming a profile and a backticked list of statistics states
    what that profile writes: it must be the profile's `stats`."""
    for line, para in prose(text):
        for sent in sentences(para):
            profile = re.search(r"`?\b(\w+)\.yaml`?", sent)
            lists = [l for l in re.findall(r"`([a-z_]+(?:, [a-z_]+){2,})`", sent)]
            if not profile or not lists:
                continue
            path = os.path.join(source_dir, "config", "profiles", profile.group(1) + ".yaml")
            if not os.path.isfile(path):
                continue
            m = re.search(r"^\s*stats:\s*\[([^\]]*)\]", open(path).read(), re.M)
            if not m:
                continue
            want = [w.strip() for w in m.group(1).split(",")]
            for l in lists:
                if [w.strip() for w in l.split(",")] != want:
                    errors.append(f"{rel}:{line}: says {profile.group(1)}.yaml writes `{l}`; "
                                  f"it writes `{', '.join(want)}`")


def check_stated_defaults(source_dir, prefix, docs, errors):
    cli = os.path.join(prefix, "bin", "regiontrace")
    if not os.path.exists(cli):
        print("skipped the stated defaults: no regiontrace command line installed")
        return
    table, default = diff_tolerances(cli)
    if not table or not default:
        errors.append("`regiontrace diff --help` lists no default tolerances")
        return
    keys = schema_keys(cli, source_dir)
    if not keys:
        errors.append("`regiontrace schema --markdown` lists no keys")
    for rel in docs:
        text = open(os.path.join(source_dir, rel)).read()
        check_tolerance_claims(rel, text, table, default, errors)
        check_key_tables(rel, text, keys, errors)
        check_profile_stats(rel, text, source_dir, errors)


# What a page's shell blocks find in their folder: a checkout's layout, so
# `build/bin/video_pipeline` and `config/profiles/x.yaml` resolve as written.
CHECKOUT_LINKS = ("config", "examples", "scripts")
BLOCK_TIMEOUT_S = 60
# /tmp/x in a block is moved into the page's folder: pages run side by side
# with other tests and other checkouts, which must not share /tmp/ref.
TMP_PATH = re.compile(r"(?<![\w./~-])/tmp/")
RUN_DIRECTIVES = {"expect", "expect-file", "expect-exit", "timeout"}


def block_env(prefix, home):
    """A user's shell: the installed prefix's bin/ first, the interpreter's
    folder (a venv's torchrun) next, nothing of this process's own
    regiontrace settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("REGIONTRACE_", "FASTVIDEO_", "NVTX_", "RANK", "LOCAL_RANK",
                                "WORLD_SIZE", "OMPI_", "PMI_", "SLURM_"))}
    env["PATH"] = os.pathsep.join([os.path.join(prefix, "bin"), os.path.dirname(sys.executable),
                                   env.get("PATH", "/usr/bin:/bin")])
    env["HOME"] = home
    # What a container asks of Open MPI (distributed.md says so next to its
    # mpirun lines); a user's own machine needs none of it.
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    env["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
    return env


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # and whatever the block left in the background
    except ProcessLookupError:
        pass


def run_block(block, work, env, env_file, errors):
    """One block in the page's folder, after the variables the page's earlier
    blocks exported; returns its seconds."""
    after = dict(block.after)
    prelude = block.directive[1] if block.directive and block.directive[0] == "prelude" else ""
    text = TMP_PATH.sub(work.replace("\\", "\\\\") + "/tmp/", prelude + "\n" + block.text)
    exit_wanted = int(after["expect-exit"]) if "expect-exit" in after else None
    script = os.path.join(work, ".snippet.sh")
    with open(script, "w") as f:
        f.write(f'cd "{work}"\n[ -f "{env_file}" ] && . "{env_file}"\n'
                f"trap 'export -p > \"{env_file}\"' EXIT\n")
        if exit_wanted is None:
            f.write("set -e -o pipefail\n")
        f.write(text + "\n")
    timeout = int(after.get("timeout", BLOCK_TIMEOUT_S))
    log_path = os.path.join(work, ".snippet.log")
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["bash", script], cwd=work, env=env, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
        kill_group(proc)
        proc.wait()
    seconds = time.monotonic() - start
    output = open(log_path, errors="replace").read()
    problems = []
    if rc is None:
        problems.append(f"did not finish in {timeout} s")
    elif exit_wanted is None and rc != 0:
        problems.append(f"exited {rc}")
    elif exit_wanted is not None and rc != exit_wanted:
        problems.append(f"exited {rc}, the text says {exit_wanted}")
    for name, arg in block.after:
        if name == "expect" and rc is not None and not re.search(arg, output, re.M):
            problems.append(f"its output does not match the text's /{arg}/")
        elif name == "expect-file" and not glob.glob(os.path.join(work, TMP_PATH.sub("tmp/", arg))):
            problems.append(f"it wrote nothing matching {arg}")
    if problems:
        tail = "\n".join("    | " + l for l in output.rstrip().split("\n")[-25:])
        command = "\n".join("    $ " + l for l in block.text.split("\n"))
        errors.append(f"{block.where()}: the block {'; '.join(problems)}:\n{command}\n"
                      f"  output (last 25 lines):\n{tail}")
    return seconds


def missing_programs(blocks, build_dir, env):
    """The example programs (a build without libtorch has fewer) and the
    launchers a page's blocks name that this machine lacks."""
    text = "\n".join((b.directive[1] if b.directive and b.directive[0] == "prelude" else "") +
                     "\n" + b.text for b in blocks)
    missing = [f"build/bin/{p}" for p in sorted(set(re.findall(r"\bbuild/bin/([\w-]+)", text)))
               if not os.path.exists(os.path.join(build_dir, "bin", p))]
    # The project's venv where scripts/install_deps.sh puts it; REGIONTRACE_VENV
    # may have put it elsewhere.
    missing += [p for p in sorted(set(re.findall(r"~/[\w./-]*/bin/python3?\b", text)))
                if not os.path.exists(os.path.expanduser(p))]
    for tool in ("regiontrace", "mpirun", "torchrun", "curl"):
        if re.search(r"(^|[\s;&|(])%s\b" % tool, text, re.M) and \
                not shutil.which(tool, path=env["PATH"]):
            missing.append(tool)
    return missing


def run_pages(pages, source_dir, build_dir, prefix, tmp, errors):
    """Every page's runnable shell blocks; returns how many ran."""
    home = os.environ.get("HOME", tmp)
    env = block_env(prefix, home)
    ran = 0
    for rel, blocks in pages:
        runnable = [b for b in blocks if b.lang in SHELL_LANGS and not (
            b.directive and b.directive[0] in ("skip", "illustrative"))]
        for b in blocks:
            for name, _ in b.after:  # the next block's own comment may follow
                if name not in RUN_DIRECTIVES | {"prelude", "illustrative", "skip"}:
                    errors.append(f"{b.where()}: unknown `snippet: {name}` under the block")
        if not runnable:
            continue
        missing = missing_programs(runnable, build_dir, env)
        if missing:
            # As C++ blocks that need libtorch are skipped in a build without it.
            print(f"skipped the shell blocks of {rel}: {', '.join(missing)} not here")
            continue
        work = os.path.join(tmp, "pages", rel.replace("/", "_").replace(".md", ""))
        os.makedirs(os.path.join(work, "tmp"))
        os.symlink(os.path.abspath(build_dir), os.path.join(work, "build"))
        for name in CHECKOUT_LINKS:
            os.symlink(os.path.join(os.path.abspath(source_dir), name), os.path.join(work, name))
        env_file = os.path.join(work, ".exported")
        seconds = sum(run_block(b, work, env, env_file, errors) for b in runnable)
        ran += len(runnable)
        print(f"ran {len(runnable)} shell block(s) of {rel} in {seconds:.1f} s")
    return ran


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--build-dir", required=True, help="the build to install")
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--cxx", default="")
    ap.add_argument("--with-torch", type=int, default=1)
    ap.add_argument("--torch-dir", default="", help="Torch_DIR the build used")
    ap.add_argument("--run-shell", type=int, default=1,
                    help="run the shell blocks (0: only parse them)")
    ap.add_argument("--pages", default="", help="run the shell blocks of pages whose path "
                    "contains this (a comma-separated list), for working on one page")
    args = ap.parse_args()
    docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(
        os.path.join(args.source_dir, "docs")) if f.endswith(".md"))
    errors = []
    tmp = tempfile.mkdtemp(prefix="regiontrace_docs_")
    try:
        prefix = os.path.join(tmp, "prefix")
        r = subprocess.run([args.cmake, "--install", args.build_dir, "--prefix", prefix],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"cmake --install failed:\n{r.stdout}{r.stderr}")
            return 1
        cpp, counts, pages = [], {"cpp": 0, "shell": 0, "ran": 0}, []
        for rel in docs:
            text = open(os.path.join(args.source_dir, rel)).read()
            check_paths(rel, text, args.source_dir, prefix, errors)
            check_inline_shell(rel, text, errors)
            blocks = read_blocks(rel, text)
            pages.append((rel, blocks))
            for b in blocks:
                if b.directive and b.directive[0] in ("skip", "illustrative") and \
                        not b.directive[1]:
                    errors.append(f"{b.where()}: `snippet: {b.directive[0]}` needs a reason")
                if b.directive and b.directive[0] == "skip":
                    continue
                if b.lang in SHELL_LANGS:
                    counts["shell"] += 1
                    check_shell_block(b, tmp, errors)
                elif b.lang in CPP_LANGS:
                    counts["cpp"] += 1
                    cpp.append(b)
        compile_dir = os.path.join(tmp, "cpp")
        os.makedirs(compile_dir)
        compile_cpp(cpp, compile_dir, args, prefix, errors)
        check_cli_docs(args.source_dir, prefix, errors)
        check_sink_docs(args.source_dir, errors)
        check_stated_defaults(args.source_dir, prefix, docs, errors)
        if args.run_shell:
            wanted = [p for p in args.pages.split(",") if p]
            chosen = [(rel, b) for rel, b in pages if not wanted or any(w in rel for w in wanted)]
            counts["ran"] = run_pages(chosen, args.source_dir, args.build_dir, prefix, tmp, errors)
        print(f"checked {len(docs)} files: {counts['shell']} shell blocks ({counts['ran']} run), "
              f"{counts['cpp']} C++ blocks")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for e in errors:
        print(e)
    print(f"{len(errors)} problem(s)" if errors else "docs run as written")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
