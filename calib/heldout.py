#!/usr/bin/python3
"""Held-apart accuracy check of a calibrated vramplan on a real GPU.

    heldout.py [--out DIR] [--profile FILE] [--vramplan CMD] [--device cuda|cpu]
               [--filter SUBSTR] [--no-hf] [--threads N] [--dry-run]

Measures configurations that are NOT in the calibration grid (calibrate.py)
and compares them with vramplan's estimates, at three levels:

    allocated  torch.cuda.max_memory_allocated over the steps
    reserved   torch.cuda.max_memory_reserved
    device     what nvidia-smi shows at the peak: NVML used (pynvml) or
               torch.cuda.mem_get_info total - free, read right after the
               steps while the caching allocator still holds its segments

Rows: vramplan YAML models run through calib/harness.py (measure(device=
"cuda")), and, when `import transformers` works, Hugging Face models built
from the config files in tests/data/hf with fewer layers and random weights
(the shrunk config is written to DIR/hf/<name>/config.json and vramplan
reads that same file).  Every row uses dropout 0.

Estimates: $VRAMPLAN MODEL --device cuda --gpus 1xGPU --no-search --precision P
--optimizer O --micro-batch B --seq S --recompute R --attention A --dropout 0
[--profile FILE] --json, with GPU = `catalog_id:` of the profile, else
H200/H100/A100 from torch.cuda.get_device_name(), else no --gpus; --profile
only when the file exists.

Writes DIR/heldout.tsv.  Exit status: 0 the acceptance bar is met (mean
|error| of allocated <= 2% and of device <= 3%); 1 it is not, or a row
failed (an HF model that cannot be built is skipped with a note instead);
2 usage error / torch missing / vramplan not found; 5 no CUDA device.

--device cpu is a debug mode for machines without a GPU: small shapes, the
small models only, exact CPU allocator peaks (harness replay), estimates
with --device cpu; the reserved/device levels are not measured there and
there is no acceptance bar (exit 0 unless a row fails).
"""

import argparse
import gc
import json
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import calibrate  # noqa: E402  (no torch needed at import time)

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NOCUDA = 0, 1, 2, 5
ALLOC_LIMIT_PCT = 2.0
DEVICE_LIMIT_PCT = 3.0
HF_STEPS = 3
GIB = float(1 << 30)


def H(name, src, precision, optimizer, mb, seq, recompute="none", attention="sdpa"):
    """A harness row: a vramplan YAML model through calib/harness.py."""
    return {"kind": "harness", "name": name, "src": src, "precision": precision, "optimizer": optimizer,
            "micro_batch": mb, "seq": seq, "recompute": recompute, "attention": attention}


def HF(name, src, layers_key, layers, auto, precision, optimizer, mb, seq, recompute="none",
       attention="sdpa"):
    """A Hugging Face row: tests/data/hf config, num layers shrunk, random weights."""
    return {"kind": "hf", "name": name, "src": src, "layers_key": layers_key, "layers": layers, "auto": auto,
            "precision": precision, "optimizer": optimizer, "micro_batch": mb, "seq": seq,
            "recompute": recompute, "attention": attention}


# None of these is in the calibration grid (which is fp32/adamw on gpt2 and
# llama-4l-mha at micro-batch 1-2, seq 512-1024, plus one bf16-mixed and one
# sgd point at mb 2 s 512): other models, families, shapes, precisions,
# optimizers and recompute settings.
ROWS = [
    H("gpt2-medium bf16-mixed adamw mb4 s1024", "models/gpt2-medium.yaml", "bf16-mixed", "adamw", 4, 1024),
    H("gpt2-medium fp32 adam mb2 s1024 eager", "models/gpt2-medium.yaml", "fp32", "adam", 2, 1024,
      attention="eager"),
    H("gpt2 fp16-mixed sgd-momentum mb8 s1024", "models/gpt2.yaml", "fp16-mixed", "sgd-momentum", 8, 1024),
    H("gpt2-large bf16-mixed adamw mb2 s1024 full", "models/gpt2-large.yaml", "bf16-mixed", "adamw", 2, 1024,
      "full"),
    H("bert-base bf16-mixed adamw mb16 s512", "models/bert-base.yaml", "bf16-mixed", "adamw", 16, 512),
    H("qwen-style bf16-mixed adamw mb32 s512", "tests/data/val/qwen-style.yaml", "bf16-mixed", "adamw", 32, 512),
    H("neox-style fp32 adam mb32 s512", "tests/data/val/neox-style.yaml", "fp32", "adam", 32, 512),
    H("bert-tiny bf16-mixed adamw mb64 s256", "tests/data/val/bert-tiny.yaml", "bf16-mixed", "adamw", 64, 256),
    H("gemma2-style bf16-mixed adamw mb32 s512 full", "tests/data/val/gemma2-style.yaml", "bf16-mixed", "adamw",
      32, 512, "full"),
    H("llama-4l-mha bf16-mixed adamw mb16 s1024 full", "tests/data/val/llama-4l-mha.yaml", "bf16-mixed",
      "adamw", 16, 1024, "full"),
    H("llama-4l-mha fp16-mixed adamw mb8 s1024", "tests/data/val/llama-4l-mha.yaml", "fp16-mixed", "adamw",
      8, 1024),
    H("llama-mqa-32k bf16-mixed adamw mb8 s1024", "tests/data/val/llama-mqa-32k.yaml", "bf16-mixed", "adamw",
      8, 1024),
    H("gpt2-3l bf16 adamw mb32 s512", "tests/data/val/gpt2-3l.yaml", "bf16", "adamw", 32, 512),
    H("bert-4l-30k fp32 adamw mb16 s512 eager", "tests/data/val/bert-4l-30k.yaml", "fp32", "adamw", 16, 512,
      attention="eager"),
    H("torchnn-enc bf16-mixed adamw mb32 s512", "tests/data/val/torchnn-enc.yaml", "bf16-mixed", "adamw", 32,
      512, attention="eager"),
    HF("hf-gpt2 4l bf16-mixed adamw mb4 s1024", "tests/data/hf/gpt2.config.json", "n_layer", 4, "causal",
       "bf16-mixed", "adamw", 4, 1024),
    HF("hf-bert-base 4l fp32 adamw mb8 s512", "tests/data/hf/bert-base.config.json", "num_hidden_layers", 4,
       "masked", "fp32", "adamw", 8, 512),
    HF("hf-llama-3-8b 2l bf16-mixed adamw mb1 s2048", "tests/data/hf/llama-3-8b.config.json",
       "num_hidden_layers", 2, "causal", "bf16-mixed", "adamw", 1, 2048),
    HF("hf-qwen2.5-7b 2l bf16-mixed adamw mb1 s2048 full", "tests/data/hf/qwen2.5-7b.config.json",
       "num_hidden_layers", 2, "causal", "bf16-mixed", "adamw", 1, 2048, "full"),
]

# --device cpu (debug): tiny widths for the HF configs, by model_type
CPU_HF_SHRINK = {
    "gpt2": {"n_embd": 128, "n_head": 4, "vocab_size": 4096, "n_positions": 256, "n_ctx": 256},
    "bert": {"hidden_size": 128, "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 4096},
    "llama": {"hidden_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 344,
              "vocab_size": 2048},
    "qwen2": {"hidden_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 344,
              "vocab_size": 2048},
}
DROPOUT_KEYS = ("attn_pdrop", "embd_pdrop", "resid_pdrop", "summary_first_dropout", "hidden_dropout_prob",
                "attention_probs_dropout_prob", "attention_dropout", "classifier_dropout")


def cpu_variant(row):
    """The --device cpu debug version of a row: None to skip it."""
    r = dict(row)
    if r["precision"] in ("fp16-mixed", "fp16"):
        return None
    if r["kind"] == "harness" and not r["src"].startswith("tests/"):
        return None            # the models/ files are too big for the CPU replay
    r["micro_batch"] = min(r["micro_batch"], 2)
    r["seq"] = min(r["seq"], 128)
    r["name"] = "%s [cpu mb%d s%d]" % (r["name"], r["micro_batch"], r["seq"])
    return r


def hf_config(row, device):
    """The shrunk HF config (dict) for a row."""
    with open(os.path.join(ROOT, row["src"])) as f:
        cfg = json.load(f)
    cfg[row["layers_key"]] = int(row["layers"])
    if device == "cpu":
        cfg.update(CPU_HF_SHRINK.get(cfg.get("model_type"), {}))
        if "head_dim" in cfg:
            cfg["head_dim"] = cfg["hidden_size"] // cfg["num_attention_heads"]
    for k in DROPOUT_KEYS:
        if k in cfg:
            cfg[k] = 0.0
    cfg["use_cache"] = False
    cfg["torch_dtype"] = "float32"   # fp32 master weights (autocast does the rest)
    return cfg


def hf_dir(out, row):
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", row["name"].split(" ")[0])
    return os.path.join(out, "hf", slug)


# ----------------------------------------------------------------------------
# estimates
# ----------------------------------------------------------------------------

def gpu_catalog_id(profile, torch):
    """`catalog_id:` from the profile, else a catalog alias from the CUDA
    device name, else None (no --gpus)."""
    if profile and os.path.isfile(profile):
        try:
            with open(profile) as f:
                for line in f:
                    m = re.match(r"\s*catalog_id:\s*[\"']?([^\"'\s#]+)", line)
                    if m and m.group(1) not in ("null", "~"):
                        return m.group(1)
        except OSError:
            pass
    if torch is not None:
        try:
            name = torch.cuda.get_device_name(0)
        except Exception:
            return None
        for key in ("H200", "H100", "A100"):
            if key in name:
                return key
    return None


def estimate_argv(vramplan, model, row, device, gpu, profile):
    argv = list(vramplan) + [model, "--device", device]
    if device == "cuda" and gpu:
        argv += ["--gpus", "1x" + gpu]
    argv += ["--no-search", "--precision", row["precision"], "--optimizer", row["optimizer"],
             "--micro-batch", str(row["micro_batch"]), "--seq", str(row["seq"]),
             "--recompute", row["recompute"], "--attention", row["attention"], "--dropout", "0"]
    if profile and os.path.isfile(profile):
        argv += ["--profile", profile]
    # The stack measured: harness rows clone transformers 4.40's code, HF
    # rows run the installed release.
    try:
        import torch
        argv += ["--torch", ".".join(torch.__version__.split("+")[0].split(".")[:2])]
    except ImportError:
        pass
    if row["kind"] == "harness":
        argv += ["--transformers", "4.40"]
    else:
        try:
            import transformers
            argv += ["--transformers", ".".join(transformers.__version__.split(".")[:2])]
        except ImportError:
            pass
    argv += ["--json"]
    return argv


def run_estimate(argv):
    pr = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    try:
        js = json.loads(pr.stdout)
        pg = js["per_gpu"]
    except (ValueError, KeyError, TypeError):
        raise RuntimeError("vramplan exit %d: %s" % (pr.returncode, (pr.stderr.strip() or pr.stdout.strip())[-300:]))
    if pr.returncode not in (0, 1):          # 1: does not fit (the JSON is still there)
        raise RuntimeError("vramplan exit %d: %s" % (pr.returncode, pr.stderr.strip()[-300:]))

    def g(k):
        v = pg.get(k)
        return None if v is None else int(v)
    return {"allocated": g("allocated_peak_bytes"), "reserved": g("reserved_peak_bytes"),
            "device": g("device_peak_bytes")}


# ----------------------------------------------------------------------------
# measurements
# ----------------------------------------------------------------------------

def measure_harness_row(row, device, threads):
    h = calibrate.harness
    cfg = h.load_model_cfg(os.path.join(ROOT, row["src"]))
    res = h.measure(cfg, device=device, precision=row["precision"], optimizer=row["optimizer"],
                    micro_batch=row["micro_batch"], seq=row["seq"], recompute=row["recompute"],
                    attention=row["attention"], dropout=0.0, steps=3 if device == "cuda" else 2, seed=0,
                    num_threads=threads)
    if device == "cpu":
        return {"allocated": int(res["allocated_peak_bytes"]), "reserved": None, "device": None}
    return {"allocated": int(res["allocated_peak_bytes"]), "reserved": res.get("reserved_peak_bytes"),
            "device": res.get("device_peak_bytes")}


class SkipRow(Exception):
    pass


def build_hf(row, cfg_dir, device):
    """(model, attention actually used).  Raises SkipRow when transformers
    cannot build it."""
    torch = calibrate.torch
    try:
        import transformers
    except Exception as e:
        raise SkipRow("transformers not importable (%s)" % e)
    try:
        config = transformers.AutoConfig.from_pretrained(cfg_dir)
    except Exception as e:
        raise SkipRow("AutoConfig: %s" % e)
    auto = transformers.AutoModelForMaskedLM if row["auto"] == "masked" else transformers.AutoModelForCausalLM
    model, attn, errs = None, row["attention"], []
    # the row's attention; else eager; else no attn_implementation at all
    # (transformers < 4.36, whose only implementation is eager)
    impls = [row["attention"]] + (["eager"] if row["attention"] != "eager" else []) + [None]
    for impl in impls:
        kw = {} if impl is None else {"attn_implementation": impl}
        for on_device in ((True, False) if device == "cuda" else (False,)):
            try:
                if on_device and hasattr(torch.device("cpu"), "__enter__"):
                    with torch.device(device):          # initialize directly on the GPU (fast)
                        model = auto.from_config(config, **kw)
                else:
                    model = auto.from_config(config, **kw)
                attn = impl or "eager"
                break
            except Exception as e:
                first = (str(e).splitlines() or [""])[0][:160]
                errs.append("%s%s: %s" % (impl, " on-device" if on_device else "", first))
                model = None
        if model is not None:
            break
    if model is None:
        raise SkipRow("cannot build: " + " | ".join(errs))
    if any(p.dtype != torch.float32 for p in model.parameters()):
        model = model.float()
    model.to(device)
    model.train()
    try:
        model.config.use_cache = False
    except Exception:
        pass
    if row["recompute"] == "full":
        try:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        except TypeError:
            model.gradient_checkpointing_enable()
    return model, attn


def measure_hf_row(row, cfg_dir, device, threads):
    """3 training steps of an HF model (AdamW etc., labels = input_ids, bf16
    autocast or fp32 as the row says).  cuda: max_memory_allocated /
    max_memory_reserved / device used after the steps, as the harness does;
    cpu: the harness's exact allocator replay (measure_callable)."""
    torch = calibrate.torch
    h = calibrate.harness
    torch.set_num_threads(int(threads))
    torch.manual_seed(0)
    if device == "cuda":
        h.record_device_used_before_context()
        calibrate.cuda_reset()
        torch.cuda.init()
    model, attn = build_hf(row, cfg_dir, device)
    if row["precision"] in ("bf16", "fp16"):
        model.to(torch.bfloat16 if row["precision"] == "bf16" else torch.float16)
    vocab = int(model.config.vocab_size)
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, (row["micro_batch"], row["seq"]), generator=gen).to(device)
    opt = h.make_optimizer(row["optimizer"], [p for p in model.parameters() if p.requires_grad], device)
    scaler = torch.cuda.amp.GradScaler() if row["precision"] == "fp16-mixed" else None

    def steps():
        for _ in range(HF_STEPS):
            h.plain_step(lambda: model(input_ids=ids, labels=ids).loss, opt, scaler, row["precision"], device)

    # (model, opt, ids die with this frame; the caller then empties the cache)
    if device == "cpu":
        live = list(model.parameters()) + list(model.buffers()) + [ids]
        r = h.measure_callable(steps, live=live)
        return {"allocated": int(r["allocated_peak_bytes"]), "reserved": None, "device": None}, attn
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    steps()
    torch.cuda.synchronize()
    out = {"allocated": int(torch.cuda.max_memory_allocated()),
           "reserved": int(torch.cuda.max_memory_reserved()),
           "device": calibrate.device_used_bytes()}   # before any empty_cache
    return out, attn


# ----------------------------------------------------------------------------
# report
# ----------------------------------------------------------------------------

def err_pct(est, meas):
    if est is None or meas is None or meas == 0:
        return None
    return 100.0 * (est - meas) / meas


def fmt_gib(v):
    return "-" if v is None else "%.3f" % (v / GIB)


def fmt_pct(v):
    return "-" if v is None else "%+.2f" % v


def report(rows_out, out_dir, device):
    hdr = ("config", "alloc est GiB", "alloc meas GiB", "err %", "reserved est", "meas", "err %",
           "device est", "meas", "err %")
    table = []
    for r in rows_out:
        e, m = r["est"], r["meas"]
        table.append((r["name"], fmt_gib(e["allocated"]), fmt_gib(m["allocated"]), fmt_pct(r["err"]["allocated"]),
                      fmt_gib(e["reserved"]), fmt_gib(m["reserved"]), fmt_pct(r["err"]["reserved"]),
                      fmt_gib(e["device"]), fmt_gib(m["device"]), fmt_pct(r["err"]["device"])))
    widths = [max(len(str(x[i])) for x in [hdr] + table) for i in range(len(hdr))]
    line = lambda cols: "  ".join(str(c).ljust(widths[i]) if i == 0 else str(c).rjust(widths[i])  # noqa: E731
                                  for i, c in enumerate(cols))
    print(line(hdr))
    for t in table:
        print(line(t))
    summary = {}
    for lvl in ("allocated", "reserved", "device"):
        errs = [abs(r["err"][lvl]) for r in rows_out if r["err"][lvl] is not None]
        summary[lvl] = (sum(errs) / len(errs), max(errs), len(errs)) if errs else None
    for lvl in ("allocated", "reserved", "device"):
        s = summary[lvl]
        if s is None:
            print("%-9s  not measured" % lvl)
        else:
            print("%-9s  mean |error| %.2f%%  max |error| %.2f%%  (%d rows)" % (lvl, s[0], s[1], s[2]))
    path = os.path.join(out_dir, "heldout.tsv")
    lines = ["\t".join(("config", "kind", "model", "precision", "optimizer", "micro_batch", "seq", "recompute",
                        "attention", "alloc_est_bytes", "alloc_meas_bytes", "alloc_err_pct", "reserved_est_bytes",
                        "reserved_meas_bytes", "reserved_err_pct", "device_est_bytes", "device_meas_bytes",
                        "device_err_pct"))]
    for r in rows_out:
        vals = [r["name"], r["kind"], r["model"], r["precision"], r["optimizer"], r["micro_batch"], r["seq"],
                r["recompute"], r["attention"]]
        for lvl in ("allocated", "reserved", "device"):
            vals += [r["est"][lvl], r["meas"][lvl], None if r["err"][lvl] is None else round(r["err"][lvl], 3)]
        lines.append("\t".join("" if v is None else str(v) for v in vals))
    for lvl in ("allocated", "reserved", "device"):
        s = summary[lvl]
        if s is not None:
            lines.append("# %s mean_abs_err_pct %.3f max_abs_err_pct %.3f rows %d" % (lvl, s[0], s[1], s[2]))
    calibrate.write_atomic(path, "\n".join(lines) + "\n")
    print("table written to %s" % path)
    return summary


# ----------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------

def select_rows(a):
    rows = []
    for r in ROWS:
        if a.no_hf and r["kind"] == "hf":
            continue
        if a.device == "cpu":
            r = cpu_variant(r)
            if r is None:
                continue
        if a.filter and a.filter not in r["name"]:
            continue
        rows.append(r)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(prog="heldout.py", description="held-apart accuracy check of vramplan on a GPU")
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-check-out"), metavar="DIR",
                    help="output folder (default ./gpu-check-out or $OUT)")
    ap.add_argument("--profile", metavar="FILE", help="calibrated profile (default DIR/profile.yaml)")
    ap.add_argument("--vramplan", metavar="CMD", default=None,
                    help="vramplan command (default $VRAMPLAN, else build-gpu/src/vramplan)")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: a small debug run")
    ap.add_argument("--filter", metavar="SUBSTR", help="only rows whose name contains SUBSTR")
    ap.add_argument("--no-hf", action="store_true", help="skip the Hugging Face rows")
    ap.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    ap.add_argument("--dry-run", action="store_true", help="list the rows and commands; no GPU needed")
    a = ap.parse_args(argv)
    out_dir = os.path.abspath(a.out)
    profile = os.path.abspath(a.profile) if a.profile else os.path.join(out_dir, "profile.yaml")
    vr = a.vramplan or os.environ.get("VRAMPLAN") or os.path.join(ROOT, "build-gpu", "src", "vramplan")
    vramplan = shlex.split(vr)
    rows = select_rows(a)
    if not rows:
        print("heldout: no rows selected", file=sys.stderr)
        return EXIT_USAGE

    if a.dry_run:
        gpu = gpu_catalog_id(profile, None) or "<from the GPU name>"
        print("# %d rows (%s); estimates with --profile only if %s exists" % (len(rows), a.device, profile))
        for i, r in enumerate(rows, 1):
            model = (os.path.join(hf_dir(out_dir, r), "config.json") if r["kind"] == "hf"
                     else os.path.join(ROOT, r["src"]))
            print("[%d/%d] %-52s %s%s" % (i, len(rows), r["name"], r["kind"],
                                          ("  (%s, %s=%d)" % (r["src"], r["layers_key"], r["layers"]))
                                          if r["kind"] == "hf" else ""))
            print("        " + " ".join(shlex.quote(x) for x in estimate_argv(vramplan, model, r, a.device, gpu,
                                                                            profile)))
        return EXIT_OK

    calibrate.import_deps("heldout")
    torch = calibrate.torch
    if a.device == "cuda":
        calibrate.harness.record_device_used_before_context()
        if not torch.cuda.is_available():
            print(calibrate.cuda_missing_message("heldout"), file=sys.stderr)
            return EXIT_NOCUDA
    exe = vramplan[0]
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)) and not __import__("shutil").which(exe):
        print("heldout: vramplan not found: %s (build it, or set --vramplan / $VRAMPLAN)" % exe, file=sys.stderr)
        return EXIT_USAGE
    gpu = gpu_catalog_id(profile, torch) if a.device == "cuda" else None
    os.makedirs(out_dir, exist_ok=True)
    print("heldout: %d rows on %s%s; vramplan %s%s" % (
        len(rows), a.device, (" (" + torch.cuda.get_device_name(0) + ")") if a.device == "cuda" else "",
        " ".join(vramplan), (" --gpus 1x" + gpu) if gpu else "")
        + ("; profile " + profile if os.path.isfile(profile) else "; no profile (uncalibrated defaults)"),
        file=sys.stderr)

    rows_out, failed, skipped = [], [], []
    t_all = time.time()
    for i, r in enumerate(rows, 1):
        t0 = time.time()
        tag = "[%d/%d] %s" % (i, len(rows), r["name"])
        try:
            if r["kind"] == "hf":
                d = hf_dir(out_dir, r)
                os.makedirs(d, exist_ok=True)
                cfg = hf_config(r, a.device)
                calibrate.write_atomic(os.path.join(d, "config.json"), json.dumps(cfg, indent=2) + "\n")
                meas, attn = measure_hf_row(r, d, a.device, a.threads)
                if attn != r["attention"]:
                    print("%s: note: built with attention %s (%s unavailable)" % (tag, attn, r["attention"]),
                          file=sys.stderr)
                    r = dict(r, attention=attn)
                model = os.path.join(d, "config.json")
            else:
                meas = measure_harness_row(r, a.device, a.threads)
                model = os.path.join(ROOT, r["src"])
            argv = estimate_argv(vramplan, model, r, a.device, gpu, profile)
            est = run_estimate(argv)
        except SkipRow as e:
            print("%s: skipped (%s)" % (tag, e), file=sys.stderr)
            skipped.append(r["name"])
            continue
        except Exception as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
            print("%s: FAILED (%s: %s)" % (tag, type(e).__name__, msg), file=sys.stderr)
            failed.append(r["name"])
            continue
        finally:
            if a.device == "cuda":
                try:
                    calibrate.cuda_reset()
                except Exception:
                    pass
            gc.collect()
        if a.device == "cpu":
            est["reserved"] = est["device"] = None   # not measured on CPU
        err = {lvl: err_pct(est[lvl], meas[lvl]) for lvl in ("allocated", "reserved", "device")}
        rows_out.append(dict(r, model=os.path.relpath(model, ROOT) if model.startswith(ROOT + os.sep) else model,
                             est=est, meas=meas, err=err))
        print("%s: allocated est %s / meas %s GiB (%s%%), %.1f s" % (
            tag, fmt_gib(est["allocated"]), fmt_gib(meas["allocated"]), fmt_pct(err["allocated"]),
            time.time() - t0), file=sys.stderr)

    print("heldout: %d measured, %d skipped, %d failed in %.1f s" % (
        len(rows_out), len(skipped), len(failed), time.time() - t_all), file=sys.stderr)
    if not rows_out:
        print("heldout: nothing measured", file=sys.stderr)
        return EXIT_FAIL
    summary = report(rows_out, out_dir, a.device)
    ok = True
    if a.device == "cuda":
        s_alloc, s_dev = summary["allocated"], summary["device"]
        if s_alloc is None or s_alloc[0] > ALLOC_LIMIT_PCT:
            ok = False
        if s_dev is None or s_dev[0] > DEVICE_LIMIT_PCT:
            ok = False
        print("acceptance (mean |error|: allocated <= %.0f%%, device <= %.0f%%): %s" % (
            ALLOC_LIMIT_PCT, DEVICE_LIMIT_PCT, "PASS" if ok else "FAIL"))
    if failed:
        print("failed rows: %s" % "; ".join(failed))
        ok = False
    if skipped:
        print("skipped rows: %s" % "; ".join(skipped))
    return EXIT_OK if ok else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
