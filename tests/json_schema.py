#!/usr/bin/env python3
"""The CLI's JSON against its JSON Schemas (schema/*.schema.json).

Run by tests/json_schema.sh with the test venv's Python (jsonschema,
pinned in requirements-test.txt).  Checks, in order:

1. both schema files are valid draft 2020-12 schemas;
2. every enum of a schema equals the name table the program takes its
   values from (tests/json_enums prints them; an enum is tied to its
   table by "x-vramplan-table", an object whose keys are a table's names
   by "x-vramplan-keys"), so a name added to a table fails here until
   the schema says it;
3. the CLI's documents validate: every library model without --gpus and
   with two plan shapes under the planner, and the cases below that reach
   the branches adding keys (fine-tuning, LoRA, quantization, offload,
   MoE, pipeline stages, the trainer, a DeepSpeed config, torch.compile,
   float8, FSDP's knobs, --load, a calibrated profile's error bars,
   --explain, the inverse queries, no-fit answers with the nearest miss
   and the fewest GPUs, compare with its deadline, budget and
   global-batch answers), and every JSON document of tests/golden/;
4. every key the schemas describe appears in at least one document
   checked (so the cases reach every branch that adds a key);
5. the test can fail: a key added anywhere, a key removed, a type
   changed and a wrong schema_version are each rejected.

Usage: json_schema.py VRAMPLAN JSON_ENUMS TOP_SRCDIR
"""
import concurrent.futures
import copy
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema

exe, enums_exe, top = sys.argv[1:4]
top = os.path.abspath(top)
if os.sep in exe:
    exe = os.path.abspath(exe)
failed = 0


def bad(name, why):
    global failed
    failed += 1
    print(f"FAIL {name}: {why}")


def load(name):
    with open(os.path.join(top, "schema", name)) as f:
        return json.load(f)


schemas = {"estimate": load("vramplan-estimate.schema.json"),
           "compare": load("vramplan-compare.schema.json")}
V = jsonschema.Draft202012Validator
for k, s in schemas.items():
    try:
        V.check_schema(s)
    except jsonschema.SchemaError as e:
        bad(f"schema-{k}", e.message)
validators = {k: V(s, format_checker=None) for k, s in schemas.items()}

# 2. Enums against the program's tables.
tables = json.loads(subprocess.run([enums_exe], check=True,
                                   capture_output=True, text=True).stdout)


def walk_schema(node, fn, path="#"):
    if isinstance(node, dict):
        fn(node, path)
        for k, v in node.items():
            walk_schema(v, fn, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            walk_schema(v, fn, f"{path}/{i}")


def check_enums(kind):
    def fn(node, path):
        if "enum" in node:
            t = node.get("x-vramplan-table")
            if t is None:
                return      # a closed list of the JSON's own (price_covers)
            if t not in tables:
                bad(f"enum-{kind}", f"{path}: no table {t!r}")
            elif node["enum"] != tables[t]:
                bad(f"enum-{kind}", f"{path}: {node['enum']} is not the "
                    f"program's {t} table {tables[t]}")
        if "x-vramplan-keys" in node:
            t = node["x-vramplan-keys"]
            if sorted(node["properties"]) != sorted(tables[t]):
                bad(f"keys-{kind}", f"{path}: {sorted(node['properties'])}"
                    f" are not the program's {t} table {tables[t]}")
    walk_schema(schemas[kind], fn)


for k in schemas:
    check_enums(k)
if not failed:
    print("ok enums (every enum is its program table)")

# 3. The CLI's documents.
models = subprocess.run([exe, "models"], capture_output=True, text=True,
                        check=True).stdout.split("\n")
names = []
for line in models:
    w = line.split()
    if w and os.path.exists(os.path.join(top, "models", w[0] + ".yaml")):
        names.append(w[0])
if len(names) < 20:
    bad("models", f"only {len(names)} library models found in "
        f"'vramplan models': {names}")

DS = os.path.join(top, "tests/data/deepspeed/zero3-offload-auto.json")
# A calibrated profile (for the error bars), fitted from the synthetic
# H200 measurements of tests/data/calib (whose model paths are relative to
# the source tree) and stored in a directory of ours.
tmp = tempfile.mkdtemp(prefix="vramplan-json-schema.")
PROFILE = os.path.join(tmp, "h200.yaml")
subprocess.run([exe, "calibrate", "--measurements",
                os.path.join(top, "tests/data/calib/h200-synthetic-measurements.yaml"),
                "--probe", os.path.join(top, "tests/data/calib/h200-probe-example.yaml"),
                "--out", PROFILE], check=True, capture_output=True,
               cwd=top, env=dict(os.environ, XDG_DATA_HOME=tmp))
cases = []
for m in names:
    cases.append([m])
    cases.append([m, "--gpus", "8xH100"])
    cases.append([m, "--gpus", "1xA100", "--no-search"])
cases += [
    # The planner's answers: alternatives, savings, inverse queries.
    ["llama-3-8b", "--gpus", "2xA100", "--plans", "8"],
    ["llama-3-8b", "--gpus", "1xH100", "--max-seq", "--max-micro-batch"],
    ["llama-3.1-70b", "--gpus", "8xH100", "--min-gpus"],
    # Nothing fits: the nearest miss and the fewest GPUs.
    ["llama-3.1-405b", "--gpus", "1xRTX4090"],
    ["llama-3.1-405b", "--gpus", "2xA100", "--no-search"],
    # Pipeline stages.
    ["llama-3.1-70b", "--gpus", "16xH100", "--pp", "4", "--tp", "4",
     "--zero", "1", "--recompute", "full", "--grad-accum", "16"],
    ["llama-3-8b", "--gpus", "8xH100", "--pp", "4", "--vpp", "2",
     "--grad-accum", "8", "--no-search"],
    # MoE with expert parallelism.
    ["mixtral-8x7b", "--gpus", "16xH100", "--ep", "8", "--zero", "1"],
    ["qwen3-30b-a3b", "--gpus", "8xH100", "--ep", "8"],
    # Fine-tuning: LoRA, QLoRA with either library, the load phase.
    ["llama-2-7b", "--gpus", "1xRTX4090", "--lora", "64", "--quant", "nf4",
     "--seq", "2048", "--optimizer", "paged-adamw-8bit"],
    ["llama-2-7b", "--gpus", "1xA100", "--lora", "16", "--quant", "nf4",
     "--lora-targets", "all-linear", "--quant-lib", "torchao",
     "--trainer", "torchtune", "--load", "torchtune-0.1", "--no-search"],
    ["llama-3-8b", "--gpus", "8xH100", "--lora", "8", "--fsdp", "full",
     "--framework", "fsdp1", "--fsdp-lora-wrap", "block",
     "--fsdp-prefetch", "post"],
    ["llama-3-8b", "--gpus", "8xH100", "--fsdp", "full", "--framework",
     "fsdp1", "--fsdp-orig-params", "no", "--fsdp-prefetch", "none"],
    ["llama-3-8b", "--gpus", "8xH100", "--fsdp", "full", "--framework",
     "fsdp2", "--reshard-after-forward", "no", "--no-search"],
    # Offload and host RAM.
    ["llama-3-8b", "--gpus", "8xH100", "--zero", "3", "--offload",
     "optimizer", "--host-mem", "64", "--no-search", "--recompute", "full"],
    ["llama-3-8b", "--gpus", "4xH100", "--zero", "3", "--offload",
     "optimizer+params", "--offload-nvme", "--no-search"],
    ["llama-3-8b", "--zero", "3", "--offload", "optimizer", "--host-mem",
     "64", "--recompute", "full"],
    ["llama-3-8b", "--gpus", "1xH100", "--activation-offload",
     "--recompute", "full", "--no-search"],
    # Trainers, a DeepSpeed config, compile, float8, async TP.
    ["llama-3-8b", "--gpus", "8xH100", "--trainer", "hf"],
    ["llama-3-8b", "--gpus", "1xH100", "--trainer", "torchtune",
     "--optimizer", "adam", "--recompute", "none", "--lora", "8"],
    ["llama-3-8b", "--gpus", "8xH100", "--deepspeed-config", DS],
    ["llama-3-8b", "--gpus", "8xH100", "--trainer", "torchtitan",
     "--compile", "--float8", "tensorwise", "--fsdp", "full",
     "--float8-all-gather", "--no-search"],
    ["llama-3-8b", "--gpus", "8xH100", "--tp", "8", "--sp", "--async-tp",
     "--compile", "--no-search"],
    ["llama-3-8b", "--gpus", "1xH100", "--compile", "--compile-loss",
     "--recompute", "full", "--no-search"],
    ["llama-3-8b", "--gpus", "1xH100", "--precision", "fp8",
     "--no-search"],
    ["llama-3-8b", "--gpus", "1xH100", "--loss", "chunked", "--no-search"],
    # The CPU, an allocator configuration, the fp16 fallback, no time.
    ["gpt2", "--device", "cpu", "--seq", "256"],
    ["gpt2", "--gpus", "1xH100", "--alloc-conf",
     "expandable_segments:True", "--no-search"],
    ["gpt2", "--gpus", "1xV100"],
    ["gpt2", "--gpus", "1xV100", "--precision", "bf16-mixed",
     "--no-search"],
    # Encoder-decoders, images, --explain with a framework's buffers.
    ["t5-base", "--gpus", "1xA100", "--target-seq", "128"],
    ["resnet50", "--gpus", "1xA100", "--micro-batch", "32"],
    ["llama-3-8b", "--gpus", "8xH100", "--explain", "--no-search",
     "--zero", "0"],
    ["gpt2", "--explain"],
    # A calibrated profile: each level's error bar.
    ["gpt2", "--gpus", "1xH200", "--profile", PROFILE],
]
cmp_cases = [
    ["compare", "gpt2", "--tokens", "1e9"],
    ["compare", "gpt2", "--tokens", "1e9", "--precision", "bf16-mixed"],
    ["compare", "llama-3.1-70b", "--tokens", "1e11", "--deadline", "48"],
    ["compare", "llama-3-8b", "--tokens", "1e10", "--budget", "500",
     "--global-batch", "64"],
    ["compare", "llama-3.1-405b", "--tokens", "1e12", "--deadline", "1"],
    ["compare", "gpt2", "--tokens", "1e9", "--price", "H100=1.00",
     "--explain"],
]


def run(args):
    p = subprocess.run([exe] + args + ["--json"], capture_output=True,
                       text=True)
    return args, p


docs = []          # (name, kind, document)
with concurrent.futures.ThreadPoolExecutor(2) as pool:
    for args, p in pool.map(run, cases + cmp_cases):
        name = " ".join(a if a != DS and a != PROFILE else
                        os.path.basename(a) for a in args)
        if p.returncode not in (0, 1):
            bad(name, f"exit {p.returncode}: {p.stderr.strip()[-400:]}")
            continue
        try:
            d = json.loads(p.stdout)
        except ValueError as e:
            bad(name, f"not JSON ({e}): {p.stdout[:200]}")
            continue
        docs.append((name, "compare" if args[0] == "compare" else
                     "estimate", d))
ncli = len(docs)
for f in sorted(glob.glob(os.path.join(top, "tests/golden/*.out"))):
    with open(f, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    if not text.startswith("{"):
        continue
    try:
        d = json.loads(text)
    except ValueError:
        continue
    # Only vramplan's own documents (other goldens may print JSON that
    # is not, such as an exported launch config).
    if not isinstance(d, dict) or not ("cards" in d or "per_gpu" in d):
        continue
    docs.append(("golden/" + os.path.basename(f),
                 "compare" if "cards" in d else "estimate", d))


def fail_text(errs):
    e = errs[0]
    where = "/".join(str(x) for x in e.absolute_path) or "(top)"
    return f"{where}: {e.message[:300]}" + (f" (+{len(errs) - 1} more)"
                                            if len(errs) > 1 else "")


nok = 0
for name, kind, d in docs:
    errs = list(validators[kind].iter_errors(d))
    if errs:
        bad(name, fail_text(errs))
    elif next(iter(d)) != "schema_version":
        bad(name, f"the first key is {next(iter(d))!r}, not schema_version")
    else:
        nok += 1
print(f"ok {nok} of {len(docs)} documents validate ({ncli} from the CLI, "
      f"{len(docs) - ncli} golden)")

# 4. Every key of the schemas is reached by some document.


def schema_paths(schema, node, path, out, seen_refs=()):
    if "$ref" in node:
        ref = node["$ref"]
        if ref in seen_refs:
            return
        target = schema
        for part in ref[2:].split("/"):
            target = target[part]
        schema_paths(schema, target, path, out, seen_refs + (ref,))
    for k, v in node.get("properties", {}).items():
        out.add(path + "/" + k)
        schema_paths(schema, v, path + "/" + k, out, seen_refs)
    if "items" in node:
        schema_paths(schema, node["items"], path + "/[]", out, seen_refs)
    for comb in ("oneOf", "anyOf"):
        for sub in node.get(comb, []):
            schema_paths(schema, sub, path, out, seen_refs)


def doc_paths(d, path, out):
    if isinstance(d, dict):
        for k, v in d.items():
            out.add(path + "/" + k)
            doc_paths(v, path + "/" + k, out)
    elif isinstance(d, list):
        for v in d:
            doc_paths(v, path + "/[]", out)


for kind, s in schemas.items():
    want, got = set(), set()
    schema_paths(s, s, "", want)
    for _, k, d in docs:
        if k == kind:
            doc_paths(d, "", got)
    missing = sorted(want - got)
    if missing:
        bad(f"coverage-{kind}", "no document has " + ", ".join(missing))
    else:
        print(f"ok coverage-{kind} (all {len(want)} keys seen)")

# 5. The test can fail.
est = next(d for n, k, d in docs if k == "estimate" and "stages" in d)
cmpd = next(d for n, k, d in docs if k == "compare")


def must_fail(name, kind, d):
    if validators[kind].is_valid(d):
        bad(f"negative-{name}", "the schema accepted it")


for kind, base in (("estimate", est), ("compare", cmpd)):
    # A key added to every object of the document, one at a time.
    objs = []

    def collect(x, trail):
        if isinstance(x, dict):
            objs.append(trail)
            for k, v in x.items():
                collect(v, trail + [k])
        elif isinstance(x, list) and x:
            collect(x[0], trail + [0])
    collect(base, [])
    for trail in objs:
        d = copy.deepcopy(base)
        o = d
        for t in trail:
            o = o[t]
        o["new_key"] = 1
        must_fail(f"{kind}-added-key-at-/{'/'.join(map(str, trail))}",
                  kind, d)
    d = copy.deepcopy(base)
    d["schema_version"] = "1.1"
    must_fail(f"{kind}-version", kind, d)
    d = copy.deepcopy(base)
    del d["model"]
    must_fail(f"{kind}-removed-key", kind, d)
    print(f"ok negative-{kind} ({len(objs)} objects refuse a new key)")
d = copy.deepcopy(est)
d["per_gpu"]["device_peak_bytes"] = "80 GiB"
must_fail("estimate-type", "estimate", d)
d = copy.deepcopy(est)
d["plan"]["recompute"] = "everything"
must_fail("estimate-enum", "estimate", d)
d = copy.deepcopy(cmpd)
d["cards"][0]["hours"] = "soon"
must_fail("compare-type", "compare", d)

shutil.rmtree(tmp, ignore_errors=True)
print(f"{'FAIL' if failed else 'ok'} json_schema: {failed} failures")
sys.exit(1 if failed else 0)
