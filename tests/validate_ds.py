"""Measure DeepSpeed ZeRO-1/2/3 per rank on the CPU and compare with vramplan.

    .venv/bin/python tests/validate_ds.py      # the grid, needs $VRAMPLAN
    options: --filter SUBSTRING   --json FILE   --list   --measure-only
             --quick (make check's four cases, QUICK)
             --measured FILE (an earlier --json run's measurements,
             estimated anew: no DeepSpeed run)
    VALIDATE_DS_EVENTS=DIR: each rank's allocations of 64 KiB and more
    (step, phase, level, size, address, thread, ops) in DIR/rankN.txt
    VALIDATE_DS_TRACE=1: the largest allocations live at each rank's peak
    VALIDATE_DS_CENSUS=1: the storages alive when step 2 begins

Every case spawns WORLD ranks (torch.multiprocessing; DeepSpeed's CPU
accelerator, DS_ACCELERATOR=cpu, whose communication backend is gloo when
oneCCL is absent: deepspeed/accelerator/cpu_accelerator.py), builds
calib/harness.py's Llama-style model from tests/data/val/NAME.yaml on each,
as Hugging Face's Trainer does without zero.Init (the whole model, then
deepspeed.initialize), with torch.optim.AdamW over the trainable parameters
as the client optimizer (the Trainer's default; zero_allow_untested_optimizer)
and a DeepSpeed config of the case's stage and precision:
- fp32, or bf16 ({"bf16": {"enabled": true}}: DeepSpeed casts the whole
  module to bf16, adapters included, and keeps fp32 master partitions);
- LoRA (rank 8 on q and v, the base frozen, as PEFT does);
- ZeRO-3 with the stage3_* knobs at DeepSpeed's defaults, or with the
  values transformers' integration gives "auto" (reduce_bucket_size
  hidden^2, stage3_prefetch_bucket_size 0.9 hidden^2,
  stage3_param_persistence_threshold 10 hidden: HfTrainerDeepSpeedConfig),
  resolved here for DeepSpeed and left "auto" in the file vramplan reads.

Each rank is measured with the harness's exact allocator replay (the
profiler's CPU allocation events; DeepSpeed's own memory statistics on the
CPU are psutil's and say nothing about tensors).  The level where a step
begins is a census of every tensor storage alive then (gc: parameters and
their ZeRO partitions, flat buffers, master partitions, optimizer states,
gradient buffers, the input); the step's peak is that plus the highest the
replay rises above it within the step.  The first step creates AdamW's
states, so steps 2..STEPS are measured and the lowest reported.  gloo's own
temporaries (c10d:: and gloo: ops) are left out (validate_fsdp._without_gloo).

    $VRAMPLAN MODEL --device cpu --json --dp WORLD --deepspeed-config FILE
              --optimizer adamw ... [--lora 8 --lora-targets q,v]

is the estimate of one rank (per_gpu.allocated_peak_bytes).  The gate: mean
|error| over every rank of every case <= MEAN_LIMIT_PCT, each rank's <=
MAX_LIMIT_PCT.

Exit status: 0 pass; 1 over a bar or a case failed; 2 usage, or torch or
deepspeed cannot be imported.
"""

import argparse
import gc
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

MEAN_LIMIT_PCT = 3.0
MAX_LIMIT_PCT = 8.0

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data", "val")
sys.path.insert(0, os.path.join(ROOT, "calib"))
sys.path.insert(0, HERE)
os.environ.setdefault("DS_ACCELERATOR", "cpu")

try:
    import torch  # noqa: E402
    import torch.multiprocessing as mp  # noqa: E402
    import harness  # noqa: E402
    import validate_fsdp as vf  # noqa: E402
    import deepspeed  # noqa: E402,F401
    import measure_cache  # noqa: E402
except ImportError as e:
    print("%s; run with an interpreter that has torch and deepspeed" % e)
    sys.exit(2)

STEPS = 5


def C(stage, prec, lora=0, world=2, knobs="default", model="llama-4l-mha", b=2, s=64):
    return {"stage": stage, "prec": prec, "lora": lora, "world": world, "knobs": knobs,
            "model": model, "b": b, "s": s}


GRID = [
    C(1, "fp32"), C(1, "bf16"), C(1, "fp32", lora=8), C(1, "bf16", lora=8),
    C(2, "fp32"), C(2, "bf16"), C(2, "fp32", lora=8), C(2, "bf16", lora=8),
    C(3, "fp32"), C(3, "bf16"), C(3, "fp32", lora=8), C(3, "bf16", lora=8),
    C(1, "fp32", knobs="auto"), C(1, "bf16", lora=8, knobs="auto"),
    C(2, "fp32", knobs="auto"), C(2, "bf16", lora=8, knobs="auto"),
    C(3, "fp32", knobs="auto"), C(3, "bf16", knobs="auto"),
    C(3, "fp32", lora=8, knobs="auto"), C(3, "bf16", lora=8, knobs="auto"),
]


# make check's share of the grid (tests/validate_ds.sh, --quick): each
# stage once, full and LoRA, fp32 and bf16, default and "auto" knobs.
QUICK = [
    "zero1/llama-4l-mha/fp32/full/auto/b2s64/w2",
    "zero2/llama-4l-mha/bf16/lora8/auto/b2s64/w2",
    "zero3/llama-4l-mha/bf16/lora8/default/b2s64/w2",
    "zero3/llama-4l-mha/fp32/full/auto/b2s64/w2",
]


def case_name(c):
    return "zero%d/%s/%s/%s/%s/b%ds%d/w%d" % (c["stage"], c["model"], c["prec"],
                                           "lora%d" % c["lora"] if c["lora"] else "full", c["knobs"],
                                           c["b"], c["s"], c["world"])


def ds_config(c, hidden, resolve):
    """The case's DeepSpeed config; "auto" knobs resolved as transformers'
    integration does when resolve, else left "auto" (what vramplan reads)."""
    z = {"stage": c["stage"]}
    if c["knobs"] == "auto":
        auto = {"reduce_bucket_size": hidden * hidden}
        if c["stage"] == 3:
            auto["stage3_prefetch_bucket_size"] = int(0.9 * hidden * hidden)
            auto["stage3_param_persistence_threshold"] = 10 * hidden
        for k, v in auto.items():
            z[k] = v if resolve else "auto"
    return {"train_micro_batch_size_per_gpu": c["b"], "gradient_accumulation_steps": 1,
            "zero_optimization": z, "zero_allow_untested_optimizer": True,
            "bf16": {"enabled": c["prec"] == "bf16"}}


def _census_list(rank):
    """Debugging (VALIDATE_DS_CENSUS): the storages of 64 KiB and more."""
    seen = {}
    for t in [o for o in gc.get_objects() if isinstance(o, torch.Tensor) and o.device.type == "cpu"]:
        key, nb = harness._storage(t)
        if nb >= 65536 and key not in seen:
            seen[key] = (nb, tuple(t.shape), str(t.dtype), type(t).__name__)
    for key, v in sorted(seen.items(), key=lambda kv: -kv[1][0]):
        print("census rank %d: %10d %s %s %s" % ((rank,) + v), file=sys.stderr)


def _census(skip):
    """Bytes of every tensor storage alive now (each storage once), less
    the storages in skip."""
    seen = dict(skip)
    # DeepSpeed keeps meta-device copies of the shapes (stage_1_and_2.py,
    # round_robin_bit16_meta): no storage behind them.
    ts = [o for o in gc.get_objects() if isinstance(o, torch.Tensor) and o.device.type == "cpu"]
    return harness._unique_bytes(ts, seen)


def _rank(rank, world, port, c, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world), LOCAL_RANK=str(rank), LOCAL_SIZE=str(world))
    import deepspeed
    import deepspeed.ops
    import torch.distributed as dist
    # No DeepSpeed op is built here: its CPU backend would JIT-compile a
    # shared-memory all-reduce (comm/torch.py, build_shm_op) when the
    # probe of compatible ops says it can, a minute of g++ on a fresh
    # machine; without it the collectives are torch.distributed's (gloo),
    # whose temporaries are left out as validate_fsdp's are.  The
    # optimizer is torch's (a client optimizer), so no other op is used.
    deepspeed.ops.__compatible_ops__ = {}
    deepspeed.init_distributed(dist_backend="gloo", verbose=False)
    try:
        torch.set_num_threads(1)
        torch.manual_seed(0)
        cfg = harness.normalize_cfg(harness.load_model_cfg(vf.model_path(c["model"])))
        cfg["dropout"] = 0.0
        model = harness.build_model(cfg, "sdpa", False, "full")
        model.train()
        fam = harness.model_family(cfg)
        if c["lora"]:
            harness.apply_lora(model, fam, cfg, {"r": c["lora"], "targets": ["q", "v"],
                                                 "alpha": 2.0 * c["lora"], "dropout": 0.0, "dtype": "fp32"})
        trainable = [p for p in model.parameters() if p.requires_grad]
        opt = harness.make_optimizer("adamw", trainable, "cpu")
        eng, _, _, _ = deepspeed.initialize(model=model, optimizer=opt,
                                            config=ds_config(c, cfg["hidden"], True))
        del model, opt, trainable
        gen = torch.Generator().manual_seed(1 + rank)
        ids = torch.randint(0, cfg["vocab"], (c["b"], c["s"]), generator=gen)
        begins = {}

        def run():
            for step in range(1, STEPS + 1):
                harness._STEP[0] = step
                begins[step] = _census({})
                if step == 2 and os.environ.get("VALIDATE_DS_CENSUS"):
                    _census_list(rank)
                with harness.phase("begin"):
                    pass
                with harness.phase("fwd"):
                    loss = eng(ids, ids)
                with harness.phase("backward"):
                    eng.backward(loss)
                with harness.phase("optimizer"):
                    eng.step()
                del loss
            harness._STEP[0] = STEPS + 1
            begins[STEPS + 1] = _census({})
            with harness.phase("begin"):
                pass
        gc.collect()
        dist.barrier()
        prof = harness._profile_cpu(run)
        harness._STEP[0] = 0
        rep = harness.AllocReplay(prof, begins[1])
        rep.curve, rep.end_bytes, staged = vf._without_gloo(rep.curve, begins[1])
        _, _, _, _, per = rep.summarize()
        steps = {}
        drift = {}
        for k in range(1, STEPS + 1):
            b0 = per[(k, "begin")]["start_bytes"]
            b1 = per[(k + 1, "begin")]["start_bytes"]
            mine = [(v["peak_bytes"], p) for (sx, p), v in per.items() if sx == k]
            pk, ph = max(mine)
            steps[k] = (begins[k] + pk - b0, ph)
            # what the replay says the step left, against the census
            drift[k] = (b1 - b0) - (begins[k + 1] - begins[k])
        meas = [k for k in steps if k >= 2]
        st = min(meas, key=lambda k: steps[k][0])
        peak, ph = steps[st]
        res = {"rank": rank, "allocated_peak_bytes": peak, "peak_phase": ph, "peak_step": st,
               "step_peaks": [steps[k][0] for k in sorted(steps)],
               "step_begin_bytes": [begins[k] for k in sorted(begins)],
               "replay_drift": [drift[k] for k in sorted(drift)],
               "foreign_frees": rep.foreign_frees, "gloo_allocs": staged,
               "optimizer": type(eng.optimizer).__name__,
               "phases": {p: v["peak_bytes"] - per[(st, "begin")]["start_bytes"] + begins[st]
                          for (sx, p), v in per.items() if sx == st}}
        if os.environ.get("VALIDATE_DS_TRACE"):
            # the largest allocations live at step st's peak
            lo = [i for i, e in enumerate(rep.curve) if rep.phase_of(e[0])[1] == st]
            pi = max(lo, key=lambda i: rep.curve[i][1])
            res["trace"] = rep.live_at(pi, top=30)[0]
        evdir = os.environ.get("VALIDATE_DS_EVENTS")
        if evdir:
            with open(os.path.join(evdir, "rank%d.txt" % rank), "w") as f:
                for t, cur, ptr, size, node in rep.curve:
                    ph2, sx = rep.phase_of(t)
                    if (sx or 0) >= 1 and abs(size) >= 65536:
                        f.write("%d %-9s %12d %+10d %x %d %s\n" % (sx, ph2, cur, size, ptr, node.start_tid,
                                                           harness._op_chain(node, 6) if size > 0 else ""))
        with open(out % rank, "w") as f:
            json.dump(res, f)
    finally:
        dist.destroy_process_group()


def measure(c, tmp):
    """Every rank's measurement of a case (measure_cache: reused by the
    other passes of a CI run)."""
    return measure_cache.cached(
        "ds", [c, torch.__version__, deepspeed.__version__],
        [os.path.abspath(__file__), vf.__file__, harness.__file__,
         vf.model_path(c["model"])],
        lambda: _measure(c, tmp))


def _measure(c, tmp):
    out = os.path.join(tmp, "rank%d.json")
    mp.spawn(_rank, args=(c["world"], vf._free_port(), c, out), nprocs=c["world"], join=True)
    res = []
    for rank in range(c["world"]):
        with open(out % rank) as f:
            res.append(json.load(f))
    return res


def estimate(cmd, c, tmp):
    cfg = harness.normalize_cfg(harness.load_model_cfg(vf.model_path(c["model"])))
    path = os.path.join(tmp, "ds.json")
    with open(path, "w") as f:
        json.dump(ds_config(c, cfg["hidden"], False), f)
    argv = cmd + [vf.model_path(c["model"]), "--device", "cpu", "--json", "--dp", str(c["world"]),
                  "--deepspeed-config", path, "--optimizer", "adamw", "--optimizer-impl", "for-loop", "--seq", str(c["s"]),
                  "--attention", "sdpa", "--dropout", "0", "--zero-grad", "none",
                  "--torch", ".".join(torch.__version__.split("+")[0].split(".")[:2])]
    if c["lora"]:
        argv += ["--lora", str(c["lora"]), "--lora-targets", "q,v"]
        if c["prec"] == "bf16":
            argv += ["--lora-dtype", "bf16"]
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
    ap.add_argument("--quick", action="store_true", help="make check's cases (QUICK) only")
    ap.add_argument("--measured", help="a --json FILE of an earlier run: its measurements, estimated anew")
    a = ap.parse_args()
    earlier = {}
    if a.measured:
        with open(a.measured) as f:
            for row in json.load(f):
                earlier.setdefault(row["case"], []).append(row["measured"])
    cases = [c for c in GRID if a.filter in case_name(c) and (not a.quick or case_name(c) in QUICK)]
    if a.list:
        for c in cases:
            print(case_name(c))
        return 0
    cmd = vf.vramplan_cmd()
    errs, rows, failed = [], [], 0
    for c in cases:
        t0 = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            try:
                ranks = earlier[case_name(c)] if a.measured else measure(c, tmp)
            except Exception as e:  # noqa: BLE001
                print("FAIL %s: %s" % (case_name(c), e))
                failed += 1
                continue
            est = None
            if not a.measure_only:
                try:
                    est = estimate(cmd, c, tmp)
                except Exception as e:  # noqa: BLE001
                    print("FAIL %s: estimate: %s" % (case_name(c), e))
                    failed += 1
                    continue
        vf.report_ranks(case_name(c), ranks, est, errs, rows)
        print("    %.1f s" % (time.time() - t0))
        sys.stdout.flush()
    return vf.verdict(a, rows, errs, failed, MEAN_LIMIT_PCT, MAX_LIMIT_PCT)


if __name__ == "__main__":
    sys.exit(main())
