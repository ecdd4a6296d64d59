#!/usr/bin/python3
"""Published LoRA/QLoRA peak-memory measurements against vramplan.

Reads tests/data/published_lora.tsv (what was measured, where, how) and, for
every row whose setup is fully stated, runs vramplan with that setup and
prints the estimate beside the measurement with the error.  Rows whose
sequence length, rank or targets the source does not state are listed as
not comparable.  Misses over 10% are explained in MISS_NOTES; the test
fails when a comparable row misses by more than FAIL_PCT or an
unexplained row misses by more than 10%, so a regression cannot hide.

Environment: VRAMPLAN (binary), VRAMPLAN_DATA (models), TOP_SRCDIR.
"""
import csv
import json
import os
import subprocess
import sys

FAIL_PCT = 15.0
# Why a row misses by more than 10% (the QLoRA rows were 21-28% low until
# the lowering kept the input bitsandbytes' MatMul4Bit saves for backward).
# LitGPT is not Hugging Face's code, which the library models lower: its
# attention reshapes q into a contiguous (b, a, s, d) tensor, so sdpa's
# output comes back (b, a, s, d) and `y.transpose(1, 2).reshape(...)`
# copies it, a copy the frozen NF4 o_proj (MatMul4Bit) then keeps: b*s*h*2
# B per layer, 0.32 GiB for the 7B and 0.50 GiB for the 13B at 1304
# tokens.  A Hugging Face q is a transposed view of its projection, so
# there the transpose is a view and the estimate has no copy.  With it
# these rows were -9.1% and -9.3%.
LITGPT_LAYOUT = ("LitGPT's contiguous q makes sdpa's output transpose back "
                 "with a copy that o_proj's MatMul4Bit keeps (b*s*h*2 B a "
                 "layer); Hugging Face's q, which vramplan lowers, makes it "
                 "a view")
MISS_NOTES = {
    "litgpt-llama2-7b-qlora-nf4-mb1": LITGPT_LAYOUT,
    "litgpt-llama2-13b-qlora-nf4-mb1": LITGPT_LAYOUT,
}

top = os.environ.get("TOP_SRCDIR", ".")
exe = os.environ.get("VRAMPLAN", os.path.join(top, "src", "vramplan"))
rows = list(csv.DictReader(open(os.path.join(top, "tests", "data",
                                             "published_lora.tsv")),
                           delimiter="\t"))
passed = failed = 0
print("%-40s %9s %9s %8s  %s" % ("row", "measured", "vramplan", "error",
                                  "note"))
for r in rows:
    if not r["seq"].isdigit() or not r["rank"].isdigit() or \
            r["targets"] in ("see notes",) or "+" in r["targets"]:
        print("%-40s %9s %9s %8s  not comparable: %s" % (
            r["id"], r["measured_gib"], "-", "-",
            "the source does not state the sequence, rank or targets "
            "vramplan needs" if "+" not in r["targets"] else
            "adapts the LM head too (not a vramplan target)"))
        continue
    args = [exe, os.path.join(top, "models", r["model"] + ".yaml"),
            "--json", "--no-search",
            "--precision", r["precision"], "--optimizer", r["optimizer"],
            "--micro-batch", r["micro_batch"], "--seq", r["seq"],
            "--recompute", r["recompute"], "--loss", r["loss"],
            "--lora", r["rank"], "--lora-targets", r["targets"],
            "--lora-dtype", "bf16" if r["precision"] == "bf16" else "fp32"]
    if "lora_dropout 0.05" in r["notes"]:
        args += ["--lora-dropout", "0.05"]
    if r["quant"] != "none":
        # LitGPT quantizes through Lightning's BitsandbytesPrecision and
        # casts nothing else: no PEFT prepare_model_for_kbit_training.
        if not r["id"].startswith("litgpt-"):
            sys.exit("%s: no rule for how the quantized model is prepared"
                     % r["id"])
        args += ["--quant", r["quant"], "--kbit-prep", "keep"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        print("%-40s vramplan failed: %s" % (r["id"], out.stderr.strip()))
        failed += 1
        continue
    g = json.loads(out.stdout)["per_gpu"]
    key = "reserved_peak_bytes" if "reserved" in r["what_measured"] \
        else "allocated_peak_bytes"
    est = g[key] / 2**30
    meas = float(r["measured_gib"])
    err = 100.0 * (est - meas) / meas
    note = MISS_NOTES.get(r["id"], "")
    ok = abs(err) <= FAIL_PCT and (abs(err) <= 10 or bool(note))
    print("%-40s %9.2f %9.2f %+7.1f%%  %s" % (r["id"], meas, est, err, note))
    passed += ok
    failed += not ok
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
