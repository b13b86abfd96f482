"""`regiontrace report --html` of a real 4-rank run, rendered in headless
Chromium: 4 ranks under mpirun (rank 2 sleeping 20 ms more in
training_step every step), traced by the torch_profiler and memory_snapshot
sinks; the report's page rendered at 1280x900, its first screen and the
whole page with every section open kept as screenshots, and what the page
shows checked in the browser's own layout:

- each rank has one colour wherever it is drawn, and no two ranks share one;
- the straggler marks are in none of the ranks' colours;
- the overview (a bar per rank and step, stacked by region) is on the first
  screen, its segments add up to each bar, and the page is short with its
  sections closed;
- memory over time is drawn from the memory traces' counter tracks;
- the page loads nothing (no scripts, fonts or images of its own).

    report_html_viewer_test.py REGIONTRACE_CLI STRAGGLER_PROGRAM PLUGIN_DIR WORK_DIR

The layout is read by a script added to a copy of the page (the page itself
has none) that writes its findings into the DOM, which --dump-dom prints.

Exit 77 (ctest: skipped) when /usr/bin/chromium or mpirun is missing.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys

CHROMIUM = "/usr/bin/chromium"
RANKS = 4
STEPS = 6
WIDTH, HEIGHT = 1280, 900

# Runs in the copy of the page once it has loaded; its findings replace the
# body, as JSON in <pre id="findings">.
PROBE = r"""
<script>
window.addEventListener('load', () => {
  const f = {};
  const colours = {};  // rank -> colours it is drawn in
  const add = (rank, c) => { (colours[rank] = colours[rank] || []).push(c); };
  for (const li of document.querySelectorAll('.legend li.rank'))
    add(li.dataset.rank, getComputedStyle(li.querySelector('.swatch')).backgroundColor);
  for (const r of document.querySelectorAll('.rank-key'))
    add(r.dataset.rank, getComputedStyle(r).fill);
  for (const g of document.querySelectorAll('svg.plot g.series'))
    add(g.dataset.rank, getComputedStyle(g.querySelector('polyline')).stroke);
  for (const g of document.querySelectorAll('svg.rank-plot g.rank-column'))
    for (const c of g.querySelectorAll('circle')) add(g.dataset.rank, getComputedStyle(c).fill);
  for (const g of document.querySelectorAll('svg.memory-plot g.counter-series'))
    add(g.dataset.rank, getComputedStyle(g.querySelector('polyline')).stroke);
  for (const th of document.querySelectorAll('th.rank'))
    add(th.dataset.rank, getComputedStyle(th.querySelector('.swatch')).backgroundColor);
  f.colours = {};
  for (const [rank, list] of Object.entries(colours)) f.colours[rank] = [...new Set(list)];
  f.marks = [];
  for (const m of document.querySelectorAll('.straggler-mark')) {
    const s = getComputedStyle(m);
    f.marks.push({tag: m.tagName, fill: s.fill, stroke: s.stroke,
                  rank: m.closest('[data-rank]') ? m.closest('[data-rank]').dataset.rank : null});
  }
  const overview = document.querySelector('#overview svg.overview');
  f.overview = overview ? overview.getBoundingClientRect().toJSON() : null;
  f.bars = [];
  for (const g of document.querySelectorAll('svg.overview g.bar')) {
    let ms = 0, height = 0;
    const regions = [];
    for (const r of g.querySelectorAll('rect.segment')) {
      ms += parseFloat(r.dataset.ms);
      height += r.getBoundingClientRect().height;
      regions.push(r.dataset.region);
    }
    f.bars.push({step: g.dataset.step, rank: g.dataset.rank, ms, height, regions,
                 straggler: g.dataset.straggler === '1'});
  }
  f.ms_per_px = null;
  const tallest = f.bars.reduce((a, b) => (b.ms > a.ms ? b : a), {ms: 0});
  if (tallest.height > 0) f.ms_per_px = tallest.ms / tallest.height;
  f.details = [...document.querySelectorAll('details')].map(d => ({
    open: d.open, cls: d.className, summary: d.querySelector('summary').textContent}));
  f.page_height = document.documentElement.scrollHeight;
  f.memory_plots = [...document.querySelectorAll('svg.memory-plot')].map(s => ({
    counter: s.dataset.counter,
    ranks: [...s.querySelectorAll('g.counter-series')].map(g => g.dataset.rank)}));
  f.summary = document.querySelector('p.summary').textContent;
  f.resources = performance.getEntriesByType('resource').map(e => e.name);
  f.scripts = document.querySelectorAll('script').length;
  document.body.innerHTML = '<pre id="findings"></pre>';
  document.getElementById('findings').textContent = JSON.stringify(f);
});
</script>
"""


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def chromium(args, work, timeout=120):
    profile = os.path.join(work, "chromium-profile")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--hide-scrollbars", f"--user-data-dir={profile}", "--virtual-time-budget=5000"] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def screenshot(page, png, work, height):
    chromium([f"--window-size={WIDTH},{height}", f"--screenshot={png}", "file://" + page], work)
    with open(png, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            fail(f"{png} is not a PNG")
    print(f"screenshot: {png}")


def run_ranks(mpirun, program, plugins, out):
    env = dict(os.environ, REGIONTRACE_PLUGIN_PATH=plugins,
               REGIONTRACE_SINKS="torch_profiler,memory_snapshot", REGIONTRACE_OUTPUT_DIR=out,
               REGIONTRACE_LOG_LEVEL="error",
               # Open MPI in a container: shared memory without CMA.
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(RANKS), "--mca", "btl",
           "self,vader"]
    for name in ("REGIONTRACE_PLUGIN_PATH", "REGIONTRACE_SINKS", "REGIONTRACE_OUTPUT_DIR",
                 "REGIONTRACE_LOG_LEVEL", "OMPI_MCA_btl_vader_single_copy_mechanism"):
        cmd += ["-x", name]
    cmd += [program, str(STEPS), "10", "2", "20"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        fail(f"mpirun exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    for pattern in ("torch_trace_rank*.json.gz", "memory_trace_rank*.json"):
        if len(glob.glob(os.path.join(out, pattern))) != RANKS:
            fail(f"expected {RANKS} files {pattern} in {out}: {sorted(os.listdir(out))}")


def check(f, report):
    # One colour per rank, everywhere, and no two ranks alike.
    colours = f["colours"]
    if sorted(colours) != [str(r) for r in range(RANKS)]:
        fail(f"ranks drawn: {sorted(colours)}")
    for rank, list_ in colours.items():
        if len(list_) != 1:
            fail(f"rank {rank} is drawn in several colours: {list_}")
    rank_colours = {list_[0] for list_ in colours.values()}
    if len(rank_colours) != RANKS:
        fail(f"ranks share colours: {colours}")
    # The straggler marks: on rank 2, in an ink no rank has.
    if not f["marks"]:
        fail("no straggler mark on the page")
    for m in f["marks"]:
        ink = m["stroke"] if m["fill"] == "none" else m["fill"]
        if ink in rank_colours:
            fail(f"straggler mark {m} in a rank's colour")
        if m["rank"] != "2":
            fail(f"straggler mark on rank {m['rank']}: {m}")
    # The overview on the first screen, a bar per rank and step.
    if f["overview"] is None:
        fail("no overview")
    if f["overview"]["top"] >= HEIGHT or f["overview"]["bottom"] > HEIGHT:
        fail(f"the overview is not on the first {WIDTH}x{HEIGHT} screen: {f['overview']}")
    bars = f["bars"]
    if len(bars) != RANKS * STEPS:
        fail(f"{len(bars)} bars, expected {RANKS} ranks x {STEPS} steps")
    # Each bar as tall as its segments' ms, on one scale; rank 2's bars,
    # training_step 20 ms longer, marked.
    for b in bars:
        if abs(b["height"] * f["ms_per_px"] - b["ms"]) > 0.5 * f["ms_per_px"] + 1e-6 * b["ms"]:
            fail(f"bar {b} is not as tall as its segments' ms")
        if not any("training_step" in r for r in b["regions"]):
            fail(f"bar {b} has no training_step segment")
        if b["straggler"] != (b["rank"] == "2"):
            fail(f"bar {b}: marked {b['straggler']}")
    per_step = {}
    for b in bars:
        per_step.setdefault(b["step"], {})[b["rank"]] = b["ms"]
    # 20 ms of sleep over the others' median in most steps (a shared machine
    # slows any rank now and then).
    taller = [step for step, ms in per_step.items()
              if ms["2"] > sorted(v for r, v in ms.items() if r != "2")[1] + 10]
    if len(taller) * 2 <= len(per_step):
        fail(f"rank 2's bar stands out in steps {taller} only: {per_step}")
    # Each rank's torch trace counts (of it and the memory trace, which has
    # as many region spans, the one with step spans), so a bar is the step's
    # time: its regions' own times and the rest of the step outside them.
    steps = next((g for g in report["regions"] if g["region"] == "(step)"), None)
    if steps is None:
        fail(f"no (step) row in the report: {[g['region'] for g in report['regions']]}")
    for b in bars:
        row = next(s for s in steps["steps"] if str(s["step"]) == b["step"])
        if abs(row["per_rank"][b["rank"]] - b["ms"]) > 0.01:
            fail(f"bar {b}: the step took {row['per_rank'][b['rank']]} ms")
        if "(outside regions)" not in b["regions"]:
            fail(f"bar {b} has no (outside regions) segment")
    # Sections closed: the page stays short.
    if not f["details"] or any(d["open"] for d in f["details"]):
        fail(f"sections: {f['details']}")
    if f["page_height"] > 2 * HEIGHT:
        fail(f"the page is {f['page_height']} px tall with its sections closed")
    # Memory over time, a line per rank per counter track.
    counters = {p["counter"]: sorted(p["ranks"]) for p in f["memory_plots"]}
    for name in ("resident bytes (rss)", "libtorch allocated bytes (cpu)"):
        if counters.get(name) != [str(r) for r in range(RANKS)]:
            fail(f"memory plot {name!r}: {counters}")
    if not re.search(r"\b4 ranks, 6 steps \(all profiled\)", f["summary"]):
        fail(f"summary line: {f['summary']!r}")
    if f["resources"]:
        fail(f"the page loaded {f['resources']}")
    if f["scripts"] != 1:  # the probe itself
        fail(f"{f['scripts']} scripts: the page has scripts of its own")
    # The JSON report agrees on the straggler.
    stragglers = {s["rank"] for s in report["stragglers"]}
    if stragglers != {2}:
        fail(f"stragglers {stragglers}")


def main():
    cli, program, plugins, work = sys.argv[1:5]
    if not os.path.exists(CHROMIUM):
        skip(f"{CHROMIUM} is not installed (Debian: apt-get install chromium)")
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        skip("mpirun is not installed (Debian: apt-get install openmpi-bin)")
    shutil.rmtree(work, ignore_errors=True)
    out = os.path.join(work, "out")
    os.makedirs(out)
    run_ranks(mpirun, program, plugins, out)
    page = os.path.join(work, "report.html")
    proc = subprocess.run([cli, "report", "--threshold", "0.5", "--html", page, out],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        fail(f"report exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    report = json.loads(subprocess.run([cli, "report", "--json", "--threshold", "0.5", out],
                                       capture_output=True, text=True, check=True,
                                       timeout=120).stdout)
    with open(page) as f:
        html = f.read()
    if "<script" in html:
        fail("the page has a script")
    probe = os.path.join(work, "report_probe.html")
    with open(probe, "w") as f:
        f.write(html.replace("</body>", PROBE + "</body>"))
    dom = chromium([f"--window-size={WIDTH},{HEIGHT}", "--dump-dom", "file://" + probe], work)
    found = re.search(r'<pre id="findings">(.*?)</pre>', dom.stdout, re.S)
    if not found:
        fail(f"no findings in the DOM:\n{dom.stdout[:2000]}\n{dom.stderr[-2000:]}")
    text = found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
    findings = json.loads(text.replace("&amp;", "&"))
    with open(os.path.join(work, "findings.json"), "w") as f:
        json.dump(findings, f, indent=1)
    screenshot(page, os.path.join(work, "report_first_screen.png"), work, HEIGHT)
    opened = os.path.join(work, "report_open.html")
    with open(opened, "w") as f:
        f.write(html.replace("<details ", "<details open "))
    screenshot(opened, os.path.join(work, "report_open.png"), work, 3200)
    check(findings, report)
    print(f"ranks' colours: {findings['colours']}; overview at {findings['overview']['top']:.0f}"
          f"-{findings['overview']['bottom']:.0f} px; page {findings['page_height']} px tall")


if __name__ == "__main__":
    main()
