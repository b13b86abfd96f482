"""The demo's torch traces, two ranks launched by torchrun, read by a viewer
nobody here wrote: TensorBoard with the PyTorch profiler plugin
(torch-tb-profiler, PyPI), served on 127.0.0.1 and asked through its HTTP
API for the run, one worker per rank, their steps, and the overview and
operator views; then the plugin's page rendered in headless Chromium, its
screenshot kept as an artifact.

    tensorboard_viewer_test.py VIDEO_PIPELINE WORK_DIR

The plugin's charts load Google Charts from www.gstatic.com, which these
machines cannot reach: the page shows the run and workers from our traces
and a spinner where the charts would be. The numbers the charts would draw
are checked through the API instead.

Exit 77 (ctest: skipped) when tensorboard, the plugin or torchrun is missing.
"""

import glob
import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
PLUGIN = "/data/plugin/pytorch_profiler"
RANKS = 2
STEPS = 4


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path, **query):
    url = f"http://127.0.0.1:{port}{path}"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def run_demo(pipeline, logdir):
    """Two ranks of the demo under torchrun, each writing its own torch traces."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REGIONTRACE_")}
    env["REGIONTRACE_LOG_LEVEL"] = "warn"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={RANKS}", "--no-python", pipeline,
           # Shapes, memory, stack and a step schedule: a window per cycle.
           "--profile", os.path.join(SOURCE, "config", "profiles", "kernels.yaml"),
           "--trace-dir", logdir, "--output-dir", os.path.dirname(logdir),
           "--blocks", "2", "--steps", str(STEPS), "--frames", "2", "--height", "32",
           "--width", "32"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        fail(f"torchrun exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")


def trace_steps(path):
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    return sorted(int(e["name"][len("ProfilerStep#"):]) for e in events
                  if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))


def serve(logdir, port, log):
    cmd = [sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--host", "127.0.0.1",
           "--port", str(port), "--reload_interval", "1"]
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)


def wait_for_run(port, run, server):
    deadline = time.time() + 240
    while time.time() < deadline:
        if server.poll() is not None:
            fail(f"tensorboard exited {server.returncode}")
        try:
            runs = get(port, PLUGIN + "/runs")
            if run in runs["runs"] and not runs["loading"]:
                return
        except OSError:
            pass
        time.sleep(1)
    fail(f"tensorboard did not list run {run} within 240 s")


def check_api(port, run, traces):
    workers = get(port, PLUGIN + "/workers", run=run, view="Overview")
    # One worker per rank: the file names' worker part keeps rank and pid,
    # the part after it (the first step) tells a rank's windows apart.
    ranks = sorted(int(m.group(1)) for w in workers for m in [re.search(r"rank(\d+)", w)] if m)
    if ranks != list(range(RANKS)) or len(workers) != RANKS:
        fail(f"workers {workers}: expected one per rank 0-{RANKS - 1}")
    by_worker = {}
    for path in traces:
        worker = re.match(r"^(.*?)(\.\d+)?\.pt\.trace\.json\.gz$", os.path.basename(path)).group(1)
        by_worker.setdefault(worker, []).append(path)
    for worker in workers:
        spans = get(port, PLUGIN + "/spans", run=run, worker=worker)
        files = sorted(by_worker.get(worker, []))
        if len(spans) != len(files):
            fail(f"{worker}: spans {spans} for files {files}")
        for span, path in zip(spans, files):
            overview = get(port, PLUGIN + "/overview", run=run, worker=worker, span=span)
            listed = sorted(int(row[0]) for row in overview["steps"]["rows"])
            if listed != trace_steps(path):
                fail(f"{worker} span {span}: overview steps {listed}, trace {trace_steps(path)}")
            ops = get(port, PLUGIN + "/operation", run=run, worker=worker, span=span,
                      group_by="Operation")
            names = [row[0] for row in ops["host_self_time"]["rows"]]
            if not any(n.startswith("aten::") for n in names):
                fail(f"{worker} span {span}: operator view has no aten op: {names}")
    print(f"tensorboard lists {len(workers)} workers: {workers}")


def screenshot(port, work):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("no chromium on PATH (Debian: apt-get install chromium): no screenshot")
        return
    page = f"http://127.0.0.1:{port}{PLUGIN}/index.html"
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--hide-scrollbars", "--window-size=1400,1000", "--virtual-time-budget=15000"]
    dom = subprocess.run(base + ["--dump-dom", page], capture_output=True, text=True,
                         timeout=120).stdout
    workers = get(port, PLUGIN + "/workers", run="demo", view="Overview")
    if "demo" not in dom or workers[0] not in dom:
        fail(f"the plugin's page does not show run demo and worker {workers[0]}")
    png = os.path.join(work, "tensorboard_overview.png")
    subprocess.run(base + [f"--screenshot={png}", page], capture_output=True, timeout=120)
    with open(png, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            fail(f"{png} is not a PNG")
    print(f"screenshot: {png}")


def main():
    pipeline, work = sys.argv[1], sys.argv[2]
    for module in ("tensorboard", "torch_tb_profiler", "torch.distributed.run"):
        try:
            __import__(module)
        except ImportError:
            skip(f"{module} is not installed for {sys.executable} (scripts/requirements.txt)")
    shutil.rmtree(work, ignore_errors=True)
    logdir = os.path.join(work, "logdir", "demo")
    os.makedirs(logdir)
    run_demo(pipeline, logdir)
    traces = sorted(glob.glob(os.path.join(logdir, "*.pt.trace.json.gz")))
    if not traces:
        fail(f"no *.pt.trace.json.gz in {logdir}: {os.listdir(logdir)}")
    for t in traces:  # our own nesting check agrees with what a viewer needs
        subprocess.run([sys.executable, os.path.join(SOURCE, "tests", "support",
                                                     "trace_nesting.py"), t], check=True)
    port = free_port()
    with open(os.path.join(work, "tensorboard.log"), "w") as log:
        server = serve(os.path.dirname(logdir), port, log)
        try:
            wait_for_run(port, "demo", server)
            check_api(port, "demo", traces)
            screenshot(port, work)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
