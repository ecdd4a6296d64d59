"""Measure FSDP1 and FSDP2 per rank on the CPU and compare with vramplan.

    .venv-test/bin/python tests/validate_fsdp.py      # the grid, needs $VRAMPLAN
    options: --filter SUBSTRING   --json FILE   --list   --measure-only
    VALIDATE_FSDP_EVENTS=DIR: each rank's allocations of 64 KiB and more
    (step, phase, level, size, address, thread, ops) in DIR/rankN.txt
    VALIDATE_FSDP_TRACE=1: the largest live tensors at each rank's peak

In make check through tests/validate_fsdp.sh (skipped without the test
venv outside CI).  Every case spawns WORLD ranks (torch.multiprocessing,
the gloo backend, one CPU thread each), builds calib/harness.py's
Llama-style model from tests/data/val/NAME.yaml on each and wraps it:
- FSDP1 (FullyShardedDataParallel, FULL_SHARD): every decoder block a
  unit, the embeddings, final norm and head the root unit,
  limit_all_gathers; use_orig_params True or False, backward_prefetch
  BACKWARD_PRE or BACKWARD_POST; LoRA adapters in their block's unit
  (transformer_auto_wrap_policy) or in units of their own (PEFT's
  fsdp_auto_wrap_policy: every leaf with a trainable weight); bf16:
  MixedPrecision with bf16 parameters, reductions and buffers, as
  accelerate sets it;
- FSDP2 (fully_shard on every block, then on the model, whose root keeps
  fully_shard's default of not resharding after forward):
  reshard_after_forward True or False for the blocks; bf16:
  MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32), torchtitan's
  default;
- FSDP2 as torchtitan wraps (--fsdp-units split; torchtitan v0.2.2
  models/llama3/infra/parallelize.py apply_fsdp, its calls replicated:
  the harness's model is not torchtitan's Transformer): fully_shard on
  the embeddings, on every block, on [norm, lm_head] with
  reshard_after_forward False, then on the model, whose forward returns
  the logits, the loss computed after it as torchtitan's train step does
  (so the root's post-forward frees the last all-gather output before
  the loss);
and measures STEPS training steps (AdamW, bf16 under autocast as vramplan's
bf16-mixed) on every rank with the harness's exact allocator replay: the
profiler's allocation events on top of what the rank holds before the
first step (its parameter shards, buffers and inputs).  LoRA (rank 8 on q
and v, the base frozen) under bf16: the base in bf16 as Hugging Face loads
it; FSDP1's block-wrapped flat parameter needs one dtype, so there the
adapters are bf16 too (--lora-dtype bf16).

    $VRAMPLAN MODEL --device cpu --json --dp WORLD --fsdp full
              --framework fsdp1|fsdp2 --precision P --optimizer adamw
              --fsdp-prefetch ... --fsdp-orig-params ... --fsdp-lora-wrap ...
              | --reshard-after-forward ...

is the estimate for one rank (per_gpu.allocated_peak_bytes).  The gate:
the mean |error| over every rank of every case <= MEAN_LIMIT_PCT, each
rank's <= MAX_LIMIT_PCT (1.2% and 4.0% on PyTorch 2.13 when written;
0.90% and 3.99% with the split cases and FSDP2's weight gradient
counted once).

Repeatability (the measurement must not depend on the machine's load):
- gloo's work object keeps the tensors a collective was given, and its
  worker thread drops them a little after the collective returned, so a
  buffer FSDP has let go was freed late, by that thread, where the
  profiler does not record frees; so FSDP's all-gather and reduce-scatter
  (dist.all_gather_single, dist.reduce_scatter_single) go through two
  staging buffers made before the step (_stage_collectives): gloo holds
  only views of them and FSDP's tensors are copied in and out in place,
  which is what NCCL does to FSDP's buffers.  gloo's own temporaries
  (c10d:: and gloo: ops) are left out of the replay (_without_gloo).
- the profiler still misses an odd free (a block never freed in the
  record): that lifts everything after it.  So each step from the
  second is taken relative to where it began (the end of the previous
  zero_grad), on top of what must be live then (parameters, buffers,
  optimizer states and FSDP1's sharded flat gradients, which zero_grad
  leaves to the next forward), and the lowest step is reported; a missed
  free inside every step would show as rank-to-rank differences.

What the event logs showed (PyTorch 2.13, llama-4l-mha, b2 s64) and
src/mem.c models (fsdp_now):
- the root unit is gathered from the first forward to the end of
  backward, and its gradients stay whole until its post-backward;
- FSDP1 gathers one block in forward; FSDP2 also keeps that block's
  all-gather output until the next block's copy-out;
- backward: the block, its gradients as they are made, the next block
  when prefetched (FSDP1 BACKWARD_PRE from the pre-backward hook, FSDP2
  always), FSDP2's last reduce-scatter input (trainable parameters only)
  until the next block's; FSDP1's cat of the flat gradient at a block's
  end, beside the block's own gradients;
- FSDP1, LoRA in the block's unit, use_orig_params: the whole flat
  parameter requires grad, so the frozen weights' gradients are made as
  in full training (inputs saved for dW; 14 to 29% above the old
  estimate); with PEFT's wrap the blocks are frozen and make none;
- FSDP mixed precision: the gathered parameters are bf16, so dW is born
  bf16 (no autocast copy, no fp32 cast) and cast when reduced.

Exit status: 0 pass; 1 over a bar or a case failed; 2 usage, or torch
cannot be imported.
"""

import argparse
import functools
import gc
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
sys.path.insert(0, HERE)

import measure_cache  # noqa: E402

try:
    import torch  # noqa: E402
    import torch.distributed as dist  # noqa: E402
    import torch.multiprocessing as mp  # noqa: E402
    import harness  # noqa: E402
except ImportError as e:
    print("%s; run with the interpreter of the test venv (make venv)" % e)
    sys.exit(2)

STEPS = 3

# One case: the framework and its settings.  fsdp1: use_orig_params
# (orig), backward_prefetch (pre, post, none) and where LoRA adapters go
# (wrap: block, peft); fsdp2: reshard_after_forward (reshard True, keep
# False); recompute: every block checkpointed (harness.checkpoint).  LoRA under bf16-mixed: the base in bf16, as
# Hugging Face loads it; FSDP1's flat parameter needs one dtype, so there
# the adapters are bf16 too (--lora-dtype bf16).
def C(fw, prec, lora=0, world=2, orig=True, prefetch="pre", reshard=True, wrap="block", model="llama-4l-mha",
      b=2, s=64, recompute=False, units="root"):
    c = {"fw": fw, "model": model, "prec": prec, "lora": lora, "world": world, "orig": orig,
         "prefetch": prefetch, "reshard": reshard, "wrap": wrap, "b": b, "s": s, "recompute": recompute}
    if units != "root":   # FSDP2's unit layout (--fsdp-units); the key
        c["units"] = units   # only when not root: the cache keys stay
    return c


GRID = [
    C("fsdp1", "fp32"),
    C("fsdp1", "fp32", orig=False),
    C("fsdp1", "bf16-mixed"),
    C("fsdp1", "fp32", lora=8),
    C("fsdp1", "bf16-mixed", lora=8),
    C("fsdp1", "fp32", lora=8, wrap="peft"),
    C("fsdp1", "bf16-mixed", lora=8, wrap="peft", recompute=True),
    C("fsdp1", "fp32", prefetch="post"),
    C("fsdp1", "fp32", world=4),
    C("fsdp1", "bf16-mixed", lora=8, world=4),
    C("fsdp2", "fp32"),
    C("fsdp2", "bf16-mixed"),
    C("fsdp2", "fp32", lora=8),
    C("fsdp2", "bf16-mixed", lora=8),
    C("fsdp2", "bf16-mixed", reshard=False),
    C("fsdp2", "fp32", world=4),
    C("fsdp2", "bf16-mixed", lora=8, world=4),
    # torchtitan's layout (--fsdp-units split): the embeddings and
    # [norm, head] units of their own
    C("fsdp2", "fp32", units="split"),
    C("fsdp2", "bf16-mixed", units="split"),
    C("fsdp2", "bf16-mixed", reshard=False, units="split"),
    C("fsdp2", "bf16-mixed", world=4, units="split"),
    C("fsdp2", "bf16-mixed", lora=8, units="split"),
]


def case_name(c):
    if c["fw"] == "fsdp1":
        how = "%s/%s" % ("orig" if c["orig"] else "flat", c["prefetch"])
        if c["lora"]:
            how += "/" + c["wrap"]
    else:
        how = "reshard" if c["reshard"] else "keep"
        if c.get("units", "root") != "root":
            how += "/" + c["units"]
    return "%s/%s/%s/%s/%s/b%ds%d/w%d%s" % (c["fw"], c["model"], c["prec"],
                                            "lora%d" % c["lora"] if c["lora"] else "full", how,
                                            c["b"], c["s"], c["world"], "/ckpt" if c["recompute"] else "")


def model_path(m):
    return os.path.join(DATA, m + ".yaml")


def _free_port():
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


class _Done:
    def wait(self, *a, **k):
        return True

    def is_completed(self):
        return True


def _stage_collectives(nbytes):
    """Run FSDP's collectives through two staging buffers made before the
    step.  gloo's work object holds the tensors a collective was given and
    its worker thread drops them a little after the collective returned,
    so a buffer FSDP has let go would be freed late, at a moment that
    depends on the machine's load.  Here gloo only ever sees views of the
    staging buffers (their storage lives on, so nothing is freed late) and
    FSDP's own tensors are copied in and out in place: as NCCL does, the
    collective writes into FSDP's buffers and holds nothing."""
    sin = torch.empty(nbytes, dtype=torch.uint8)
    sout = torch.empty(nbytes, dtype=torch.uint8)
    ag, rs = dist.all_gather_single, dist.reduce_scatter_single

    def view(buf, t):
        n = t.numel() * t.element_size()
        if n > buf.numel():
            raise RuntimeError("staging buffer too small: %d > %d" % (n, buf.numel()))
        return buf[:n].view(t.dtype).view(t.shape)

    def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
        i, o = view(sin, input_tensor), view(sout, output_tensor)
        i.copy_(input_tensor)
        ag(o, i, group=group, async_op=False)
        output_tensor.copy_(o)
        return _Done() if async_op else None

    def reduce_scatter_single(output, input, op=dist.ReduceOp.SUM, group=None, async_op=False):
        i, o = view(sin, input), view(sout, output)
        i.copy_(input)
        rs(o, i, op=op, group=group, async_op=False)
        output.copy_(o)
        return _Done() if async_op else None

    dist.all_gather_single = all_gather_single
    dist.reduce_scatter_single = reduce_scatter_single
    return sin, sout


def _local(t):
    return t._local_tensor if hasattr(t, "_local_tensor") else t


def _wrap_fsdp1(model, c, mpol_dtype):
    from torch.distributed.fsdp import (BackwardPrefetch, FullyShardedDataParallel as FSDP, MixedPrecision,
                                        ShardingStrategy)
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
    mpol = None
    if mpol_dtype is not None:
        mpol = MixedPrecision(param_dtype=mpol_dtype, reduce_dtype=mpol_dtype, buffer_dtype=mpol_dtype)
    pf = {"pre": BackwardPrefetch.BACKWARD_PRE, "post": BackwardPrefetch.BACKWARD_POST,
          "none": None}[c["prefetch"]]
    from torch.distributed.fsdp.wrap import _or_policy, lambda_auto_wrap_policy
    block = type(model.layers[0])
    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={block})
    if c["lora"] and c["wrap"] == "peft":
        # peft.utils.other.fsdp_auto_wrap_policy: every leaf module with
        # a trainable weight (the adapters' Linears) is a unit of its own
        def trainable_leaf(m):
            return (len(list(m.named_children())) == 0 and getattr(m, "weight", None) is not None and
                    m.weight.requires_grad)
        policy = functools.partial(_or_policy, policies=[
            functools.partial(lambda_auto_wrap_policy, lambda_fn=trainable_leaf), policy])
    fsdp = FSDP(model, auto_wrap_policy=policy,
                sharding_strategy=ShardingStrategy.FULL_SHARD, use_orig_params=c["orig"],
                mixed_precision=mpol, backward_prefetch=pf,
                limit_all_gathers=True, device_id=torch.device("cpu"))
    handles = [mod._handle for mod in FSDP.fsdp_modules(fsdp) if mod._handle is not None]
    held = list(fsdp.parameters()) + [h.flat_param for h in handles]
    return fsdp, held


def _wrap_fsdp2(model, c, mpol_dtype, world):
    from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cpu", (world,))
    mp = MixedPrecisionPolicy()
    if mpol_dtype is not None:
        # torchtitan's default: bf16 parameters, fp32 reductions
        mp = MixedPrecisionPolicy(param_dtype=mpol_dtype, reduce_dtype=torch.float32)
    split = c.get("units", "root") == "split"
    if split:
        # torchtitan v0.2.2, torchtitan/models/llama3/infra/parallelize.py
        # apply_fsdp (lines 333-357), its reshard_after_forward_policy
        # "default" without PP: tok_embeddings a unit of its own ...
        fully_shard(model.embed_tokens, mesh=mesh, reshard_after_forward=c["reshard"], mp_policy=mp)
    for layer in model.layers:
        fully_shard(layer, mesh=mesh, reshard_after_forward=c["reshard"], mp_policy=mp)
    if split:
        # ... and [norm, output] one, not resharded after forward unless
        # the policy is "always" (FSDP would prefetch it at once in
        # backward); disable_fsdp_gradient_division changes no memory.
        fully_shard([model.norm, model.lm_head], mesh=mesh, reshard_after_forward=False, mp_policy=mp)
    # The root keeps fully_shard's default: not resharded after forward
    # (under torchtitan's layout it has no parameters of its own).
    fully_shard(model, mesh=mesh, mp_policy=mp)
    held = []
    for mod in model.modules():
        st = getattr(mod, "_get_fsdp_state", None)
        if st is None:
            continue
        pg = st()._fsdp_param_group
        if pg is None:
            continue
        for fp in pg.fsdp_params:
            held.append(fp._sharded_param_data)
            held.append(_local(fp.sharded_param))
    return model, held


def _rank(rank, world, port, c, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        torch.set_num_threads(1)
        torch.manual_seed(0)
        prec, r = c["prec"], c["lora"]
        cfg = harness.normalize_cfg(harness.load_model_cfg(model_path(c["model"])))
        cfg["dropout"] = 0.0
        model = harness.build_model(cfg, "sdpa", 1 if c["recompute"] else False, "full")
        model.train()
        fam = harness.model_family(cfg)
        bf = prec == "bf16-mixed"
        if r:
            if bf:   # the base as Hugging Face loads it for bf16 training
                model.to(torch.bfloat16)
            ld = "bf16" if bf and c["fw"] == "fsdp1" else "fp32"
            lo = {"r": r, "targets": ["q", "v"], "alpha": 2.0 * r, "dropout": 0.0, "dtype": ld}
            harness.apply_lora(model, fam, cfg, lo)
        nbytes = 2 * 4 * sum(p.numel() for p in model.parameters()) + (1 << 20)
        staging = _stage_collectives(nbytes)
        mdt = torch.bfloat16 if bf else None
        split = c.get("units", "root") == "split"
        if split:   # set before fully_shard, whose hooks wrap the call
            assert cfg["position"] == "rope", "split cases: a rope model"
            model.forward = _titan_forward(model)
        if c["fw"] == "fsdp1":
            fsdp, held = _wrap_fsdp1(model, c, mdt)
        else:
            fsdp, held = _wrap_fsdp2(model, c, mdt, world)
        gen = torch.Generator().manual_seed(1 + rank)
        ids = torch.randint(0, cfg["vocab"], (c["b"], c["s"]), generator=gen)
        trainable = [p for p in fsdp.parameters() if p.requires_grad]
        opt = harness.make_optimizer("adamw", trainable, "cpu")
        o = {"precision": prec, "device": "cpu"}
        buffers = [_local(b) for b in fsdp.buffers()]
        seen = {}
        baseline = (harness._unique_bytes([_local(p) for p in held], seen) +
                    harness._unique_bytes(buffers, seen) + harness._unique_bytes([ids], seen))
        info = {}

        def run():
            for step in range(1, STEPS + 1):
                harness._STEP[0] = step
                _train_step(fsdp, ids, opt, o, split)
        gc.collect()
        dist.barrier()
        prof = harness._profile_cpu(run)
        harness._STEP[0] = 0
        rep = harness.AllocReplay(prof, baseline)
        rep.curve, rep.end_bytes, staged = _without_gloo(rep.curve, baseline)
        _, peak_i, _, _, per = rep.summarize()
        # Each step from the second on is the same step.  Its peak is
        # taken relative to the level where the step began (the end of the
        # previous zero_grad, before the root's all-gather), on top of
        # what must be live then: the parameters and buffers (baseline),
        # the optimizer states and, under FSDP1, the sharded flat
        # gradients, which zero_grad does not free (the original
        # parameters' .grad are views of them; the next forward's root
        # pre-forward frees them).  Now and then the profiler misses a
        # free (a block that is never freed in the record): that lifts
        # the rest of the record, so the lowest of the steps is reported.
        states = harness._unique_bytes([_local(t) for t in harness._optimizer_tensors(opt)])
        kept = harness._unique_bytes(_kept_after_zero_grad(fsdp, c), dict(seen))
        expect = baseline + states + kept
        steps = {}
        for k in range(2, STEPS + 1):
            zg = per.get((k - 1, "zero_grad"))
            mine = [(v["peak_bytes"], p) for (sx, p), v in per.items() if sx == k]
            if zg is None or not mine:
                continue
            pk, ph = max(mine)
            steps[k] = (expect + pk - zg["end_bytes"], ph, zg["end_bytes"] - expect)
        st = min(steps, key=lambda k: steps[k][0])
        peak, ph, _ = steps[st]
        res = {"rank": rank, "allocated_peak_bytes": peak, "peak_phase": ph, "peak_step": st,
               "step_peaks": [steps[k][0] for k in sorted(steps)],
               "step_start_excess": [steps[k][2] for k in sorted(steps)],
               "baseline_bytes": baseline,
               "optimizer_state_bytes": states,
               "end_bytes": rep.end_bytes, "foreign_frees": rep.foreign_frees,
               "gloo_staging_allocs": staged,
               "phases": {p: v["peak_bytes"] for (sx, p), v in per.items() if sx == st}}
        evdir = os.environ.get("VALIDATE_FSDP_EVENTS")
        if evdir:   # debugging: step 2's allocations of 64 KiB and more
            with open(os.path.join(evdir, "rank%d.txt" % rank), "w") as f:
                for t, cur, ptr, size, node in rep.curve:
                    ph, sx = rep.phase_of(t)
                    if (sx or 0) >= 1 and abs(size) >= 65536:
                        f.write("%d %-9s %12d %+10d %x %d %s\n" % (sx, ph, cur, size, ptr, node.start_tid,
                                                           harness._op_chain(node, 6) if size > 0 else ""))
        if os.environ.get("VALIDATE_FSDP_TRACE"):
            top, groups, tot = rep.live_at(peak_i, top=25)
            res["trace"] = top
        with open(out % rank, "w") as f:
            json.dump(res, f)
        del staging
    finally:
        dist.destroy_process_group()


def _kept_after_zero_grad(fsdp, c):
    if c["fw"] != "fsdp1":
        return []
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    return [m._handle.flat_param.grad for m in FSDP.fsdp_modules(fsdp) if m._handle is not None]


def _titan_forward(model):
    """torchtitan's Transformer.forward: the model returns the logits and
    the train step computes the loss after it (torchtitan v0.2.2
    train.py forward_backward_step: pred = model_parts[0](inputs); loss =
    self.loss_fn(pred, labels)), so the root's post-forward, which frees
    the last all-gather output (FSDPState._post_forward), runs before the
    loss.  harness.LlamaForCausalLM.forward up to the logits (rope, no
    offload, the full loss)."""
    def forward(input_ids):
        with harness.phase("forward"):
            h = model.embed_tokens(input_ids)
            cache_position = torch.arange(0, h.shape[1], device=h.device)
            position_ids = cache_position.unsqueeze(0)
            mask = model._update_causal_mask(h, cache_position)
            h = harness._run_layers(model.layers, model.recompute, h, mask, position_ids)
            h = model.norm(h)
            del mask, position_ids, cache_position
            return model.lm_head(h)
    return forward


def _titan_loss(model, logits, labels):
    """The loss of harness.LlamaForCausalLM.forward, after the model."""
    with harness.phase("loss"):
        logits = logits.float()
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        shift_logits = shift_logits.view(-1, model.c["vocab"])
        shift_labels = shift_labels.view(-1)
        loss = model.loss_fn(shift_logits, shift_labels)
        del logits, shift_logits, shift_labels
    return loss


def _train_step(model, ids, opt, o, split=False):
    """harness._train_step without its gradient census (DTensor gradients
    have no storage of their own); split: the loss after the model's
    forward, as torchtitan computes it."""
    with harness._autocast_ctx(o["precision"], o["device"]):
        if split:
            loss = _titan_loss(model, model(ids), ids)
        else:
            loss = model(ids, ids)
    with harness.phase("backward"):
        loss.backward()
    with harness.phase("optimizer"):
        opt.step()
    with harness.phase("zero_grad"):
        opt.zero_grad(set_to_none=True)
        del loss


def _from_gloo(node):
    p = node.parent
    while p is not None:
        if p.name.startswith("gloo:") or p.name.startswith("c10d::"):
            return True
        p = p.parent
    return False


def _without_gloo(curve, baseline):
    """The replay's curve less gloo's own temporaries.  On the CPU, gloo's
    all-gather and reduce-scatter copy through temporaries the size of the
    collective (c10d::allgather_, gloo:all_gather, c10d::_reduce_scatter_base_
    > clone), freed when its work object goes; NCCL writes into FSDP's own
    buffers, which is what vramplan models."""
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


def measure(c, tmp):
    """Every rank's measurement of a case (measure_cache: reused by the
    other passes of a CI run)."""
    return measure_cache.cached(
        "fsdp", [c, torch.__version__],
        [os.path.abspath(__file__), harness.__file__, model_path(c["model"])],
        lambda: _measure(c, tmp))


def _measure(c, tmp):
    out = os.path.join(tmp, "rank%d.json")
    mp.spawn(_rank, args=(c["world"], _free_port(), c, out), nprocs=c["world"], join=True)
    res = []
    for rank in range(c["world"]):
        with open(out % rank) as f:
            res.append(json.load(f))
    return res


def vramplan_cmd():
    return shlex.split(os.environ.get("VRAMPLAN", "./build/src/vramplan"))


def estimate(cmd, c):
    argv = cmd + [model_path(c["model"]), "--device", "cpu", "--json", "--dp", str(c["world"]),
                  "--fsdp", "full", "--framework", c["fw"], "--precision", c["prec"], "--optimizer", "adamw",
                  "--micro-batch", str(c["b"]), "--seq", str(c["s"]), "--attention", "sdpa", "--dropout", "0",
                  "--zero-grad", "none", "--torch", ".".join(torch.__version__.split("+")[0].split(".")[:2])]
    if c["recompute"]:
        argv += ["--recompute", "full"]
    if c["fw"] == "fsdp1":
        argv += ["--fsdp-prefetch", c["prefetch"], "--fsdp-orig-params", "yes" if c["orig"] else "no",
                 "--fsdp-lora-wrap", c["wrap"]]
    else:
        argv += ["--reshard-after-forward", "yes" if c["reshard"] else "no"]
        if c.get("units", "root") != "root":
            argv += ["--fsdp-units", c["units"]]
    if c["lora"]:
        argv += ["--lora", str(c["lora"]), "--lora-targets", "q,v"]
        if c["prec"] == "bf16-mixed" and c["fw"] == "fsdp1":
            argv += ["--lora-dtype", "bf16"]
    pr = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if pr.returncode != 0:
        raise RuntimeError("exit %d: %s" % (pr.returncode, pr.stderr.strip()[-300:]))
    pg = json.loads(pr.stdout)["per_gpu"]
    return int(pg["allocated_peak_bytes"]), pg.get("peak_phase")


def report_ranks(name, ranks, est, errs, rows):
    """A line per rank of a case: its measured peak and phase and, when
    estimated, the estimate and its error (appended to errs); the rows of
    the --json file."""
    for rr in ranks:
        line = "%-44s rank %d  measured %10d (%s)" % (name, rr["rank"], rr["allocated_peak_bytes"],
                                                      rr["peak_phase"])
        if est is not None:
            e = 100.0 * (est[0] - rr["allocated_peak_bytes"]) / rr["allocated_peak_bytes"]
            errs.append(e)
            line += "  estimate %10d (%s)  %+6.2f%%" % (est[0], est[1], e)
        print(line)
        rows.append({"case": name, "measured": rr, "estimate": est})


def verdict(a, rows, errs, failed, mean_limit=MEAN_LIMIT_PCT, max_limit=MAX_LIMIT_PCT):
    """Write --json, print the summary line; the exit status."""
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    if a.measure_only:
        return 1 if failed else 0
    if not errs:
        return 1
    mean = sum(abs(e) for e in errs) / len(errs)
    worst = max(abs(e) for e in errs)
    ok = not failed and mean <= mean_limit and worst <= max_limit
    print("%s: %d rank measurements, mean |error| %.2f%% (<= %.1f), worst %.2f%% (<= %.1f)%s" % (
        "PASS" if ok else "FAIL", len(errs), mean, mean_limit, worst, max_limit,
        ", %d failed" % failed if failed else ""))
    return 0 if ok else 1


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
        report_ranks(case_name(c), ranks, est, errs, rows)
        print("    %.1f s" % (time.time() - t0))
        sys.stdout.flush()
    return verdict(a, rows, errs, failed)


if __name__ == "__main__":
    sys.exit(main())
