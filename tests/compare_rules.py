#!/usr/bin/python3
"""compare proposes only runnable plans: every card's plan, replayed as an
estimate with the same knobs (--no-search), passes the rule book.

    VRAMPLAN=... TOP_SRCDIR=... python3 tests/compare_rules.py [MODEL...]

For each model (default: a quick set; VALIDATE_FULL=1: the whole library),
full training and QLoRA (rank 16 on an NF4 base), run `vramplan compare
MODEL --tokens 1e9 --json`, then `vramplan MODEL --gpus NxCARD --no-search`
with the card's plan; exit status 3 (a refused plan) there is a
violation.  The rules the planner is held to are those of the estimate
(rules.c), so a plan compare shows that the estimate refuses is a plan a
framework would refuse: DeepSpeed's pipeline engine with ZeRO-2/3, QLoRA
under tensor parallelism, and the rest.  Exit 0 when none, 1 otherwise.
"""
import glob
import json
import os
import subprocess
import sys

top = os.environ.get("TOP_SRCDIR", ".")
exe = os.environ.get("VRAMPLAN", os.path.join(top, "src", "vramplan"))
data = os.environ.get("VRAMPLAN_DATA", os.path.join(top, "models"))
QUICK = ["llama-3.1-405b", "mixtral-8x7b", "llama-3.1-70b"]
VARIANTS = [[], ["--lora", "16", "--quant", "nf4"]]


def knobs(p):
    a = ["--precision", p["precision"], "--tp", str(p["tp"]), "--pp",
         str(p["pp"]), "--dp", str(p["dp"]), "--micro-batch",
         str(p["micro_batch"]), "--grad-accum", str(p["grad_accum"]),
         "--recompute", p["recompute"]]
    if p["zero"]:
        a += ["--zero", str(p["zero"])]
    if p["fsdp"] != "none":
        a += ["--fsdp", p["fsdp"]]
    if p["sp"]:
        a += ["--sp"]
    if p["cp"] > 1:
        a += ["--cp", str(p["cp"])]
    if p["ep"] > 1:
        a += ["--ep", str(p["ep"])]
    return a


def main():
    names = sys.argv[1:]
    if not names:
        names = sorted(os.path.basename(f)[:-5] for f in glob.glob(
            os.path.join(data, "*.yaml")) if not f.endswith("gpus.yaml")) \
            if os.environ.get("VALIDATE_FULL") else QUICK
    checked = bad = 0
    for name in names:
        model = os.path.join(data, name + ".yaml")
        for extra in VARIANTS:
            r = subprocess.run([exe, "compare", model, "--tokens", "1e9",
                                "--json"] + extra, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True)
            if r.returncode == 3 and extra:
                continue        # QLoRA refused for the model as a whole
            if r.returncode not in (0, 4):
                print("FAIL %s %s: compare exited %d: %s" % (
                    name, " ".join(extra), r.returncode, r.stderr.strip()))
                bad += 1
                continue
            for c in json.loads(r.stdout)["cards"]:
                if not c["fits"]:
                    continue
                if not c["meets"]:
                    continue
                e = subprocess.run([exe, model, "--gpus", "%dx%s" % (
                    c["gpus"], c["gpu"]), "--no-search", "--json"] +
                    knobs(c["plan"]) + extra, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, universal_newlines=True)
                checked += 1
                if e.returncode in (2, 3):
                    bad += 1
                    print("FAIL %s %s on %d x %s: %s" % (
                        name, " ".join(extra), c["gpus"], c["gpu"],
                        e.stderr.strip()))
    print("%d plans of %d models replayed as estimates, %d refused" % (
        checked, len(names), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
