"""The region_stats sink's Prometheus endpoint in the programs users run: a
Python program with torch, and a C++ program linked with libtorch. The
static thread-local storage of a program that links libtorch (and its CUDA
libraries) at start-up does not fit the 100 KB thread stacks Debian's
civetweb asks for, so the endpoint used to fail there after binding its
port ("port N is in use" for every port); the sink now serves on a thread of
its own (sinks/region_stats/metrics_server.hpp)."""

import os
import re
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest

from conftest import clean_env

SERVING = re.compile(r"serving Prometheus metrics on http://127\.0\.0\.1:(\d+)/metrics")


def _scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.status, r.headers.get("Content-Type"), r.read().decode()


def _calls(body, path):
    for line in body.splitlines():
        if line.startswith("regiontrace_region_calls_total{") and f'path="{path}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return None


def test_a_libtorch_program_serves_metrics(tmp_path):
    release = tmp_path / "release"
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import os, time, torch, regiontrace
            a = torch.randn(16, 16)
            for step in range(3):
                with regiontrace.region("inference_denoising"):
                    torch.mm(a, a)
            while not os.path.exists({str(release)!r}):
                time.sleep(0.02)
            regiontrace.shutdown()
            """)],
        env=clean_env(REGIONTRACE_SINKS="region_stats", REGIONTRACE_OUTPUT_DIR=tmp_path,
                      REGIONTRACE_LOG_LEVEL="info",
                      REGIONTRACE_REGION_STATS_PROMETHEUS_LISTEN="127.0.0.1:0"),
        stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.monotonic() + 120
        log = []
        while port is None and time.monotonic() < deadline:
            line = child.stderr.readline()
            if not line:
                break
            log.append(line)
            found = SERVING.search(line)
            if found:
                port = int(found.group(1))
        assert port is not None, "".join(log)
        # The regions run before the wait: poll until all three are counted.
        calls = None
        for _ in range(200):
            status, content_type, body = _scrape(port)
            calls = _calls(body, "profiler_region_inference_denoising")
            if calls == 3:
                break
            time.sleep(0.05)
        assert status == 200
        assert content_type.startswith("text/plain; version=0.0.4"), content_type
        assert calls == 3, body
    finally:
        release.touch()
        _, rest = child.communicate(timeout=120)
    assert child.returncode == 0, "".join(log) + rest
    with pytest.raises(OSError):
        _scrape(port)  # the endpoint goes with the sink


def test_the_example_pipeline_serves_metrics_as_the_readme_says(tmp_path):
    """README: REGIONTRACE_SINKS=region_stats
    REGIONTRACE_REGION_STATS_PROMETHEUS_LISTEN=127.0.0.1:<port> build/bin/video_pipeline:
    a C++ program linked with libtorch, scraped while it denoises."""
    build = os.environ.get("RT_TEST_BUILD_DIR")
    program = os.path.join(build or "", "bin", "video_pipeline")
    if not build or not os.path.exists(program):
        pytest.skip("video_pipeline is a program of the build tree")
    child = subprocess.Popen(
        [program, "--steps", "1000"], cwd=tmp_path, stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL, text=True,
        env=clean_env(REGIONTRACE_SINKS="region_stats", REGIONTRACE_OUTPUT_DIR=tmp_path,
                      REGIONTRACE_LOG_LEVEL="info",
                      REGIONTRACE_REGION_STATS_PROMETHEUS_LISTEN="127.0.0.1:0"))
    log = []
    try:
        port = None
        for line in child.stderr:
            log.append(line)
            found = SERVING.search(line)
            if found:
                port = int(found.group(1))
                break
        assert port is not None, "".join(log)
        # A block ends in every denoising step (the loop's region, only
        # after the last one).
        blocks = None
        deadline = time.monotonic() + 300
        while not blocks and time.monotonic() < deadline:
            status, _, body = _scrape(port)
            blocks = _calls(body, "profiler_region_inference_denoising/blocks.0")
            time.sleep(0.05)
        assert status == 200
        assert blocks, body
    finally:
        child.terminate()
        rest = child.communicate(timeout=120)[1]
    assert "in use" not in "".join(log) + rest
