"""Measure FSDP1 per rank on the CPU and compare with vramplan's estimate.

    .venv-test/bin/python tests/validate_fsdp.py      # the grid, needs $VRAMPLAN
    options: --filter SUBSTRING   --json FILE   --list   --measure-only
    VALIDATE_FSDP_EVENTS=DIR: each rank's step-2 allocations of 64 KiB
    and more, with the ops that made them, in DIR/rankN.txt

A development tool, not yet a test: it is not in `make check`, because
today's FSDP model misses the grid by 9% mean, 16% worst (see below) and
because the measurement is not yet repeatable on a loaded machine.

Every case spawns WORLD ranks (torch.multiprocessing, the gloo backend,
one CPU thread each), builds calib/harness.py's Llama-style model from
tests/data/val/NAME.yaml on each, wraps it in FSDP1
(FullyShardedDataParallel: FULL_SHARD, every decoder block its own unit,
the embeddings, final norm and head in the root unit, BACKWARD_PRE,
limit_all_gathers), and measures STEPS training steps on every rank with
the harness's exact allocator replay (the profiler's allocation events on
top of what each rank holds before the first step: its parameter shards,
buffers and inputs), less gloo's staging copies (_without_gloo).

The cases: full training and LoRA (harness.apply_lora: the base frozen,
fp32 adapters on q and v), use_orig_params True and False (LoRA only with
True: with False FSDP1 refuses a unit that mixes frozen and trainable
parameters), fp32 and bf16 (FSDP's MixedPrecision with bf16 parameters,
reductions and buffers, under bf16 autocast, as accelerate runs it; the
LoRA base stays fp32 there, since a flat parameter needs one dtype).

    $VRAMPLAN MODEL --device cpu --json --dp WORLD --fsdp full
              --framework fsdp1 --precision P --optimizer adamw ...

is the estimate for one rank (per_gpu.allocated_peak_bytes).  The gate,
once the model meets it: every rank's |error| <= MAX_LIMIT_PCT, the mean
over ranks and cases <= MEAN_LIMIT_PCT.

What the event logs show (PyTorch 2.13, llama-4l-mha, b2 s64); the
estimate models the first two as constants over the step (src/mem.c,
sharding() and unit_done()), which is high where no block is gathered:
- the root unit (2097408 parameters here) is gathered at the first
  forward and stays unsharded until its post-backward hook, at the very
  end of backward (_post_forward_reshard keeps the root's parameters);
  at that hook the peak is the root, the head's and the embeddings'
  gradients and the root's cat, with no block gathered;
- a unit's gradient exists twice at the end of its backward: the
  per-parameter gradients and the flat gradient SplitWithSizesBackward's
  cat makes of them (both use_orig_params settings); the post-backward
  hook then frees the unsharded parameter, makes the sharded gradient
  (N/W) and frees the flat one;
- BACKWARD_PRE: the next unit is all-gathered in the pre-backward hook,
  at the unit's first incoming gradient, so two units are unsharded
  through a unit's backward (modelled);
- with LoRA and use_orig_params=True the whole flat gradient, frozen
  parts included, is made and reduce-scattered (the estimate counts only
  the adapters' gradients: 14 to 29% low).

Repeatability: gloo's worker thread drops its references to a
collective's tensors a little after the collective returns, so some
buffers FSDP has let go are freed late, and on a busy machine they pile
up over steps (a rank read 65.2 MB in one run and 69.4 to 79.9 MB in
another).  The lowest step peak from the second step on is reported,
which is repeatable on an idle machine only.

Exit status: 0 pass; 1 over a bar or a case failed; 2 usage, or torch
cannot be imported.
"""

import argparse
import functools
import json
import os
import shlex
import socket
import subprocess
import sys
import time

MEAN_LIMIT_PCT = 3.0
MAX_LIMIT_PCT = 8.0

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data", "val")
sys.path.insert(0, os.path.join(ROOT, "calib"))

try:
    import torch  # noqa: E402
    import torch.distributed as dist  # noqa: E402
    import torch.multiprocessing as mp  # noqa: E402
    import harness  # noqa: E402
except ImportError as e:
    print("%s; run with the interpreter of the test venv (make venv)" % e)
    sys.exit(2)

WORLD = 2
STEPS = 4

# (model, precision, lora rank, use_orig_params, micro_batch, seq)
GRID = [
    ("llama-4l-mha", "fp32", 0, True, 2, 64),
    ("llama-4l-mha", "fp32", 0, False, 2, 64),
    ("llama-4l-mha", "bf16-mixed", 0, True, 2, 64),
    ("llama-4l-mha", "bf16-mixed", 0, False, 2, 64),
    ("llama-4l-mha", "fp32", 8, True, 2, 64),
    ("llama-4l-mha", "bf16-mixed", 8, True, 2, 64),
]


def case_name(c):
    m, p, r, u, b, s = c
    return "%s/%s/%s/%s/b%ds%d/w%d" % (m, p, "lora%d" % r if r else "full", "orig" if u else "flat",
                                        b, s, WORLD)


def model_path(m):
    return os.path.join(DATA, m + ".yaml")


def _free_port():
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def _rank(rank, world, port, c, out):
    from torch.distributed.fsdp import (BackwardPrefetch, FullyShardedDataParallel as FSDP, MixedPrecision,
                                        ShardingStrategy)
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

    m, prec, r, uop, b, s = c
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        torch.set_num_threads(1)
        torch.manual_seed(0)
        cfg = harness.normalize_cfg(harness.load_model_cfg(model_path(m)))
        cfg["dropout"] = 0.0
        model = harness.build_model(cfg, "sdpa", False, "full")
        model.train()
        fam = harness.model_family(cfg)
        if r:
            lo = {"r": r, "targets": ["q", "v"], "alpha": 2.0 * r, "dropout": 0.0, "dtype": "fp32"}
            harness.apply_lora(model, fam, cfg, lo)
        mpol = None
        if prec == "bf16-mixed":
            bf = torch.bfloat16
            mpol = MixedPrecision(param_dtype=bf, reduce_dtype=bf, buffer_dtype=bf)
        block = type(model.layers[0])
        fsdp = FSDP(model, auto_wrap_policy=functools.partial(transformer_auto_wrap_policy,
                                                              transformer_layer_cls={block}),
                    sharding_strategy=ShardingStrategy.FULL_SHARD, use_orig_params=uop,
                    mixed_precision=mpol, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                    limit_all_gathers=True, device_id=torch.device("cpu"))
        gen = torch.Generator().manual_seed(1 + rank)
        ids = torch.randint(0, cfg["vocab"], (b, s), generator=gen)
        trainable = [p for p in fsdp.parameters() if p.requires_grad]
        opt = harness.make_optimizer("adamw", trainable, "cpu")
        o = {"precision": prec, "device": "cpu"}
        flat = [h.flat_param for h in _handles(fsdp)]
        params = list(fsdp.parameters()) + flat
        buffers = list(fsdp.buffers())
        seen = {}
        baseline = (harness._unique_bytes(params, seen) + harness._unique_bytes(buffers, seen) +
                    harness._unique_bytes([ids], seen))
        info = {}

        def run():
            for step in range(1, STEPS + 1):
                harness._STEP[0] = step
                harness._train_step(fsdp, ids, ids, opt, o, None, info)
        import gc
        gc.collect()
        dist.barrier()
        prof = harness._profile_cpu(run)
        harness._STEP[0] = 0
        rep = harness.AllocReplay(prof, baseline)
        rep.curve, rep.end_bytes, staged = _without_gloo(rep.curve, baseline)
        _, peak_i, _, _, per = rep.summarize()
        # The step whose peak is lowest: gloo's worker thread drops its
        # references to a collective's tensors a little after the
        # collective returns, so now and then a buffer FSDP has let go is
        # freed late, after the next allocation, and that step reads up
        # to a unit higher; every step from the second is the same step.
        steps = {}
        for (sx, p), v in per.items():
            if sx >= 2 and v["peak_bytes"] > steps.get(sx, (0, None))[0]:
                steps[sx] = (v["peak_bytes"], p)
        st = min(steps, key=lambda k: steps[k][0])
        peak, ph = steps[st]
        res = {"rank": rank, "allocated_peak_bytes": peak, "peak_phase": ph, "peak_step": st,
               "step_peaks": [steps[k][0] for k in sorted(steps)],
               "baseline_bytes": baseline, "flat_param_numel": [h.flat_param._unpadded_unsharded_size.numel()
                                                                for h in _handles(fsdp)],
               "flat_padded_numel": [h.flat_param._padded_unsharded_size.numel() for h in _handles(fsdp)],
               "optimizer_state_bytes": harness._unique_bytes(harness._optimizer_tensors(opt)),
               "end_bytes": rep.end_bytes, "foreign_frees": rep.foreign_frees,
               "gloo_staging_allocs": staged,
               "phases": {p: v["peak_bytes"] for (sx, p), v in per.items() if sx == st}}
        evdir = os.environ.get("VALIDATE_FSDP_EVENTS")
        if evdir:   # debugging: step 2's allocations of 64 KiB and more
            with open(os.path.join(evdir, "rank%d.txt" % rank), "w") as f:
                for t, cur, ptr, size, node in rep.curve:
                    ph, sx = rep.phase_of(t)
                    if sx == 2 and abs(size) >= 65536:
                        f.write("%-9s %12d %+10d %s\n" % (ph, cur, size,
                                                           harness._op_chain(node, 6) if size > 0 else ""))
        if os.environ.get("VALIDATE_FSDP_TRACE"):
            top, groups, tot = rep.live_at(peak_i, top=25)
            res["trace"] = top
        with open(out % rank, "w") as f:
            json.dump(res, f)
    finally:
        dist.destroy_process_group()


def _from_gloo(node):
    p = node.parent
    while p is not None:
        if p.name.startswith("gloo:") or p.name.startswith("c10d::"):
            return True
        p = p.parent
    return False


def _without_gloo(curve, baseline):
    """The replay's curve less gloo's staging copies.  On the CPU, gloo's
    all_gather_into_tensor and reduce_scatter_tensor copy through
    temporaries the size of the collective (c10d::allgather_,
    gloo:all_gather, c10d::_reduce_scatter_base_ > clone), freed when its
    work object goes, at a moment that varies from run to run; NCCL
    writes into FSDP's own buffers, which is what vramplan models."""
    out, gone, cur, n = [], set(), baseline, 0
    for t, _, ptr, size, node in curve:
        if size > 0 and _from_gloo(node):
            gone.add(ptr)
            n += 1
            continue
        if size < 0 and ptr in gone:
            gone.discard(ptr)
            continue
        cur += size
        out.append((t, cur, ptr, size, node))
    return out, cur, n


def _handles(fsdp):
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    return [mod._handle for mod in FSDP.fsdp_modules(fsdp) if mod._handle is not None]


def measure(c, tmp):
    out = os.path.join(tmp, "rank%d.json")
    mp.spawn(_rank, args=(WORLD, _free_port(), c, out), nprocs=WORLD, join=True)
    res = []
    for rank in range(WORLD):
        with open(out % rank) as f:
            res.append(json.load(f))
    return res


def vramplan_cmd():
    return shlex.split(os.environ.get("VRAMPLAN", "./build/src/vramplan"))


def estimate(cmd, c):
    m, p, r, u, b, s = c
    argv = cmd + [model_path(m), "--device", "cpu", "--json", "--dp", str(WORLD), "--fsdp", "full",
                  "--framework", "fsdp1", "--precision", p, "--optimizer", "adamw", "--micro-batch", str(b),
                  "--seq", str(s), "--attention", "sdpa", "--dropout", "0", "--zero-grad", "none",
                  "--torch", ".".join(torch.__version__.split("+")[0].split(".")[:2])]
    if r:
        argv += ["--lora", str(r), "--lora-targets", "q,v"]
    pr = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if pr.returncode != 0:
        raise RuntimeError("exit %d: %s" % (pr.returncode, pr.stderr.strip()[-300:]))
    pg = json.loads(pr.stdout)["per_gpu"]
    return int(pg["allocated_peak_bytes"]), pg.get("peak_phase")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--filter", default="")
    ap.add_argument("--json")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--measure-only", action="store_true")
    a = ap.parse_args()
    cases = [c for c in GRID if a.filter in case_name(c)]
    if a.list:
        for c in cases:
            print(case_name(c))
        return 0
    cmd = vramplan_cmd()
    import tempfile
    errs, rows, failed = [], [], 0
    for c in cases:
        t0 = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            try:
                ranks = measure(c, tmp)
            except Exception as e:  # noqa: BLE001
                print("FAIL %s: %s" % (case_name(c), e))
                failed += 1
                continue
        est = None
        if not a.measure_only:
            try:
                est = estimate(cmd, c)
            except Exception as e:  # noqa: BLE001
                print("FAIL %s: estimate: %s" % (case_name(c), e))
                failed += 1
                continue
        for rr in ranks:
            line = "%-44s rank %d  measured %10d (%s)" % (case_name(c), rr["rank"], rr["allocated_peak_bytes"],
                                                          rr["peak_phase"])
            if est is not None:
                e = 100.0 * (est[0] - rr["allocated_peak_bytes"]) / rr["allocated_peak_bytes"]
                errs.append(e)
                line += "  estimate %10d (%s)  %+6.2f%%" % (est[0], est[1], e)
            print(line)
            rows.append({"case": case_name(c), "measured": rr, "estimate": est})
        print("    %.1f s" % (time.time() - t0))
        sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    if a.measure_only:
        return 1 if failed else 0
    if not errs:
        return 1
    mean = sum(abs(e) for e in errs) / len(errs)
    worst = max(abs(e) for e in errs)
    ok = not failed and mean <= MEAN_LIMIT_PCT and worst <= MAX_LIMIT_PCT
    print("%s: %d rank measurements, mean |error| %.2f%% (<= %.1f), worst %.2f%% (<= %.1f)%s" % (
        "PASS" if ok else "FAIL", len(errs), mean, MEAN_LIMIT_PCT, worst, MAX_LIMIT_PCT,
        ", %d failed" % failed if failed else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
