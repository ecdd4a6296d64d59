#!/usr/bin/python3
"""vramplan calibration: the measurement side of `vramplan calibrate`.

    calibrate.py --device cpu|cuda [--model PATH ...] [--out FILE] [--threads N]
                 [--list] [--quick]

Runs a grid of real PyTorch measurements (calib/harness.py, in-process)
chosen so that each kind of point isolates one term of vramplan's model:

    weights  the model on the device, nothing else        -> weight + buffer bytes
    states   at rest after two steps, gradients kept      -> + gradients + optimizer states
    step     full training steps (harness.measure)        -> activations, logits, temporaries
             fp32/adamw at micro-batch {1,2} x seq {S,2S} (activation slope in b and s),
             recompute full at one shape (saved vs recomputed), one bf16-mixed
             point (autocast copies), one sgd point (optimizer temporaries),
             one eager-attention point (first model only)
    ddp2     cuda with >= 2 GPUs: one step under DistributedDataParallel over
             2 GPUs (NCCL buffers, DDP gradient buckets); runs first (before
             this process has a CUDA context); never fails the run

and writes the results as YAML (format below; `vramplan calibrate` reads it
with libyaml and fits its constants).  Progress goes to stderr, one line a
point.

Output (--out FILE is written atomically; default stdout):

    vramplan-measurements: 1
    device: cpu | cuda
    torch: "2.5.1"
    cuda: null | torch.version.cuda
    gpu: null | torch.cuda.get_device_name(0)
    driver: null | NVIDIA driver version
    harness_version: 1
    points:
      - id: "gpt2-tiny step fp32 adamw mb2 s64 none"
        kind: step                      # weights | states | step | ddp2
        model: /abs/path/gpt2-tiny.yaml
        precision: fp32
        optimizer: adamw
        micro_batch: 2
        seq: 64
        recompute: none
        attention: sdpa
        dropout: 0.0
        world: 1
        allocated_peak_bytes: 21959168
        reserved_peak_bytes: null       # cuda only
        device_peak_bytes: null         # cuda only
        step_seconds: 0.0123            # median of the steps after the first; null for weights/states

Exit status: 0 ok; 1 one or more points failed (the others are still
written; stderr names the failures); 2 usage error, a model file that cannot
be read, or torch / PyYAML not importable; 5 --device cuda but no CUDA device
is visible to PyTorch.
"""

import argparse
import gc
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MEASUREMENTS_VERSION = 1
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NOCUDA = 0, 1, 2, 5

DEFAULT_MODELS = {
    "cpu": ["tests/data/val/gpt2-tiny.yaml", "tests/data/val/tiny-llama.yaml"],
    "cuda": ["models/gpt2.yaml", "tests/data/val/llama-4l-mha.yaml"],
}
BASE_SEQ = {"cpu": 64, "cuda": 512}
# steps per step point: the first step creates the optimizer state; the
# timing is the median of the later ones (on CPU the profiler replay makes
# every step costly, so only the one steady-state step).
STEPS = {"cpu": 2, "cuda": 3}
DDP_TIMEOUT_S = 180

PLAN_KEYS = ("precision", "optimizer", "micro_batch", "seq", "recompute", "attention", "dropout", "world")

# filled by import_deps()
torch = None
yaml = None
harness = None


def eprint(*a):
    print(*a, file=sys.stderr)
    sys.stderr.flush()


def import_deps(prog="calibrate"):
    """Imports torch, PyYAML and the harness; on failure prints which
    interpreter lacks what and exits 2."""
    global torch, yaml, harness
    missing = []
    try:
        import torch as _torch
        torch = _torch
    except ImportError as e:
        missing.append("torch (%s)" % e)
    try:
        import yaml as _yaml
        yaml = _yaml
    except ImportError as e:
        missing.append("PyYAML (%s)" % e)
    if missing:
        eprint("%s: %s cannot import %s; run it with a Python that has them "
               "(e.g. /usr/bin/python3 on Debian) or set VRAMPLAN_PYTHON to one"
               % (prog, sys.executable, " and ".join(missing)))
        sys.exit(EXIT_USAGE)
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import harness as _harness
    harness = _harness
    return torch, yaml, harness


# ----------------------------------------------------------------------------
# device helpers (also used by heldout.py)
# ----------------------------------------------------------------------------

def cuda_reset():
    """Between points: free everything, return the cached blocks and the
    cuBLAS workspaces (they live in the caching allocator and would count in
    the next point's memory_allocated), reset the peak counters — so every
    point starts as a fresh process would, context aside."""
    gc.collect()
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return
    torch.cuda.synchronize()
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        try:
            clear()
        except Exception:
            pass
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.synchronize()


def device_used_bytes():
    """Device memory in use now, as nvidia-smi shows it: NVML's used bytes
    when pynvml imports, else torch.cuda.mem_get_info total - free."""
    u = harness._cuda_device_used()
    return u.get("nvml_used_bytes", u.get("mem_get_info_used_bytes"))


def driver_version():
    try:
        import pynvml
        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        if isinstance(v, bytes):
            v = v.decode()
        return str(v)
    except Exception:
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             universal_newlines=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0].strip()
    except Exception:
        pass
    return None


def cuda_missing_message(prog="calibrate"):
    return ("%s: no CUDA device visible to PyTorch (%s: torch %s, built with CUDA %s, "
            "CUDA_VISIBLE_DEVICES=%s); use a CUDA build of PyTorch on a machine with an NVIDIA GPU "
            "(VRAMPLAN_PYTHON selects the interpreter)"
            % (prog, sys.executable, torch.__version__, torch.version.cuda,
               os.environ.get("CUDA_VISIBLE_DEVICES", "(unset)")))


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return None
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def step_time(step_seconds):
    """Median of the steps after the first (the first creates the optimizer
    state and warms the kernels up); the only step if there is one."""
    if not step_seconds:
        return None
    later = step_seconds[1:] or step_seconds
    return round(float(median(later)), 6)


def mib(n):
    return "%.1f MiB" % (n / 1048576.0)


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def resolve_model(path):
    """A model path as given (relative to the working directory) or, failing
    that, relative to the repository root; returned absolute."""
    for cand in (path, os.path.join(ROOT, path)):
        if os.path.isfile(cand):
            return os.path.abspath(cand)
    return None


def model_label(path):
    base = os.path.basename(path)
    stem, ext = os.path.splitext(base)
    if stem == "config" and ext == ".json":
        return os.path.basename(os.path.dirname(path)) or stem
    if stem.endswith(".config"):
        stem = stem[:-len(".config")]
    return stem


# ----------------------------------------------------------------------------
# the grid
# ----------------------------------------------------------------------------

def _point(kind, path, cfg, precision="fp32", optimizer="adamw", micro_batch=1, seq=64, recompute="none",
           attention="sdpa", world=1):
    label = model_label(path)
    if kind == "weights":
        pid = "%s weights" % label
    elif kind == "states":
        pid = "%s states %s %s" % (label, precision, optimizer)
    else:
        pid = "%s %s %s %s mb%d s%d %s" % (label, kind, precision, optimizer, micro_batch, seq, recompute)
        if attention != "sdpa":
            pid += " " + attention
    return {"id": pid, "kind": kind, "model": path, "precision": precision, "optimizer": optimizer,
            "micro_batch": int(micro_batch), "seq": int(seq), "recompute": recompute,
            "attention": attention, "dropout": 0.0, "world": int(world), "_cfg": cfg}


def base_seq(device, cfg):
    """S for the grid: 64 on CPU, 512 on CUDA, halved until 2S fits a model
    with learned positions / GPT-2's causal buffer (max_seq)."""
    s = BASE_SEQ[device]
    c = harness.normalize_cfg(cfg)
    limited = c["position"] == "learned" or harness.model_family(c) == "gpt2"
    while limited and 2 * s > c["max_seq"] and s > 8:
        s //= 2
    return s


def build_grid(device, models, quick=False, ddp=False):
    """models: [(abs_path, raw_cfg)].  Returns the list of points."""
    pts = []
    if quick:
        path, cfg = models[0]
        s = base_seq(device, cfg)
        return [_point("weights", path, cfg, seq=s),
                _point("states", path, cfg, seq=s),
                _point("step", path, cfg, micro_batch=1, seq=s),
                _point("step", path, cfg, micro_batch=2, seq=2 * s)]
    for i, (path, cfg) in enumerate(models):
        s = base_seq(device, cfg)
        P = lambda kind, **kw: _point(kind, path, cfg, **kw)   # noqa: E731
        pts.append(P("weights", seq=s))
        pts.append(P("states", seq=s))
        for b, sq in ((1, s), (2, s), (1, 2 * s), (2, 2 * s)):
            pts.append(P("step", micro_batch=b, seq=sq))
        pts.append(P("step", micro_batch=2, seq=2 * s, recompute="full"))
        pts.append(P("step", precision="bf16-mixed", micro_batch=2, seq=s))
        pts.append(P("step", optimizer="sgd", micro_batch=2, seq=s))
        if i == 0:
            pts.append(P("step", micro_batch=2, seq=s, attention="eager"))
    if ddp and device == "cuda" and models:
        # first: the ranks' device figures are device-wide, and this process
        # has no CUDA context on GPU 0 yet (it would count in rank 0's)
        path, cfg = models[0]
        pts.insert(0, _point("ddp2", path, cfg, micro_batch=2, seq=base_seq(device, cfg), world=2))
    return pts


# ----------------------------------------------------------------------------
# measurements
# ----------------------------------------------------------------------------

def _resolve(pt, device):
    return harness._resolve(pt["_cfg"], device, pt["precision"], pt["optimizer"], pt["micro_batch"],
                            pt["seq"], pt["recompute"], pt["attention"], pt["dropout"])


def _result(pt, allocated, reserved=None, device_peak=None, seconds=None):
    out = {"id": pt["id"], "kind": pt["kind"], "model": pt["model"]}
    for k in PLAN_KEYS:
        out[k] = pt[k]
    out["dropout"] = float(out["dropout"])
    out["allocated_peak_bytes"] = int(allocated)
    out["reserved_peak_bytes"] = None if reserved is None else int(reserved)
    out["device_peak_bytes"] = None if device_peak is None else int(device_peak)
    out["step_seconds"] = seconds
    return out


def _prepare(pt, device, threads):
    """The point's model config and options, seeded; on CUDA the device
    reading before the context and the allocated bytes before the model."""
    c, o = _resolve(pt, device)
    torch.set_num_threads(int(threads))
    torch.manual_seed(0)
    before = 0
    if device == "cuda":
        harness.record_device_used_before_context()
        cuda_reset()
        torch.cuda.init()
        before = torch.cuda.memory_allocated()
    return c, o, before


def measure_weights(pt, device, threads):
    """The model built and moved to the device, nothing else."""
    c, o, before = _prepare(pt, device, threads)
    model = harness.build_model(c, o["attention"], False, "full")
    model.train()
    if device == "cpu":
        seen = {}
        alloc = harness._unique_bytes(list(model.parameters()), seen)
        alloc += harness._unique_bytes(list(model.buffers()), seen)
        del model
        return _result(pt, alloc)
    model.to("cuda")
    torch.cuda.synchronize()
    alloc = torch.cuda.memory_allocated() - before
    reserved = torch.cuda.max_memory_reserved()
    dev = device_used_bytes()
    del model
    return _result(pt, alloc, reserved, dev)


def measure_states(pt, device, threads):
    """At rest after two training steps with the gradients of step 2 kept
    (no zero_grad after it) and the optimizer state present; the input batch
    and every activation freed: weights + buffers + gradients + optimizer
    states."""
    c, o, before = _prepare(pt, device, threads)
    model = harness.build_model(c, o["attention"], o["recompute"] == "full", "full")
    model.train()
    model.to(device)
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, c["vocab"], (o["micro_batch"], o["seq"]), generator=gen).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = harness.make_optimizer(o["optimizer"], params, device)
    for step in (1, 2):
        with harness._autocast_ctx(o["precision"], device):
            loss = model(ids, ids)
        loss.backward()
        opt.step()
        if step == 1:
            opt.zero_grad(set_to_none=True)
        del loss
    del ids
    gc.collect()
    if device == "cpu":
        seen = {}
        alloc = harness._unique_bytes(list(model.parameters()), seen)
        alloc += harness._unique_bytes(list(model.buffers()), seen)
        alloc += harness._unique_bytes([p.grad for p in model.parameters()], seen)
        alloc += harness._unique_bytes(harness._optimizer_tensors(opt), seen)
        del model, opt, params
        return _result(pt, alloc)
    torch.cuda.synchronize()
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:   # workspaces are allocator blocks, not states
        clear()
    alloc = torch.cuda.memory_allocated() - before
    reserved = torch.cuda.memory_reserved()
    dev = device_used_bytes()
    del model, opt, params
    return _result(pt, alloc, reserved, dev)


def measure_step(pt, device, threads):
    res = harness.measure(pt["_cfg"], device=device, precision=pt["precision"], optimizer=pt["optimizer"],
                          micro_batch=pt["micro_batch"], seq=pt["seq"], recompute=pt["recompute"],
                          attention=pt["attention"], dropout=pt["dropout"], steps=STEPS[device], seed=0,
                          num_threads=threads)
    if device == "cpu":
        return _result(pt, res["allocated_peak_bytes"], None, None, step_time(res.get("step_seconds")))
    return _result(pt, res["allocated_peak_bytes"], res.get("reserved_peak_bytes"),
                   res.get("device_peak_bytes"), step_time(res.get("step_seconds")))


# ---- ddp2: DistributedDataParallel over 2 GPUs (torch.multiprocessing spawn)

def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ddp_worker(rank, world, port, pt, out_path, device="cuda"):
    """One DDP rank: 3 steps, rank 0 writes its peaks to out_path.  device
    "cpu" (gloo, no memory figures) exists only to test this code path on a
    machine without GPUs."""
    import torch as _t
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    global torch, harness
    torch = _t
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import harness as _h
    harness = _h
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    cuda = device == "cuda"

    def sync():
        if cuda:
            _t.cuda.synchronize()
    if cuda:
        if rank == 0:
            harness.record_device_used_before_context(0)
        _t.cuda.set_device(rank)
    dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world)
    try:
        c, o = _resolve(pt, device)
        _t.manual_seed(0)
        model = harness.build_model(c, o["attention"], o["recompute"] == "full", "full")
        model.train()
        model.to(device)
        ddp = DDP(model, device_ids=[rank] if cuda else None)
        opt = harness.make_optimizer(o["optimizer"], [p for p in ddp.parameters() if p.requires_grad], device)
        gen = _t.Generator().manual_seed(1 + rank)
        ids = _t.randint(0, c["vocab"], (o["micro_batch"], o["seq"]), generator=gen).to(device)
        scaler = _t.cuda.amp.GradScaler() if o["precision"] == "fp16-mixed" else None
        sync()
        if cuda:
            _t.cuda.reset_peak_memory_stats()
        secs = []
        for _ in range(STEPS[device]):
            sync()
            t0 = time.perf_counter()
            harness.plain_step(lambda: ddp(ids, ids), opt, scaler, o["precision"], device)
            sync()
            secs.append(time.perf_counter() - t0)
        if cuda:
            res = {"allocated": int(_t.cuda.max_memory_allocated()), "reserved": int(_t.cuda.max_memory_reserved()),
                   "device": device_used_bytes(), "seconds": secs}
        else:
            res = {"allocated": 0, "reserved": None, "device": None, "seconds": secs}
        dist.barrier()
        if rank == 0:
            with open(out_path, "w") as f:
                json.dump(res, f)
    finally:
        dist.destroy_process_group()


def measure_ddp2(pt, device, threads):
    import torch.multiprocessing as mp
    fd, out_path = tempfile.mkstemp(prefix="vramplan-ddp2-", suffix=".json")
    os.close(fd)
    os.unlink(out_path)
    pt_send = dict(pt)
    ctx = mp.start_processes(_ddp_worker, args=(2, _free_port(), pt_send, out_path, device), nprocs=2,
                             join=False, start_method="spawn")
    deadline = time.time() + DDP_TIMEOUT_S
    try:
        while not ctx.join(timeout=5):
            if time.time() > deadline:
                raise RuntimeError("timed out after %d s" % DDP_TIMEOUT_S)
    finally:
        for p in ctx.processes:
            if p.is_alive():
                p.terminate()
        for p in ctx.processes:
            p.join(10)
    try:
        with open(out_path) as f:
            r = json.load(f)
    finally:
        if os.path.exists(out_path):
            os.unlink(out_path)
    return _result(pt, r["allocated"], r["reserved"], r["device"], step_time(r["seconds"]))


MEASURE = {"weights": measure_weights, "states": measure_states, "step": measure_step, "ddp2": measure_ddp2}


# ----------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------

def header(device):
    h = {"vramplan-measurements": MEASUREMENTS_VERSION, "device": device, "torch": str(torch.__version__),
         "cuda": None, "gpu": None, "driver": None, "harness_version": int(harness.HARNESS_VERSION)}
    if device == "cuda":
        h["cuda"] = None if torch.version.cuda is None else str(torch.version.cuda)
        try:
            h["gpu"] = str(torch.cuda.get_device_name(0))
        except Exception:
            pass
        h["driver"] = driver_version()
    return h


QUOTED_KEYS = ("id", "model", "torch", "cuda", "gpu", "driver")


class _Quoted(str):
    """A string written double-quoted (ids, paths, versions: never read as
    numbers or booleans by any YAML reader)."""


def _quoted_representer(dumper, data):
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style='"')


def dump_yaml(doc):
    class Dumper(yaml.SafeDumper):
        pass
    Dumper.add_representer(_Quoted, _quoted_representer)

    def q(d):
        return {k: (_Quoted(v) if k in QUOTED_KEYS and isinstance(v, str) else v) for k, v in d.items()}
    out = q({k: v for k, v in doc.items() if k != "points"})
    if "points" in doc:
        out["points"] = [q(p) for p in doc["points"]]
    return yaml.dump(out, Dumper=Dumper, sort_keys=False, default_flow_style=False, width=4096,
                     allow_unicode=False)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="calibrate.py",
        description="measure the calibration grid for `vramplan calibrate` (YAML on stdout or --out)")
    ap.add_argument("--device", required=True, choices=("cpu", "cuda"))
    ap.add_argument("--model", action="append", metavar="PATH",
                    help="vramplan model YAML (repeatable; default: two small models for the device)")
    ap.add_argument("--out", metavar="FILE", help="write the measurements here (atomically); default stdout")
    ap.add_argument("--threads", type=int, default=2, help="CPU threads (torch.set_num_threads), default 2")
    ap.add_argument("--list", action="store_true", help="print the grid without running it")
    ap.add_argument("--quick", action="store_true", help="a 4-point grid (first model only) for smoke tests")
    a = ap.parse_args(argv)
    if a.threads < 1:
        ap.error("--threads must be >= 1")
    import_deps()

    models = []
    for m in (a.model or DEFAULT_MODELS[a.device]):
        path = resolve_model(m)
        if path is None:
            eprint("calibrate: %s: no such model file" % m)
            return EXIT_USAGE
        try:
            cfg = harness.load_model_cfg(path)
            harness.normalize_cfg(cfg)
        except (harness.HarnessError, yaml.YAMLError, OSError) as e:
            eprint("calibrate: %s: %s (a vramplan model YAML is needed)" % (m, e))
            return EXIT_USAGE
        models.append((path, cfg))

    if a.device == "cuda" and not a.list:
        # NVML's figure before this process creates a CUDA context (optional)
        harness.record_device_used_before_context()
        if not torch.cuda.is_available():
            eprint(cuda_missing_message())
            return EXIT_NOCUDA
    ngpu = 0
    if a.device == "cuda":
        try:
            ngpu = torch.cuda.device_count() if torch.cuda.is_available() else 0
        except Exception:
            ngpu = 0
    points = build_grid(a.device, models, quick=a.quick, ddp=(ngpu >= 2 and not a.quick))
    n = len(points)

    if a.list:
        for i, pt in enumerate(points, 1):
            print("[%d/%d] %s  (%s)" % (i, n, pt["id"], os.path.relpath(pt["model"], ROOT)
                                        if pt["model"].startswith(ROOT + os.sep) else pt["model"]))
        if a.device == "cuda" and ngpu < 2:
            print("(ddp2 point: only with >= 2 CUDA devices; %d visible)" % ngpu)
        return EXIT_OK

    t_all = time.time()
    results, failed = [], []
    for i, pt in enumerate(points, 1):
        t0 = time.time()
        try:
            r = MEASURE[pt["kind"]](pt, a.device, a.threads)
        except Exception as e:   # incl. CUDA OOM; ddp2 failures are notes only
            msg = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
            if pt["kind"] == "ddp2":
                eprint("[%d/%d] %s: skipped (%s)" % (i, n, pt["id"], msg))
            else:
                eprint("[%d/%d] %s: FAILED (%s)" % (i, n, pt["id"], msg))
                failed.append(pt["id"])
            r = None
        finally:
            if a.device == "cuda":
                try:
                    cuda_reset()
                except Exception:
                    pass
            else:
                gc.collect()
        if r is None:
            continue
        dt = time.time() - t0
        extra = ""
        if r["reserved_peak_bytes"] is not None:
            extra += ", reserved %s" % mib(r["reserved_peak_bytes"])
        if r["device_peak_bytes"] is not None:
            extra += ", device %s" % mib(r["device_peak_bytes"])
        eprint("[%d/%d] %s: allocated %s%s, %.2f s" % (i, n, pt["id"], mib(r["allocated_peak_bytes"]), extra, dt))
        results.append(r)

    doc = header(a.device)
    doc["points"] = results
    text = dump_yaml(doc)
    if a.out:
        write_atomic(a.out, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    eprint("calibrate: %d of %d points measured in %.1f s%s" % (
        len(results), n, time.time() - t_all, (" -> " + a.out) if a.out else ""))
    if failed:
        eprint("calibrate: %d point(s) failed: %s" % (len(failed), "; ".join(failed)))
        return EXIT_FAIL
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
