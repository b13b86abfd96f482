"""A FastVideo-like multiprocess executor, for test_fastvideo_executor.py.

FastVideo 0.2.1 (fastvideo/worker/multiproc_executor.py) runs one worker
process per GPU: started with `multiprocessing`'s spawn method as daemon
processes, each one installs a SIGTERM/SIGINT handler that raises SystemExit,
asks the kernel for SIGKILL when its parent dies (PR_SET_PDEATHSIG), sets
RANK, LOCAL_RANK and WORLD_SIZE, and builds its pipeline, whose constructor
calls `get_or_create_profiler(FASTVIDEO_TORCH_PROFILER_DIR)`. The executor
drives the workers over pipes and shuts them down in three stages: a
"shutdown" message to each, up to 5 s for them to return, SIGTERM to those
still alive, up to 2 s more, SIGKILL. This module does the same in its own
words, with a toy training step (forward, backward, optimizer, each in one of
FastVideo's registered regions) in place of a pipeline, so that a test can
run regiontrace (or FastVideo's own modules) the way FastVideo's runtime
really runs them, and end the workers every way that runtime ends them.

Run as a program: `python executor_harness.py '<plan as JSON>'` starts the
plan's workers, drives them, ends them, and prints the report (JSON) as the
last line of its standard output. The plan:

    {"method": "spawn" | "fork" | "forkserver" (torch and regiontrace preloaded),
     "harness_dir": folder for the workers' progress files,
     "end": "shutdown" (FastVideo's three stages) | "kill" (SIGKILL each
            worker `kill_after_s` after its first step) | "wait" (join),
     "workers": [{"rank": 0, "world_size": 2, "impl": "regiontrace" | "fastvideo",
                  "behaviour": see BEHAVIOURS, "steps": 3, "step_sleep_s": 0.0,
                  "signals": "fastvideo" | "default",
                  "kill_after_s": 1.0, "run_s": 2.0}, ...]}

Each worker appends `<step> <CLOCK_MONOTONIC ns>` to `progress_rank<r>.txt`
in harness_dir as each step's region closes, and `loaded <ns>` once its model
is built (one write(2) per line, so a SIGKILL never tears a line): the tests
bound what a killed worker's files may hold by what it had finished when it
was killed.
"""

import json
import multiprocessing
import os
import signal
import sys
import time

# What a worker does with its "run" message:
BEHAVIOURS = (
    "graceful",        # runs `steps` steps, answers, returns on "shutdown"
    "stuck",           # runs `steps` steps, then sleeps inside a region: never reads "shutdown"
    "ignore_sigterm",  # as "stuck", and ignores SIGTERM (set after regiontrace installed its
                       # handler): only SIGKILL ends it
    "endless",         # steps until it is killed; says "running" after the first
    "exit_abruptly",   # steps for `run_s` seconds, then os._exit(0): no atexit, no finalizers
)

# Every region the worker enters; FastVideo's profiler (and so regiontrace.fastvideo)
# records only the selected ones.
PROFILE_REGIONS = ("model_loading,training_step,training_dit,training_backward,"
                   "training_optimizer,inference_denoising")
STEP = "profiler_region_training_step"
STEP_CHILDREN = ("profiler_region_training_dit", "profiler_region_training_backward",
                 "profiler_region_training_optimizer")
LOADING = "profiler_region_model_loading"
LONG = "profiler_region_inference_denoising"

READY_TIMEOUT_S = 180  # spawned workers import torch: slow on a loaded 2-core machine
SHUTDOWN_WAIT_S = 5.0  # FastVideo's MultiprocExecutor.shutdown()
TERMINATE_WAIT_S = 2.0


# --- the worker ---------------------------------------------------------------

def fastvideo_api(impl):
    """The profiler and activation-trace functions of `impl`: FastVideo 0.2.1's
    own modules from its wheel, or regiontrace.fastvideo. fastvideo/__init__.py
    imports the whole pipeline stack, which these two modules do not need:
    bare packages over the wheel's folders load them (and what they import:
    envs, logger, hooks.hooks) unchanged, as test_fastvideo_side_by_side.py does."""
    import types
    if impl == "fastvideo":
        import importlib.util
        root = list(importlib.util.find_spec("fastvideo").submodule_search_locations)[0]
        for name, path in (("fastvideo", root), ("fastvideo.hooks", root + "/hooks")):
            if name not in sys.modules:
                package = types.ModuleType(name)
                package.__path__ = [path]
                sys.modules[name] = package
        from fastvideo.hooks import activation_trace as trace
        from fastvideo import profiler
    elif impl == "regiontrace":
        from regiontrace import fastvideo as profiler
        trace = profiler
    else:
        raise ValueError(f"unknown impl {impl!r}")
    return types.SimpleNamespace(
        get_or_create_profiler=profiler.get_or_create_profiler,
        profiler_region=profiler.profiler_region,
        attach_activation_trace=trace.attach_activation_trace,
        detach_activation_trace=trace.detach_activation_trace,
        trace_step=trace.trace_step)


class Model:
    """A toy DiT's training step; the regions are FastVideo's training regions."""

    def __init__(self, api, rank, step_sleep_s):
        import torch
        from torch import nn
        self.api, self.torch, self.sleep_s = api, torch, step_sleep_s
        # One intra-op thread: libgomp's thread pool does not survive fork()
        # (a forked child waits for its parent's OpenMP threads for ever), and
        # the steps are tiny anyway.
        torch.set_num_threads(1)
        with api.profiler_region(LOADING):
            torch.manual_seed(rank)
            self.net = nn.Sequential(nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 16))
            self.x = torch.randn(4, 16)

    def step(self, i):
        api = self.api
        with api.trace_step(i), api.profiler_region(STEP):
            with api.profiler_region(STEP_CHILDREN[0]):
                loss = self.net(self.x).square().mean()
                if self.sleep_s:
                    time.sleep(self.sleep_s)  # paces the steps without using the CPU
            with api.profiler_region(STEP_CHILDREN[1]):
                loss.backward()
            with api.profiler_region(STEP_CHILDREN[2]), self.torch.no_grad():
                # Plain SGD by hand: building a torch.optim optimizer imports
                # torch._dynamo, two seconds of CPU per worker.
                for p in self.net.parameters():
                    p -= 1e-3 * p.grad
                    p.grad = None


class Progress:
    """`<step> <monotonic ns>` lines, one write(2) each on an O_APPEND file."""

    def __init__(self, harness_dir, label):
        self.fd = os.open(os.path.join(harness_dir, f"progress_{label}.txt"),
                          os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def done(self, step):
        os.write(self.fd, f"{step} {time.monotonic_ns()}\n".encode())

    def note(self, word):
        os.write(self.fd, f"{word} {time.monotonic_ns()}\n".encode())


def _die_with_parent():
    # FastVideo's kill_itself_when_parent_died(): a worker never outlives the
    # executor (here: never outlives a test that failed half-way).
    import ctypes
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def worker_main(spec, harness_dir, pipe, ready_pipe):
    rank = spec["rank"]
    # FastVideo's worker module imports its profiler with the pipeline, long
    # before RANK is set: regiontrace must read RANK when it starts, not on import.
    api = fastvideo_api(spec["impl"])

    if spec.get("signals", "fastvideo") == "fastvideo":
        # FastVideo's worker_main(): SIGTERM or SIGINT raises SystemExit once.
        requested = []

        def on_signal(signum, frame):
            if not requested:
                requested.append(signum)
                raise SystemExit()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    _die_with_parent()

    # FastVideo's Worker.init_device(), before the pipeline exists.
    os.environ["LOCAL_RANK"] = str(rank)
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(spec.get("world_size", 1))

    # The pipeline's constructor: the profiler first, then the modules, then
    # (FastVideo's order) the activation trace.
    api.get_or_create_profiler(os.environ.get("FASTVIDEO_TORCH_PROFILER_DIR"))
    model = Model(api, rank, spec.get("step_sleep_s", 0.0))
    progress = Progress(harness_dir, f"rank{rank}")
    progress.note("loaded")
    tracing = api.attach_activation_trace(model.net)

    behaviour = spec["behaviour"]
    if behaviour == "ignore_sigterm":
        # After regiontrace installed its own handler (it starts with the
        # profiler): this worker is deaf to SIGTERM, regiontrace's watcher included.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    ready_pipe.send({"status": "READY", "pid": os.getpid()})
    ready_pipe.close()

    while True:
        message = pipe.recv()
        method = message["method"]
        if method == "shutdown":
            pipe.send({"status": "shutdown_complete"})
            return  # the profiler is stopped at exit, as in FastVideo
        if method != "run":
            pipe.send({"error": f"unknown method {method!r}"})
            continue
        if behaviour == "endless":
            step = 0
            while True:
                model.step(step)
                progress.done(step)
                if step == 0:
                    pipe.send({"status": "running", "ns": time.monotonic_ns()})
                step += 1
        if behaviour == "exit_abruptly":
            deadline = time.monotonic() + spec["run_s"]
            step = 0
            while time.monotonic() < deadline:
                model.step(step)
                progress.done(step)
                step += 1
            progress.note("exit")
            os._exit(0)
        for step in range(message["steps"]):
            model.step(step)
            progress.done(step)
        api.detach_activation_trace(tracing)
        tracing = None
        if behaviour == "graceful":
            pipe.send({"status": "done", "steps": message["steps"]})
            continue
        # "stuck" and "ignore_sigterm": inside a long region when the executor
        # gives up on them.
        with api.profiler_region(LONG):
            progress.note("long_region")
            pipe.send({"status": "in_long_region", "steps": message["steps"]})
            time.sleep(600)


# --- the executor ---------------------------------------------------------------

class Executor:
    """Starts the plan's workers and ends them; `report` says how each ended:
    per rank its pid, the messages it sent, and when the executor signalled
    it (sigterm_ns, sigkill_ns just before kill(), killed_ns just after)."""

    def __init__(self, plan):
        self.plan = plan
        self.ctx = multiprocessing.get_context(plan.get("method", "spawn"))
        if plan.get("method") == "forkserver":
            # Workers forked from a server that imported these once: what
            # spawn costs in imports (torch: seconds of CPU) is paid once.
            self.ctx.set_forkserver_preload(["torch", "regiontrace.fastvideo",
                                             "executor_harness"])
        self.workers = []
        self.report = {}

    def start(self):
        unready = []
        for spec in self.plan["workers"]:
            executor_end, worker_end = self.ctx.Pipe(duplex=True)
            ready_reader, ready_writer = self.ctx.Pipe(duplex=False)
            proc = self.ctx.Process(target=worker_main, name=f"FVWorkerProc-{spec['rank']}",
                                    args=(spec, self.plan["harness_dir"], worker_end,
                                          ready_writer),
                                    daemon=True)
            proc.start()
            worker_end.close()
            ready_writer.close()
            unready.append((spec, proc, executor_end, ready_reader))
        deadline = time.monotonic() + READY_TIMEOUT_S
        for spec, proc, pipe, ready in unready:
            if not ready.poll(max(0.0, deadline - time.monotonic())):
                raise RuntimeError(f"worker {spec['rank']} not ready in {READY_TIMEOUT_S} s")
            answer = ready.recv()  # EOFError: the worker died while starting
            ready.close()
            self.workers.append((spec, proc, pipe))
            self.report[spec["rank"]] = {"pid": answer["pid"], "messages": []}

    def _receive(self, rank, pipe, timeout):
        if not pipe.poll(timeout):
            raise RuntimeError(f"worker {rank} did not answer in {timeout} s")
        message = pipe.recv()
        message["received_ns"] = time.monotonic_ns()
        self.report[rank]["messages"].append(message)
        return message

    def run(self):
        for spec, _, pipe in self.workers:
            pipe.send({"method": "run", "steps": spec.get("steps", 0)})
        if self.plan["end"] != "shutdown":
            return  # "kill" waits for "running" itself; "wait" for the exit
        for spec, _, pipe in self.workers:
            self._receive(spec["rank"], pipe, 120)

    def shutdown(self):
        """FastVideo's three stages, timed as FastVideo times them."""
        for _, _, pipe in self.workers:
            try:
                pipe.send({"method": "shutdown"})
            except OSError:
                pass
        self._wait_all(SHUTDOWN_WAIT_S)
        for spec, proc, _ in self.workers:
            if proc.is_alive():
                self.report[spec["rank"]]["sigterm_ns"] = time.monotonic_ns()
                proc.terminate()
        self._wait_all(TERMINATE_WAIT_S)
        for spec, proc, _ in self.workers:
            if proc.is_alive():
                self.report[spec["rank"]]["sigkill_ns"] = time.monotonic_ns()
                proc.kill()
                self.report[spec["rank"]]["killed_ns"] = time.monotonic_ns()
            proc.join(timeout=10)

    def kill_each(self):
        """SIGKILL each worker `kill_after_s` after it said it runs."""
        deadlines = []
        for spec, proc, pipe in self.workers:
            running = self._receive(spec["rank"], pipe, 120)
            deadlines.append((running["received_ns"] + int(spec["kill_after_s"] * 1e9),
                              spec, proc))
        for deadline, spec, proc in sorted(deadlines, key=lambda d: d[0]):
            time.sleep(max(0.0, (deadline - time.monotonic_ns()) / 1e9))
            self.report[spec["rank"]]["sigkill_ns"] = time.monotonic_ns()
            proc.kill()
            self.report[spec["rank"]]["killed_ns"] = time.monotonic_ns()
        for _, proc, _ in self.workers:
            proc.join(timeout=10)

    def wait(self):
        for _, proc, _ in self.workers:
            proc.join(timeout=120)

    def _wait_all(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not any(proc.is_alive() for _, proc, _ in self.workers):
                return
            time.sleep(0.05)

    def finish(self):
        for spec, proc, pipe in self.workers:
            if proc.is_alive():  # a plan that went wrong: leave nothing behind
                proc.kill()
                proc.join(timeout=10)
            self.report[spec["rank"]]["exitcode"] = proc.exitcode
            pipe.close()


def run_plan(plan):
    executor = Executor(plan)
    try:
        executor.start()
        executor.run()
        end = plan["end"]
        if end == "shutdown":
            executor.shutdown()
        elif end == "kill":
            executor.kill_each()
        else:
            executor.wait()
    finally:
        executor.finish()
    return executor.report


def read_progress(harness_dir, label):
    """[(step, ns)] and {word: ns} of a progress file (`label`: rank<r> for a worker)."""
    steps, notes = [], {}
    path = os.path.join(harness_dir, f"progress_{label}.txt")
    if not os.path.exists(path):
        return steps, notes
    with open(path) as f:
        for line in f:
            what, ns = line.split()
            if what.isdigit():
                steps.append((int(what), int(ns)))
            else:
                notes[what] = int(ns)
    return steps, notes


if __name__ == "__main__":
    # The executor's own module is importable by name in the workers (spawn
    # pickles worker_main as executor_harness.worker_main).
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import executor_harness
    print(json.dumps(executor_harness.run_plan(json.loads(sys.argv[1]))), flush=True)
