"""Checks what video_pipeline wrote on a GPU, for scripts/gpu_check.sh.

    python gpu_check_outputs.py kernels DIR...   kernels in the torch traces
    python gpu_check_outputs.py memory DIR       device figures per region
    python gpu_check_outputs.py pickle DIR       allocator snapshot, read by PyTorch
    python gpu_check_outputs.py activations DIR  activation records from the device

Exits 1 with the reason on the first failed expectation. Only the standard
library, plus torch for the allocator snapshot's own reader.
"""
import glob
import gzip
import json
import math
import os
import pickle
import sys


def fail(msg):
    sys.exit("FAIL: " + msg)


def files(folder, pattern):
    found = sorted(glob.glob(os.path.join(folder, pattern)))
    if not found:
        if not os.path.isdir(folder):
            fail("no folder %s (the run that writes it failed)" % folder)
        fail("no %s in %s (has: %s)" % (pattern, folder, ", ".join(sorted(os.listdir(folder)))))
    return found


def load_trace(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def check_kernels(folders):
    for folder in folders:
        traces = [t for t in files(folder, "torch_trace*.json*") if ".summary." not in t]
        for path in traces:
            trace = load_trace(path)
            events = trace["traceEvents"]
            # The GPUs as Kineto lists them (TensorBoard's GPU views read them).
            devices = trace.get("deviceProperties", [])
            if not devices or not all(d.get("numSms", 0) > 0 and d.get("name") for d in devices):
                fail("%s: deviceProperties lists no GPU with a name and SMs: %s" % (path, devices))
            spans = [e for e in events if e.get("ph") == "X" and "region::" in e.get("name", "")]
            kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
            if not spans:
                fail("%s: no region spans" % path)
            if not kernels:
                fail("%s: no CUDA kernels (cat=kernel) among %d events" % (path, len(events)))
            # The launch of every kernel (the runtime call with the same
            # correlation id) lies inside a region span on its thread: kernels
            # run asynchronously, their launches do not.
            launches = {}
            for e in events:
                # Kineto's own traces file launches as cuda_runtime/driver,
                # regiontrace's keep them among the thread's other calls.
                if e.get("ph") == "X" and e.get("cat") != "kernel" and \
                        "correlation" in e.get("args", {}):
                    launches[e["args"]["correlation"]] = e
            outside = 0
            for k in kernels:
                args = k.get("args", {})
                for field in ("device", "stream", "correlation"):
                    if field not in args:
                        fail("%s: kernel %s has no %s: %s" % (path, k["name"][:60], field, args))
                launch = launches.get(args["correlation"])
                if launch is None:
                    fail("%s: kernel %s has no launch event" % (path, k["name"][:60]))
                inside = any(s["tid"] == launch["tid"] and s["pid"] == launch["pid"] and
                             s["ts"] <= launch["ts"] and
                             launch["ts"] + launch.get("dur", 0) <= s["ts"] + s["dur"]
                             for s in spans)
                outside += 0 if inside else 1
            if outside:
                fail("%s: %d of %d kernel launches outside every region span" %
                     (path, outside, len(kernels)))
            print("%s: %d kernels on streams %s, %d region spans, every launch inside a span; %s" %
                  (os.path.basename(path), len(kernels),
                   sorted({k["args"]["stream"] for k in kernels}), len(spans),
                   ", ".join("%s (%d SMs)" % (d["name"], d["numSms"]) for d in devices)))


def check_memory(folder):
    records = []
    for path in files(folder, "memory_rank0_*.jsonl"):
        with open(path) as f:
            records += [json.loads(line) for line in f if line.strip()]
    on_gpu = [r for r in records if "cuda:0" in r.get("devices", {})]
    if not on_gpu:
        fail("no memory record with cuda:0 among %d" % len(records))
    denoising = [r for r in on_gpu if r.get("path", "").endswith("inference_denoising")]
    if not denoising:
        fail("no cuda:0 record of inference_denoising")
    gpu = denoising[0]["devices"]["cuda:0"]
    if gpu["peak_bytes"] <= 0 or "allocator" not in gpu:
        fail("inference_denoising on cuda:0: %s" % gpu)
    print("inference_denoising on cuda:0: entry %d, peak %d, exit %d bytes; allocator %s" %
          (gpu["entry_bytes"], gpu["peak_bytes"], gpu["exit_bytes"], gpu["allocator"]))


def check_pickle(folder):
    path = files(folder, "memory_snapshot_*.pickle")[0]
    with open(path, "rb") as f:
        snapshot = pickle.load(f)
    for key in ("segments", "device_traces"):
        if key not in snapshot:
            fail("%s: no '%s' (keys: %s)" % (path, key, list(snapshot)))
    if not snapshot["segments"]:
        fail("%s: no segments" % path)
    # PyTorch's own reader, the one behind pytorch.org/memory_viz.
    from torch.cuda import _memory_viz
    html = _memory_viz.trace_plot(snapshot)
    segments = _memory_viz.segment_plot(snapshot)
    print("%s: %d segments, %d trace entries; memory_viz made %d + %d bytes of HTML" %
          (os.path.basename(path), len(snapshot["segments"]),
           sum(len(t) for t in snapshot["device_traces"]), len(html), len(segments)))
    json_twin = path[:-len(".pickle")] + ".json"
    if os.path.exists(json_twin):
        with open(json_twin) as f:
            meta = json.load(f)
        if meta.get("cuda_snapshot") != os.path.basename(path):
            fail("%s names cuda_snapshot %r, not %s" %
                 (json_twin, meta.get("cuda_snapshot"), os.path.basename(path)))


def check_activations(folder):
    records = []
    for path in files(folder, "activations_rank0_*.jsonl"):
        with open(path) as f:
            records += [json.loads(line) for line in f if line.strip()]
    blocks = [r for r in records if str(r.get("module", "")).startswith("blocks.")]
    if not blocks:
        fail("no activation record of a DiT block among %d" % len(records))
    devices = {r.get("device") for r in records if "device" in r}
    if "cuda:0" not in devices:
        fail("no activation recorded on cuda:0 (devices: %s)" % sorted(str(d) for d in devices))
    for r in blocks:
        for stat in ("abs_mean", "std", "sum"):
            v = r.get(stat)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                fail("%s step %s %s = %r" % (r.get("module"), r.get("step"), stat, v))
    print("%d activation records, %d of DiT blocks, devices %s, all finite" %
          (len(records), len(blocks), sorted(str(d) for d in devices)))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what, folders = sys.argv[1], sys.argv[2:]
    if what == "kernels":
        check_kernels(folders)
    elif what == "memory":
        check_memory(folders[0])
    elif what == "pickle":
        check_pickle(folders[0])
    elif what == "activations":
        check_activations(folders[0])
    else:
        sys.exit("unknown check %r (kernels, memory, pickle, activations)" % what)


if __name__ == "__main__":
    main()
