#!/usr/bin/env python3
"""invariant.py -- random plans through the CLI (issue 17).

Seeded: the same command lines every run.  Each accepted estimate must
satisfy what every answer of the program must:
  - allocated <= reserved <= device peak, every byte figure an integer
    >= 0, every rate finite and >= 0 (or null);
  - trainable <= total parameters, active <= total;
  - `fits`, the host-RAM verdict and the exit status agree (0 when it
    fits, 1 when it does not; the host verdict is read from
    host_bytes_per_node against --host-mem until the JSON carries
    `host_fits`, which is then checked against the same);
  - the text, JSON and CSV report the same numbers (CSV to the byte, the
    text to its printed precision);
  - the fewest GPUs that fit (--min-gpus) fit when asked for directly, and
    do not depend on the count the estimate started from;
  - every run ends within the bound (a safety net: BOUND_S seconds of
    CPU, four times that of wall clock).
Refused command lines (exit 2 or 3) must say why on stderr and print no
report; they are counted, and at least a third of the runs must be
accepted, so the random plans keep testing something.

Env: VRAMPLAN, VRAMPLAN_DATA, TOP_SRCDIR; INVARIANT_RUNS (default 500)
and INVARIANT_SEED (default 17) to widen or vary the sample.  stdlib only.
"""
import csv
import io
import json
import math
import os
import random
import re
import resource
import subprocess
import sys
import tempfile

EXE = os.environ.get("VRAMPLAN", "./src/vramplan")
TOP = os.environ.get("TOP_SRCDIR", ".")
DATA = os.environ.get("VRAMPLAN_DATA", os.path.join(TOP, "models"))
RUNS = int(os.environ.get("INVARIANT_RUNS", "500"))
SEED = int(os.environ.get("INVARIANT_SEED", "17"))
# A safety net, not the speed target (1 s on this machine; ASan and a
# shared machine are several times slower).
BOUND_S = float(os.environ.get("INVARIANT_BOUND_S", "30"))

CARDS = ["H100", "A100-40G-SXM", "RTX4090", "RTX3060", "T4", "MI300X",
         "B200", "L4"]
COUNTS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 64, 96, 256]
PRECISIONS = ["fp32", "fp16-mixed", "bf16-mixed", "bf16", "bf16-master"]
OPTIMIZERS = ["sgd", "adamw", "adamw-8bit", "adafactor", "lion",
              "paged-adamw"]
RECOMPUTE = ["none", "full", "op", "selective"]
SEQS = [128, 512, 1024, 2048, 4096, 8192]

# CSV rows -> JSON per_gpu keys.
CSV_KEYS = {
    "weights": "weights_bytes",
    "master weights": "master_weights_bytes",
    "gradients": "gradients_bytes",
    "optimizer states": "optimizer_bytes",
    "autocast weight cache": "autocast_cache_bytes",
    "activations": "activations_bytes",
    "logits and loss": "logits_bytes",
    "transient buffers": "transient_bytes",
    "allocated peak": "allocated_peak_bytes",
    "allocator rounding + fragmentation": "fragmentation_bytes",
    "reserved peak": "reserved_peak_bytes",
    "CUDA context + kernels": "context_bytes",
    "cuBLAS workspaces": "workspace_bytes",
    "NCCL buffers": "nccl_bytes",
    "device peak": "device_peak_bytes",
    "capacity": "capacity_bytes",
}
# Text lines -> JSON per_gpu keys (the three peaks and the capacity).
TEXT_KEYS = {
    "allocated peak": "allocated_peak_bytes",
    "reserved peak": "reserved_peak_bytes",
    "device peak": "device_peak_bytes",
    "capacity (usable)": "capacity_bytes",
    "weights": "weights_bytes",
    "gradients": "gradients_bytes",
    "optimizer states": "optimizer_bytes",
    "activations": "activations_bytes",
}
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
         "TiB": 1 << 40, "PiB": 1 << 50, "EiB": 1 << 60}
SIZE = re.compile(r"^\s+(.+?)\s{2,}([0-9.]+) (B|KiB|MiB|GiB|TiB|PiB|EiB)\b")

failures = []
stats = {"runs": 0, "accepted": 0, "refused": 0, "fit": 0, "nofit": 0,
         "text": 0, "csv": 0, "min_gpus": 0, "slowest": 0.0,
         "slowest_cmd": ""}


def fail(cmd, what):
    failures.append("%s\n    %s" % (" ".join(cmd), what))


def run(args):
    cmd = [EXE] + args
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=BOUND_S * 4)
    except subprocess.TimeoutExpired:
        fail(cmd, "did not end within %.0f s" % (BOUND_S * 4))
        return None, cmd, 0.0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds, not wall: the machine may be shared.
    dt = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    stats["runs"] += 1
    if dt > stats["slowest"]:
        stats["slowest"], stats["slowest_cmd"] = dt, " ".join(args)
    if dt > BOUND_S:
        fail(cmd, "took %.1f s of CPU (bound %.0f s)" % (dt, BOUND_S))
    return p, cmd, dt


def gen_model(rng, d, i):
    """A random decoder in the own schema: sizes the real ones span."""
    heads = rng.choice([4, 8, 12, 16, 32, 64])
    head_dim = rng.choice([32, 64, 128])
    kv = rng.choice([h for h in (1, 2, 4, 8, heads) if heads % h == 0])
    hidden = heads * head_dim
    gated = rng.random() < 0.6
    text = "\n".join([
        "name: Gen-%d" % i,
        "architecture: decoder",
        "layers: %d" % rng.choice([1, 2, 3, 5, 12, 24, 61, 126]),
        "hidden: %d" % hidden,
        "heads: %d" % heads,
        "kv_heads: %d" % kv,
        "ffn: %d" % (hidden * rng.choice([2, 3, 4]) + rng.choice([0, 64])),
        "activation: %s" % ("swiglu" if gated else "gelu"),
        "norm: %s" % ("rmsnorm" if gated else "layernorm"),
        "bias: %s" % ("false" if gated else "true"),
        "vocab: %d" % rng.choice([256, 32000, 50257, 128256, 262144]),
        "tie_embeddings: %s" % rng.choice(["true", "false"]),
        "position: rope",
        "max_seq: 131072",
        "dropout: 0.0",
        "implementation: hf",
        "training:",
        "  micro_batch: 1",
        "  seq: 2048",
        "  precision: bf16-mixed",
        "  optimizer: adamw",
        "",
    ])
    path = os.path.join(d, "gen-%d.yaml" % i)
    with open(path, "w") as f:
        f.write(text)
    return path


def random_args(rng, models):
    a = [rng.choice(models)]
    gpus = None
    if rng.random() < 0.85:
        gpus = (rng.choice(COUNTS), rng.choice(CARDS))
        a += ["--gpus", "%dx%s" % gpus]
    if rng.random() < 0.5:
        a += ["--seq", str(rng.choice(SEQS))]
    if rng.random() < 0.4:
        a += ["--micro-batch", str(rng.choice([1, 2, 4, 8]))]
    if rng.random() < 0.3:
        a += ["--precision", rng.choice(PRECISIONS)]
    if rng.random() < 0.3:
        a += ["--optimizer", rng.choice(OPTIMIZERS)]
    if rng.random() < 0.3:
        a += ["--recompute", rng.choice(RECOMPUTE)]
    if rng.random() < 0.2:
        a += ["--zero", str(rng.randint(0, 3))]
    if rng.random() < 0.15:
        a += ["--tp", str(rng.choice([1, 2, 4, 8]))]
    if rng.random() < 0.15:
        a += ["--pp", str(rng.choice([1, 2, 4]))]
    if rng.random() < 0.1:
        a += ["--offload", "optimizer"]
    if rng.random() < 0.15:
        a += ["--host-mem", str(rng.choice([8, 64, 512]))]
    if rng.random() < 0.1:
        a += ["--grad-accum", str(rng.choice([1, 4, 16]))]
    if gpus and rng.random() < 0.05:
        a += ["--min-gpus"]
    return a, gpus


def to_bytes(v, unit):
    return float(v) * UNITS[unit]


def check_numbers(cmd, j):
    pg = j.get("per_gpu")
    if not isinstance(pg, dict):
        fail(cmd, "no per_gpu object")
        return False
    ok = True

    def walk(path, v):
        nonlocal ok
        if isinstance(v, dict):
            for k, w in v.items():
                if k.endswith("_bytes") and not isinstance(w, dict):
                    if w is None and k == "capacity_bytes":
                        continue
                    if isinstance(w, bool) or not isinstance(w, int) or w < 0:
                        fail(cmd, "%s.%s = %r: not a byte count" %
                             (path, k, w))
                        ok = False
                else:
                    walk(path + "." + k, w)
        elif isinstance(v, list):
            for i, w in enumerate(v):
                walk("%s[%d]" % (path, i), w)
        elif isinstance(v, float) and not math.isfinite(v):
            fail(cmd, "%s = %r: not finite" % (path, v))
            ok = False
    walk("", j)
    for k, w in pg.get("phase_peak_bytes", {}).items():
        if not isinstance(w, int) or w < 0:
            fail(cmd, "phase_peak_bytes.%s = %r" % (k, w))
            ok = False
    a, r, d = (pg.get("allocated_peak_bytes"), pg.get("reserved_peak_bytes"),
               pg.get("device_peak_bytes"))
    if not (isinstance(a, int) and isinstance(r, int) and isinstance(d, int)
            and a <= r <= d):
        fail(cmd, "allocated %r <= reserved %r <= device %r fails" % (a, r, d))
        ok = False
    for st in j.get("stages", []):
        if not st["allocated_peak_bytes"] <= st["device_peak_bytes"]:
            fail(cmd, "stage %d: allocated over device" % st["stage"])
            ok = False
    m = j["model"]
    if not (0 <= m["trainable_params"] <= m["params"]):
        fail(cmd, "trainable %r > total %r" % (m["trainable_params"],
                                                m["params"]))
        ok = False
    if not (0 <= m.get("active_params", 0) <= m["params"]):
        fail(cmd, "active params over total")
        ok = False
    t = j.get("time")
    if t:
        for k in ("tokens_per_second", "step_seconds"):
            v = t.get(k)
            if v is not None and not (isinstance(v, (int, float)) and
                                      math.isfinite(v) and v >= 0):
                fail(cmd, "time.%s = %r" % (k, v))
                ok = False
    return ok


def host_short(args, j):
    """The host verdict: host_fits when the JSON has it, else the bytes
    per node against --host-mem (GiB), as the text's DOES NOT FIT line."""
    if "host_fits" in j:
        return j["host_fits"] is False
    if "--host-mem" not in args:
        return False
    cap = int(args[args.index("--host-mem") + 1]) << 30
    return j["per_gpu"].get("host_bytes_per_node", 0) > cap


def check_verdict(cmd, args, p, j):
    fits = j.get("fits")
    short = host_short(args, j)
    if fits is None:
        if p.returncode != 0:
            fail(cmd, "no verdict (no --gpus) but exit status %d" %
                 p.returncode)
        return
    if "host_fits" in j:
        # The safe writes' JSON: fits is false when the host is short.
        want = 0 if fits else 1
        if fits and short:
            fail(cmd, "fits true while host_fits is false")
    else:
        want = 0 if fits and not short else 1
    if p.returncode != want:
        fail(cmd, "fits %r, host short %r, exit status %d (want %d)" %
             (fits, short, p.returncode, want))
    stats["fit" if want == 0 else "nofit"] += 1


def check_csv(cmd, args, j):
    p, c, _ = run(args + ["--csv"])
    if p is None:
        return
    stats["csv"] += 1
    pg = j["per_gpu"]
    for row in csv.reader(io.StringIO(p.stdout)):
        if not row or row[0] == "term":
            continue
        key = CSV_KEYS.get(row[0])
        if key is not None and row[1] != "":
            if pg.get(key) is None or int(row[1]) != pg[key]:
                fail(c, "CSV %s = %s, JSON %s = %r" % (row[0], row[1], key,
                                                       pg.get(key)))
        elif row[0] == "fits" and j.get("fits") is not None:
            if (row[1] == "1") != j["fits"]:
                fail(c, "CSV fits %s, JSON fits %r" % (row[1], j["fits"]))


def check_text(cmd, args, j):
    p, c, _ = run(args)
    if p is None:
        return
    stats["text"] += 1
    pg = j["per_gpu"]
    seen = set()
    for line in p.stdout.splitlines():
        mm = SIZE.match(line)
        if not mm:
            continue
        name = mm.group(1).strip()
        key = TEXT_KEYS.get(name)
        if key is None or name in seen:
            continue
        seen.add(name)
        shown = to_bytes(mm.group(2), mm.group(3))
        want = pg.get(key)
        digits = mm.group(2).split(".")
        step = UNITS[mm.group(3)] * (10 ** -len(digits[1]) if len(digits) >
                                     1 else 1)
        if want is None or abs(shown - want) > step:
            fail(c, "text %s %s %s, JSON %s = %r" % (name, mm.group(2),
                                                     mm.group(3), key, want))
    for name in ("allocated peak", "reserved peak", "device peak"):
        if name not in seen:
            fail(c, "text has no '%s' line" % name)
    if j.get("fits") is not None:
        says_fit = re.search(r"^(FITS|TIGHT: fits)", p.stdout, re.M)
        if bool(says_fit) != j["fits"]:
            fail(c, "text verdict %r, JSON fits %r" % (
                says_fit.group(0) if says_fit else None, j["fits"]))
        if host_short(args, j) != ("DOES NOT FIT in host RAM" in p.stdout):
            fail(c, "text host verdict disagrees with the JSON")


def check_min_gpus(cmd, args, gpus, j):
    n = j.get("min_gpus")
    if n is None:
        fail(cmd, "--min-gpus without min_gpus in the JSON")
        return
    stats["min_gpus"] += 1
    rest = args[:]
    i = rest.index("--gpus")
    del rest[i:i + 2]
    rest.remove("--min-gpus")
    rest.remove("--json")
    # The same answer from another start.
    other = 1 if gpus[0] != 1 else 8
    p, c, _ = run(rest + ["--gpus", "%dx%s" % (other, gpus[1]), "--min-gpus",
                          "--json"])
    if p is not None and p.returncode in (0, 1):
        m = json.loads(p.stdout).get("min_gpus")
        if m != n:
            fail(c, "fewest GPUs %r from %d, %r from %d" % (m, other, n,
                                                            gpus[0]))
    if n == 0:
        return
    # ... and it fits when asked for directly.
    p, c, _ = run(rest + ["--gpus", "%dx%s" % (n, gpus[1]), "--json"])
    if p is not None and p.returncode != 0:
        fail(c, "the fewest GPUs that fit (%d) do not fit: exit %d" %
             (n, p.returncode))


def main():
    rng = random.Random(SEED)
    lib = sorted(f[:-5] for f in os.listdir(DATA)
                 if f.endswith(".yaml") and f != "gpus.yaml")
    with tempfile.TemporaryDirectory() as d:
        gen = [gen_model(rng, d, i) for i in range(24)]
        models = lib + gen
        for k in range(RUNS):
            args, gpus = random_args(rng, models)
            args.append("--json")
            p, cmd, _ = run(args)
            if p is None:
                continue
            if p.returncode in (2, 3):
                stats["refused"] += 1
                if p.stdout.strip():
                    fail(cmd, "refused (exit %d) but printed a report" %
                         p.returncode)
                if not p.stderr.strip():
                    fail(cmd, "refused (exit %d) without a message" %
                         p.returncode)
                continue
            if p.returncode not in (0, 1):
                fail(cmd, "exit status %d: %s" % (p.returncode,
                                                   p.stderr.strip()[:200]))
                continue
            try:
                j = json.loads(p.stdout)
            except ValueError as e:
                fail(cmd, "JSON does not parse: %s" % e)
                continue
            stats["accepted"] += 1
            if not check_numbers(cmd, j):
                continue
            check_verdict(cmd, args, p, j)
            base = args[:-1]
            if k % 4 == 0:
                check_csv(cmd, base, j)
                check_text(cmd, base, j)
            if "--min-gpus" in args:
                check_min_gpus(cmd, args, gpus, j)
    print("invariant: seed %d, %d runs (%d random plans: %d accepted, %d "
          "refused; %d fit, %d do not), %d text and %d CSV cross-checks, "
          "%d fewest-GPU checks; slowest %.2f s of CPU (%s)" % (
              SEED, stats["runs"], RUNS, stats["accepted"], stats["refused"],
              stats["fit"], stats["nofit"], stats["text"], stats["csv"],
              stats["min_gpus"], stats["slowest"], stats["slowest_cmd"]))
    if stats["accepted"] * 3 < RUNS:
        fail(["(all)"], "only %d of %d random plans accepted" %
             (stats["accepted"], RUNS))
    for f in failures[:40]:
        print("FAIL " + f)
    if len(failures) > 40:
        print("... and %d more" % (len(failures) - 40))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
