#!/usr/bin/python3
"""Published GPU training-memory measurements against vramplan.

Reads tests/data/published_gpu/published-gpu-peaks.yaml (54 records from
four public sources, each with its citation and a verbatim quote; see the
README and the notes beside it), builds for every record the vramplan
command line that expresses its settings, runs the estimate with
--no-search (the planner must not change the stated layout) and compares
the level that matches what the source read:

  max_memory_allocated, peak active bytes  -> per_gpu.allocated_peak_bytes
  max_memory_reserved                      -> per_gpu.reserved_peak_bytes
  nvidia-smi "used"                        -> per_gpu.device_peak_bytes

Units as the notes give them: HF "MB" = MiB, torchtune April 2024 "GB" =
1e9 bytes, the Llama 3.2 table GiB, fms bytes.

Per record it prints the measured and estimated figures (GiB), the error
(estimate - measured) / measured and the verdict; then per source family
the count, the mean |error| and how many estimates are low, for the
single-GPU records (the gate) and for the whole set (multi-GPU framework
records are scored too, not gated).  Records vramplan cannot express are
listed with what is missing; calibration records are reported apart.

It fails when
  - the mean |error| over the scored single-GPU records exceeds GATE_PCT,
  - a scored measurement lies outside the band vramplan states for its
    level (JSON per_gpu.uncertainty; src/band.c is made from these runs);
  - a verdict is wrong (a run that ran must fit, an OOM must not) and the
    record is not in KNOWN_WRONG,
  - vramplan fails, or a record's settings match no rule below.
A reserved or device reading at 90% of the card or more is a fit check,
not a figure: the allocator filled the card (notes), so it is left out of
the means and only its verdict is checked.

Environment: VRAMPLAN (binary), VRAMPLAN_DATA (models), TOP_SRCDIR.
"""
import json
import math
import os
import re
import subprocess
import sys

import yaml

# The mean |error| over the scored single-GPU records was 12.79% when this
# test was written (21 records; HF BERT 16.2%, fms 12.8%, torchtune Llama 2
# 7.4%, torchtune Llama 3.2 1.7%), 9.35% once --cuda gave the BERT runs'
# CUDA 11.2 its eager context (BERT 7.2%), 6.40% once --kbit-prep upcast
# gave fms's baseline QLoRA its fp32 residual stream and PEFT's sum was
# cast back to the base layer's dtype (fms 5.7%), 4.93% once the BERT
# runs' PyTorch 1.x kept its zeroed gradients between steps (BERT 3.6%),
# 4.20% once --transformers gave the fms runs 4.48.1's loss, 3.31% once
# transformers 4.x's experts ran one at a time (fms 2.3%), 3.19% once
# --optimizer-in-backward made torchtune's low-memory full fine-tune
# expressible (24 records, -0.6% there), 3.07% once --compile
# made torchtune's compiled Llama 3.2 row expressible (25 records, -0.2%
# there), 2.86% once --compile-loss with --loss chunked-output made
# torchtune's compiled chunked-loss rows 03 and 05 expressible (27
# records, -0.0% and +0.3%), 2.82% once --load torchtune-0.1 replayed
# torchtune 0.1's model construction, which made the QLoRA 1x4090 reading
# (the load's reserved level) a scored record (28 records, -1.7% there),
# 2.69% once torchtune's activation offloading under checkpointing (the
# checkpoints' inputs to the host, its stash of five) made rows 06 and 08
# expressible (+0.3%, +1.5%).  The gate sits about half a point above it.
# It must only go down: lower it when the estimate improves, never raise
# it to make a change pass.
GATE_PCT = 3.22

# Verdicts that are wrong today, with the reason.  A new wrong verdict
# fails the test; one of these that becomes right is reported so that it
# can be removed from here.
KNOWN_WRONG = {
}

# Readings that bound the step from above but do not measure it: like a
# full card, checked for the verdict only, with the reason.  (The QLoRA
# 1x4090 reading was one until --load: it is the reserved level torchtune
# 0.1's construction left, 9.13 GB after init in its QLoRA tutorial.)
FIT_CHECK_ONLY = {
}

# Large misses of scored records, printed beside them: the cause where it
# is known, else what has been ruled out.
#
# Model loading does not explain the multi-GPU misses (read at the
# records' versions; they run with --load none and stay as they are):
# - torchtune's distributed recipes at fef3ed1 (PyTorch 2.2.2) build the
#   model on rank 0's CPU and on the meta device elsewhere, and FSDP1
#   (sync_module_states, device_id) moves, broadcasts (250 MB buckets),
#   flattens and shards it unit by unit; train() then calls
#   utils.cleanup_before_training() (gc.collect, torch.cuda.empty_cache,
#   reset_peak_memory_stats) before the first batch, so the logged
#   max_memory_reserved keeps of the load only the segments still holding
#   shards.  That sequence fed to src/alloc.c's allocator (each unit's
#   parameters one block each, the broadcast buckets two at a time, the
#   flat cat, the shard clone, then the frees) leaves 6.33 GiB reserved
#   after empty_cache for 6.31 GiB of shards at 2 ranks, 3.53 for 3.14 at
#   4 (peaks during the load 8.23 and 4.89): 0.02 and 0.39 GiB above the
#   shards, against misses of 6.3 and 4.9 GiB.  Measured on the CPU (2
#   gloo ranks, PyTorch 2.13, whose reshard code is 2.2.2's): with the
#   LoRA adapters their own units (torchtune's lora_fsdp_wrap_policy) the
#   frozen units are resharded by the reshard-only hook in every step's
#   backward, at most three units (root, current, prefetched) unsharded.
# - fms-acceleration's figure is the Trainer's memory tracker, whose
#   start() in Trainer.__init__ resets the peak (transformers
#   trainer_utils.TrainerMemoryTracker), so from_pretrained's peak (bnb
#   quantizing) is outside it; the FSDP wrap inside train() is in it but
#   moves one unit at a time (fms's accelerate.yaml sets
#   fsdp_cpu_ram_efficient_loading and fsdp_sync_module_states, so rank 0
#   holds the model on the CPU until the wrap).  The Mixtral 2-GPU runs
#   peak at 19.68 GiB, below their whole quantized model (22.97 GiB
#   allocated at the end of the one-GPU run), so no rank held a whole
#   model on the GPU before the wrap, and the running sum fms takes over
#   the tracker's stages starts from what was allocated when the Trainer
#   was made.  (On two GPUs the baseline and the accelerated-peft-bnb
#   plugin report the same peak to the byte, for Mistral as for Llama 2
#   70B: under FSDP both load alike, so that says nothing more.)
MISS_NOTES = {
    "tt-llama2-7b-lora-2x4090-fsdp":
        "more than vramplan's estimate of the same plan on one GPU with no "
        "sharding (18.09 GiB reserved): the rank held at least a whole "
        "frozen base at some point, not at init (train() empties the cache "
        "first) nor by frozen units left unsharded (measured on CPU); "
        "cause unknown",
    "tt-llama2-7b-full-4x4090-fsdp":
        "not the load: train() empties the cache and resets the peaks, and "
        "the FSDP1 init leaves 0.39 GiB above the shards; cause unknown",
    "fms-llama2-70b-qlora-2gpu-bs2":
        "not the load: the Trainer's tracker resets the peak after "
        "from_pretrained, and the FSDP wrap moves rank 0's CPU model one "
        "unit at a time; cause unknown",
    "fms-llama2-70b-qlora-accel-2gpu-bs2":
        "not the load: as the baseline row (the same loading under FSDP, "
        "the same peak to the byte); cause unknown",
}

# A reading at or above this share of the card checks the verdict only.
FULL_CARD = 0.90

top = os.environ.get("TOP_SRCDIR", ".")
exe = os.environ.get("VRAMPLAN", os.path.join(top, "src", "vramplan"))
here = os.path.join(top, "tests", "data", "published_gpu")
records = yaml.safe_load(open(os.path.join(here, "published-gpu-peaks.yaml")))

# What each source read (notes: "What each metric includes"), the JSON key
# of that level and a word its metric text must contain.
METRIC = {
    "hf-transformers-docs-bert-large":
        ("device", "device_peak_bytes", "nvidia-smi"),
    "fms-acceleration-a100-80gb":
        ("allocated", "allocated_peak_bytes", "max_memory_allocated"),
    "torchtune-llama2-7b-apr2024":
        ("reserved", "reserved_peak_bytes", "max_memory_reserved"),
    "torchtune-readme-llama3.2-3b-flags":
        ("allocated", "allocated_peak_bytes", "active_bytes"),
}
UNIT = {"measured_bytes": 1, "measured_mib": 2**20, "measured_gib": 2**30,
        "measured_gb": 1e9}

MODEL = {
    "bert-large-uncased": "bert-large",
    "Llama-2-7B": "llama-2-7b",
    "Llama-2-70B": "llama-2-70b",
    "Mistral-7B-v0.1": "mistral-7b",
    "Mixtral-8x7B": "mixtral-8x7b",
    "Llama-3.2-3B": os.path.join(here, "models", "llama-3.2-3b.yaml"),
}
# The training library of each source (--trainer): the BERT runs and fms
# use the Hugging Face Trainer (fms with PEFT), torchtune its recipes.
TRAINER = {
    "hf-transformers-docs-bert-large": "hf",
    "fms-acceleration-a100-80gb": "hf",
    "torchtune-llama2-7b-apr2024": "torchtune",
    "torchtune-readme-llama3.2-3b-flags": "torchtune",
}
# PyTorch of a source whose records do not state it (see CAVEAT).
TORCH_ASSUMED = {"hf-transformers-docs-bert-large": "1.10"}
# (a phrase of the record's gpu text, card id)
CARD = [("V100-SXM2 16GB", "V100-16G-SXM2"),
        ("A100-SXM4-80GB", "A100-80G-SXM"),
        ("NVIDIA A100 (README says 'A100'; 80GB", "A100-80G-SXM"),
        ("RTX 4090 (24GB)", "RTX4090-24G"),
        ("not stated", "RTX4090-24G")]   # see CAVEAT
# (the start of the record's precision text, --precision)
PRECISION = [("fp32", "fp32"), ("fp16 AMP", "fp16-mixed"),
             ("bf16 AMP", "bf16-mixed"), ("pure bf16", "bf16")]
# (the start of the optimizer text, --optimizer, --optimizer-impl or None).
# transformers' own AdamW (adamw_hf) and Adafactor step one parameter at a
# time in Python; Trainer's adamw_torch and torchtune's torch.optim.AdamW
# take PyTorch's default (foreach on CUDA) unless fused=True is stated.
OPTIMIZER = [("AdamW (Trainer default in early 2022, optim='adamw_hf'",
              "adamw", "for-loop"),
             ("Adafactor", "adafactor", "for-loop"),
             ("bitsandbytes bnb.optim.Adam8bit", "adamw-8bit", None),
             ("8-bit AdamW", "adamw-8bit", None),
             ("bitsandbytes.optim.PagedAdamW (32-bit, paged)", "paged-adamw",
              None),
             ("torch.optim.AdamW (fused=True)", "adamw", "fused"),
             ("torch.optim.AdamW", "adamw", None),
             ("AdamW (torch, Trainer default adamw_torch)", "adamw", None)]
ATTENTION = [("eager", "eager"), ("flash_attention_2", "flash"),
             ("scaled_dot_product_attention", "sdpa")]
LORA_TARGET = {"q_proj": ["q"], "k_proj": ["k"], "v_proj": ["v"],
               "o_proj": ["o"], "output_proj": ["o"],
               "c_attn (absent in Llama)": []}
# What vramplan has no way to say, by a phrase of other_optimizations.
MISSING = [
]
# Records whose peak depends on what they do not state.
UNSTATED = {
    "tt-llama32-3b-07-adamw8bit": "the 8-bit AdamW is not stated (the "
    "record: torchao's AdamW8bit or bitsandbytes' AdamW8bit or "
    "PagedAdamW8bit, the README config's default, whose paged states are "
    "outside PyTorch's allocator): the row's drop from row 06 (4.2 GiB of "
    "bf16 states) depends on it",
    "tt-llama32-3b-04-ac": "the AdamW implementation is not stated (the "
    "record assumes torch.optim.AdamW; the README's config defaults to "
    "bitsandbytes' PagedAdamW8bit) and makes this row's peak, the step's: "
    "foreach, CUDA's default, holds a copy of the second moments (6 GiB), "
    "fused none",
}
# Settings that are expressed but differ from the run; printed beside the
# figure.
CAVEAT = {
    "hf-transformers-docs-bert-large": "the run had a 2-label "
    "classification head; the library's bert-large has the masked-LM head "
    "(30522-wide logits); estimated with --cuda 11.2, whose eager module "
    "loading gives the 1343 MiB context the calibration record measured; "
    "PyTorch not stated: transformers 4.16 (January 2022) predates "
    "PyTorch 2.0 (March 2023), so --torch 1.10, the release of the time, "
    "whose zero_grad() keeps the gradients between steps",
    "torchtune-llama2-7b-apr2024": "alpaca rows padded to each batch's "
    "longest, compared at the 512-token maximum (expect high); the "
    "tutorial rows name no card: RTX4090-24G assumed, the card the README "
    "ran the same config on",
}


def pick(table, text, what, rid, start=False):
    """The first row of table whose phrase text contains (starts with)."""
    hits = [row[1:] for row in table
            if (text.startswith(row[0]) if start else row[0] in text)]
    if not hits:
        sys.exit("%s: no rule for the %s %r" % (rid, what, text))
    return hits[0] if len(hits[0]) > 1 else hits[0][0]


def express(r):
    """The vramplan arguments for record r, or (None, [what is missing])."""
    rid = r["id"]
    missing = []
    for phrase, why in MISSING:
        if any(phrase in o for o in r["other_optimizations"] or []) and \
                why not in missing:
            missing.append(why)
    if r["sequence_length"] is None:
        missing.append("sequence length not stated: %s" % r["sequence_note"])
    if rid in UNSTATED:
        missing.append(UNSTATED[rid])
    task = r["task"]
    lora = task.get("lora")
    targets = []
    if lora:
        for t in lora["targets"]:
            if t.startswith("MLP"):
                targets += ["gate", "up", "down"]
            elif t.startswith("final output projection"):
                targets += ["head"]     # apply_lora_to_output=True
            elif t in LORA_TARGET:
                targets += LORA_TARGET[t]
            else:
                sys.exit("%s: no rule for the LoRA target %r" % (rid, t))
    if missing:
        return None, missing
    card = pick(CARD, r["gpu"], "gpu", rid)
    n = r["parallelism"].get("num_gpus") or 1
    opt, impl = pick(OPTIMIZER, r["optimizer"], "optimizer", rid,
                     start=True)
    args = [MODEL[r["model"]["name"]], "--json", "--no-search",
            "--profile", "none", "--gpus", "%dx%s" % (n, card),
            "--precision", pick(PRECISION, r["precision"], "precision", rid,
                                  start=True),
            "--optimizer", opt,
            "--micro-batch", str(r["micro_batch_size"]),
            "--seq", str(r["sequence_length"]),
            "--grad-accum", str(r["gradient_accumulation"] or 1),
            "--recompute",
            "none" if r["activation_checkpointing"] == "none" else "full",
            "--attention", pick(ATTENTION, r["attention_impl"], "attention",
                                rid)]
    if not r["activation_checkpointing"].startswith(("none", "full")):
        sys.exit("%s: no rule for the checkpointing %r"
                 % (rid, r["activation_checkpointing"]))
    if impl:
        args += ["--optimizer-impl", impl]
    # The training library (--trainer): its defaults give the adapters'
    # dtype (PEFT's fp32, torchtune's model dtype), how a quantized base
    # is prepared and, for torchtune, the 4.40-like modules.
    args += ["--trainer", TRAINER[r["source_family"]]]
    if lora:
        args += ["--lora", str(lora["rank"]),
                 "--lora-targets", ",".join(targets)]
        if lora.get("dropout"):
            args += ["--lora-dropout", str(lora["dropout"])]
    quant = task.get("quantization")
    if quant:
        if "NF4" not in quant:
            sys.exit("%s: no rule for the quantization %r" % (rid, quant))
        # torchtune's records: torchao's NF4Tensor (--trainer torchtune
        # sets --quant-lib torchao: int8 scalers per 64 values, no saved
        # input, an int64 unpacking per dequantization, the dequantized
        # weights saved under --compile); the others bitsandbytes'.
        args += ["--quant", "nf4"] + kbit_prep(r)
    # torchtune's CEWithChunkedOutputLoss: the head makes all 8 chunks of
    # bf16 logits, the fp32 upcast and the loss go chunk by chunk (not
    # Liger's fused loss, --loss chunked, which never makes the logits).
    # (--trainer torchtune's default; the April 2024 recipes predate it.)
    if any("CEWithChunkedOutputLoss" in o
           for o in r["other_optimizations"] or []):
        args += ["--loss", "chunked-output"]
    else:
        args += ["--loss", "full"]
    if any("activation offloading" in o
           for o in r["other_optimizations"] or []):
        args += ["--activation-offload"]
    # torchtune's compile: True compiles each decoder layer in place
    # (training.compile_model).  Its recipes also call
    # training.compile_loss(self._loss_fn) but drop what it returns, and
    # for a module without apply_compile_strategy (a plain
    # CrossEntropyLoss) that is the only compiled copy: the loss runs
    # eagerly.  CEWithChunkedOutputLoss's apply_compile_strategy compiles
    # its per-chunk cross-entropy in place: the loss is compiled too.
    opts = r["other_optimizations"] or []
    if any("torch.compile" in o for o in opts):
        args += ["--compile"]
        if any("CEWithChunkedOutputLoss" in o for o in opts):
            args += ["--compile-loss"]
    # torchtune's optimizer_in_bwd: each parameter steps in its gradient
    # hook (--optimizer-in-backward), stated in the optimizer or the list.
    if "optimizer_in_bwd=True" in r["optimizer"] or any(
            "optimizer step fused into backward" in o
            for o in r["other_optimizations"] or []):
        args += ["--optimizer-in-backward"]
    args += stack_args(r)
    if r["source_family"] == "torchtune-llama2-7b-apr2024" and n == 1:
        # torchtune 0.1's single-device recipes build the model on the
        # GPU and keep what that reserved (vramplan(1), --load); the
        # distributed ones empty the cache first (MISS_NOTES).
        args += ["--load", "torchtune-0.1"]
    if n > 1:
        fsdp = r["parallelism"].get("fsdp") or ""
        if "FULL_SHARD" not in fsdp or "FSDP1" not in fsdp:
            sys.exit("%s: no rule for the sharding %r" % (rid, fsdp))
        args += ["--fsdp", "full", "--framework", "fsdp1"]
    return args, []


def kbit_prep(r):
    """--kbit-prep for a quantized record, where --trainer's default is
    not what the run did.  TRL's SFTTrainer runs PEFT's
    prepare_model_for_kbit_training (every unquantized parameter to fp32)
    on a 4-bit model unless it is sharded QLoRA (its Params4bit on the
    CPU or meta device: FSDP or ZeRO-3 loading), which is --trainer hf's
    default; fms-acceleration's accelerated-peft-bnb plugin uses its own
    copy without the upcast (framework_plugin_bnb.py); torchtune's
    torchao NF4 models keep bf16 (--trainer torchtune's default)."""
    opts = " ".join(r["other_optimizations"] or [])
    if r["source_family"].startswith("torchtune") or \
            "baseline-peft-bnb" in opts:
        return []
    if "accelerated-peft-bnb" in opts:
        return ["--kbit-prep", "keep"]
    sys.exit("%s: no rule for how the quantized model is prepared" % r["id"])


def stack_args(r):
    """--torch / --cuda / --transformers for what the record's software
    field states (the current stack's defaults otherwise; "~v4.16" is
    taken as 4.16)."""
    sw = r.get("software") or ""
    out = []
    m = re.search(r"CUDA (\d+\.\d+)", sw)
    if m:
        out += ["--cuda", m.group(1)]
    m = re.search(r"(?:PyTorch|torch) v?(\d+\.\d+)", sw)
    if m:
        out += ["--torch", m.group(1)]
    elif r["source_family"] in TORCH_ASSUMED:
        out += ["--torch", TORCH_ASSUMED[r["source_family"]]]
    m = re.search(r"transformers ~?v?(\d+\.\d+)", sw)
    if m:
        out += ["--transformers", m.group(1)]
    # torchtune runs its own modules, not transformers': like 4.40's
    # Llama they repeat k and v before sdpa (expand + flatten: copies)
    # and hand the loss fp32 logits (TransformerDecoder's
    # self.output(h).float()); the April 2024 recipes also slice the
    # logits, November's pad the labels.  No transformers release is
    # that code; 4.40's rows, which these runs were scored with, are the
    # nearest: --trainer torchtune's default.
    return out


def measured(r):
    vals = [(k, r[k]) for k in UNIT if r.get(k) is not None]
    if len(vals) > 1:
        sys.exit("%s: more than one measured value" % r["id"])
    return vals[0][1] * UNIT[vals[0][0]] if vals else None


def run(args):
    out = subprocess.run([exe] + args, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        return None, out.stderr.strip()
    d = json.loads(out.stdout)
    if d["fits"] != (out.returncode == 0):
        return None, "exit status %d but fits is %s" % (out.returncode,
                                                        d["fits"])
    return d, None


GiB = 2.0**30
verbose = "-v" in sys.argv[1:]
failed = []
scored = {}           # family -> [(id, error %, single gpu)]
not_expressible = []
residuals = {}        # (level, technique) -> [(estimate - measured) / measured]
calibration = []
known_seen = set()
print("%-40s %-9s %9s %9s %8s  %s" % ("record (GiB)", "level", "measured",
                                      "vramplan", "error", "verdict"))
for r in records:
    rid, fam = r["id"], r["source_family"]
    level, key, word = METRIC[fam]
    if word not in r["metric"]:
        sys.exit("%s: the metric %r does not say %s" % (rid, r["metric"],
                                                         word))
    if r["record_type"] == "calibration":
        calibration.append(r)
        continue
    args, missing = express(r)
    if args is None:
        not_expressible.append((rid, missing))
        continue
    if verbose:
        print("  vramplan " + " ".join(args))
    d, err = run(args)
    if d is None:
        print("%-40s vramplan failed: %s" % (rid, err))
        failed.append(rid)
        continue
    g = d["per_gpu"]
    single = (r["parallelism"].get("num_gpus") or 1) == 1
    fits = d["fits"]
    want = r["record_type"] != "oom"
    verdict = "FITS" if fits else "DOES NOT FIT"
    if fits == want:
        verdict += " ok"
        if rid in KNOWN_WRONG:
            verdict += " (NOW RIGHT: remove it from KNOWN_WRONG)"
    elif rid in KNOWN_WRONG:
        verdict += " KNOWN WRONG: " + KNOWN_WRONG[rid]
        known_seen.add(rid)
    else:
        verdict += " WRONG (%s)" % ("the run fitted" if want
                                    else "the run ran out of memory")
        failed.append(rid)
    meas = measured(r)
    est = g[key]
    if meas is None:
        print("%-40s %-9s %9s %9.2f %8s  %s" % (rid, level, "-", est / GiB,
                                                "-", verdict))
        continue
    e = 100.0 * (est - meas) / meas
    full = level != "allocated" and meas >= FULL_CARD * g["capacity_bytes"]
    if full:
        verdict += "; fit check only (%.0f%% of the card)" % (
            100.0 * meas / g["capacity_bytes"])
    elif rid in FIT_CHECK_ONLY:
        verdict += "; fit check only: " + FIT_CHECK_ONLY[rid]
    else:
        scored.setdefault(fam, []).append((rid, e, single))
        plan = d["plan"]
        tech = "full" if not plan["lora_rank"] else \
            "lora" if plan["quant"] == "none" else "qlora"
        residuals.setdefault((level, tech), []).append(e / 100.0)
        # The band vramplan states for this level (src/band.c) must hold
        # the measurement: it is made from these runs' residuals.
        band = g["uncertainty"][level]
        if not band["low_bytes"] <= meas <= band["high_bytes"]:
            verdict += "; OUTSIDE the stated band %.2f-%.2f GiB" % (
                band["low_bytes"] / GiB, band["high_bytes"] / GiB)
            failed.append(rid)
    print("%-40s %-9s %9.2f %9.2f %+7.1f%%  %s%s%s" % (
        rid, level, meas / GiB, est / GiB, e, verdict,
        "" if single else " [%d GPUs]" % r["parallelism"]["num_gpus"],
        "; " + MISS_NOTES[rid] if rid in MISS_NOTES else ""))


def ceil3(x):
    """x rounded up to the third decimal, as src/band.c states it."""
    return math.ceil(x * 1000 - 1e-9) / 1000


def summary(rows):
    if not rows:
        return "  0"
    m = sum(abs(e) for _, e, _ in rows) / len(rows)
    return "%3d  %7.1f%%  %3d" % (len(rows), m, sum(e < 0 for _, e, _ in rows))


print()
print("%-36s %s   %s" % ("source family", "single GPU: n  mean|err|  low",
                           "all: n  mean|err|  low"))
for fam in METRIC:
    rows = scored.get(fam, [])
    print("%-36s %26s   %22s" % (fam, summary([x for x in rows if x[2]]),
                                  summary(rows)))
single_rows = [x for rows in scored.values() for x in rows if x[2]]
all_rows = [x for rows in scored.values() for x in rows]
print("%-36s %26s   %22s" % ("all sources", summary(single_rows),
                              summary(all_rows)))
for fam, note in CAVEAT.items():
    print("  %s: %s" % (fam, note))
mean = (sum(abs(e) for _, e, _ in single_rows) / len(single_rows)
        if single_rows else 0.0)

print()
print("Residuals by level and technique, and the band they imply "
      "(src/band.c's table):")
print("  %-10s %-6s %4s %9s %9s   %7s %7s" % ("level", "tech", "n", "lowest",
                                            "highest", "below", "above"))
for (level, tech), es in sorted(residuals.items()):
    lo, hi = min(es), max(es)
    print("  %-10s %-6s %4d %+8.1f%% %+8.1f%%   %7.3f %7.3f" % (
        level, tech, len(es), 100 * lo, 100 * hi,
        ceil3(max(hi, 0) / (1 + max(hi, 0))),
        ceil3(-min(lo, 0) / (1 + min(lo, 0)))))

print()
print("Not expressible (%d):" % len(not_expressible))
for rid, why in not_expressible:
    print("  %s: %s" % (rid, "; ".join(why)))

print()
print("Calibration records (not scored):")
for r in calibration:
    rid = r["id"]
    meas = measured(r)
    # Any estimate on the record's card gives the profile's context; an
    # fp32 one the fp32 weights (the record loads them in fp32).
    args = [MODEL[r["model"]["name"]], "--json", "--no-search",
            "--profile", "none",
            "--gpus", "1x" + pick(CARD, r["gpu"], "gpu", rid),
            "--precision", "fp32"] + stack_args(r)
    d, err = run(args)
    if d is None:
        print("  %s: vramplan failed: %s" % (rid, err))
        failed.append(rid)
        continue
    g = d["per_gpu"]
    if "context" in r["task"]["type"] and "weights" not in r["task"]["type"]:
        est, what = g["context_bytes"], "CUDA context"
    else:
        est, what = g["context_bytes"] + g["weights_bytes"], \
            "CUDA context + fp32 weights"
    print("  %-36s %-28s measured %6.0f MiB, vramplan %6.0f MiB (%+.1f%%)"
          % (rid, what, meas / 2**20, est / 2**20,
             100.0 * (est - meas) / meas))

for rid in sorted(set(KNOWN_WRONG) - known_seen):
    print("note: %s is in KNOWN_WRONG but was not wrong (or not run)" % rid)
print()
print("single-GPU mean |error| %.2f%% (gate %.2f%%)" % (mean, GATE_PCT))
if mean > GATE_PCT:
    print("FAIL: the mean |error| got worse than the committed %.2f%%"
          % GATE_PCT)
    failed.append("gate")
if failed:
    print("FAIL: %s" % ", ".join(failed))
    sys.exit(1)
print("ok")
