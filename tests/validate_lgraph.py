"""Validate vramplan's layer-graph estimates against real PyTorch on the CPU.

    .venv-test/bin/python tests/validate_lgraph.py      # the grid, needs $VRAMPLAN
    options: --filter SUBSTRING   --json FILE   --threads N   --list   --measure-only

Run by tests/validate_lgraph.sh with the interpreter of the test venv
(PyTorch 2.13, transformers 5.24).  For every case calib/hf_vision.py
builds transformers' ResNetForImageClassification from
tests/data/lgraph-val/NAME.config.json (random weights, no hub; with
--inplace every ReLU made nn.ReLU(inplace=True), torchvision's code),
runs two training steps on B images of N x N under calib/harness.py's
exact replay of the CPU allocator, and

    $VRAMPLAN tests/data/lgraph-val/NAME[-inplace].yaml --device cpu --json
              --precision P --optimizer O --micro-batch B --image N

(the layer-graph file calib/hf_vision.py writes from the same config)
gives the estimate.  torchvision itself cannot be installed beside the
pinned torch; its ResNet's ops are these (conv-bn-relu, the 1x1 conv + BN
shortcut, the stride on the bottleneck's 3x3 conv), and the parameter
counts of models/resnet18.yaml and resnet50.yaml are torchvision's
(tests/data/params.tsv).

The gate: mean |error| <= 2%, max |error| <= 5% and the same peak phase.
Exit status: 0 pass; 1 over a bar, a phase wrong, or a case failed; 77
the estimate command is missing; 2 usage, harness or transformers missing.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

MEAN_LIMIT_PCT = 2.0
MAX_LIMIT_PCT = 5.0
EXIT_SKIP = 77

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data", "lgraph-val")
sys.path.insert(0, os.path.join(ROOT, "calib"))
sys.path.insert(0, HERE)

import measure_cache  # noqa: E402

try:
    import hf_vision  # noqa: E402
    import torch  # noqa: E402
    import transformers  # noqa: E402,F401
except ImportError as e:
    print("%s; run with the interpreter of the test venv (make venv)" % e)
    sys.exit(2)

# (config, in-place ReLU, precision, optimizer, micro_batch, image).  Both
# layouts, with transformers' ReLU and torchvision's in-place one, each
# precision and both optimizers; sizes where the activations make the
# backward peak, a few seconds a case.
GRID = [
    ("resnet-basic", False, "fp32", "adamw", 8, 96),
    ("resnet-basic", False, "bf16-mixed", "adamw", 8, 96),
    ("resnet-basic", True, "bf16", "adamw", 8, 96),
    ("resnet-bottleneck", False, "fp32", "sgd-momentum", 8, 96),
    ("resnet-bottleneck", False, "bf16-mixed", "adamw", 8, 96),
    ("resnet-bottleneck", True, "fp32", "adamw", 4, 96),
]


def case_name(c):
    m, ip, p, o, b, n = c
    return "%s%s/%s/%s/b%d/img%d" % (m, "-inplace" if ip else "", p, o, b, n)


def config_path(m):
    return os.path.join(DATA, m + ".config.json")


def yaml_path(m, inplace):
    return os.path.join(DATA, m + ("-inplace" if inplace else "") + ".yaml")


def vramplan_cmd():
    return shlex.split(os.environ.get("VRAMPLAN", "./build/src/vramplan"))


def vramplan_available(cmd):
    exe = cmd[0]
    if os.sep in exe:
        return os.path.isfile(exe) and os.access(exe, os.X_OK)
    from shutil import which
    return which(exe) is not None


def estimate(cmd, c):
    m, ip, p, o, b, n = c
    argv = cmd + [yaml_path(m, ip), "--device", "cpu", "--json", "--precision", p, "--optimizer", o,
                  "--micro-batch", str(b), "--image", str(n),
                  "--torch", ".".join(torch.__version__.split("+")[0].split(".")[:2]), "--zero-grad", "none"]
    pr = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if pr.returncode != 0:
        raise RuntimeError("exit %d: %s" % (pr.returncode, pr.stderr.strip()[-300:]))
    pg = json.loads(pr.stdout)["per_gpu"]
    return int(pg["allocated_peak_bytes"]), pg.get("peak_phase")


def measure(c, threads):
    """The measurement of a case (measure_cache: reused by the other
    passes of a CI run)."""
    return measure_cache.cached(
        "lgraph", [list(c), threads, torch.__version__, transformers.__version__],
        [os.path.abspath(__file__), hf_vision.__file__, hf_vision.harness.__file__, config_path(c[0])],
        lambda: _measure(c, threads))


def _measure(c, threads):
    m, ip, p, o, b, n = c
    return hf_vision.measure(config_path(m), precision=p, optimizer=o, micro_batch=b, image=n, inplace=ip,
                             steps=2, seed=0, num_threads=threads)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="validate_lgraph.py")
    ap.add_argument("--filter", default="")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--measure-only", action="store_true")
    a = ap.parse_args(argv)
    cases = [c for c in GRID if a.filter in case_name(c)]
    if a.list:
        for c in cases:
            print(case_name(c))
        return 0
    if not cases:
        print("no case matches %r" % a.filter)
        return 2
    cmd = vramplan_cmd()
    if not a.measure_only and not vramplan_available(cmd):
        print("SKIP: estimate command %r not found (set VRAMPLAN)" % " ".join(cmd))
        return EXIT_SKIP
    print("torch %s, transformers %s, %d threads" % (torch.__version__, transformers.__version__, a.threads))
    w = max(len(case_name(c)) for c in cases)
    print("%-*s %12s %12s %8s  %-20s %s" % (w, "case", "measured", "estimated", "err%", "phase meas/est", ""))
    t0 = time.time()
    errors, failed, out = [], 0, []
    for c in cases:
        name = case_name(c)
        rec = {"case": name}
        try:
            res = measure(c, a.threads)
        except Exception as e:
            print("%-*s MEASURE ERROR: %s" % (w, name, e), flush=True)
            rec["error"] = "measure: %s" % e
            out.append(rec)
            failed += 1
            continue
        meas, mph = res["allocated_peak_bytes"], res["peak_phase"]
        ck = res["checks"]
        if not (ck["closure_ok"] and ck["order_consistent"] and ck["foreign_frees"] == 0):
            print("%-*s CHECK FAIL: %s" % (w, name, ck), flush=True)
            failed += 1
        rec.update({"measured": meas, "measured_phase": mph, "phases": res["phases"], "params": res["params"]})
        if a.measure_only:
            print("%-*s %12d %12s %8s  %-20s %s" % (w, name, meas, "-", "-", mph,
                                                   json.dumps({k: v["peak_bytes"] for k, v in res["phases"].items()})),
                  flush=True)
            out.append(rec)
            continue
        try:
            est, eph = estimate(cmd, c)
        except Exception as e:
            print("%-*s %12d ESTIMATE ERROR: %s" % (w, name, meas, e), flush=True)
            rec["error"] = "estimate: %s" % e
            out.append(rec)
            failed += 1
            continue
        err = 100.0 * (est - meas) / meas
        phase_ok = eph == mph
        rec.update({"estimated": est, "estimated_phase": eph, "error_pct": err, "phase_ok": phase_ok})
        errors.append(abs(err))
        note = "" if abs(err) <= MAX_LIMIT_PCT and phase_ok else (
            "PHASE WRONG" if not phase_ok else "OVER %.0f%%" % MAX_LIMIT_PCT)
        if not phase_ok:
            failed += 1
        print("%-*s %12d %12d %+8.2f  %-20s %s" % (w, name, meas, est, err, "%s/%s" % (mph, eph), note),
              flush=True)
        out.append(rec)
    elapsed = time.time() - t0
    rc = 1 if failed else 0
    if not a.measure_only:
        if errors:
            mean, mx = sum(errors) / len(errors), max(errors)
            print("gated: mean |error| = %.2f%%   max |error| = %.2f%%   (%d cases, %d failed; limits %.1f%% / "
                  "%.1f%% and the phase; %.1f s)" % (mean, mx, len(errors), failed, MEAN_LIMIT_PCT, MAX_LIMIT_PCT,
                                                     elapsed))
            if mean > MEAN_LIMIT_PCT or mx > MAX_LIMIT_PCT:
                rc = 1
        else:
            print("no estimates (%d failed)" % failed)
            rc = 1
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cases": out, "elapsed_s": elapsed}, f, indent=1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
