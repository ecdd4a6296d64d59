#!/usr/bin/env python3
"""export_schemas.py — extract what vramplan export's targets accept, from
their sources at pinned commits, into tests/data/export/schemas.json
(tests/export_check.py reads it where the package itself cannot be
installed in the test environment).

    python3 tests/export_schemas.py TORCHTITAN_GIT TORCHTUNE_GIT MEGATRON_GIT \
        > tests/data/export/schemas.json

Each argument is a git directory of the repository (a clone or a bare
mirror); the tags below are read with `git show`, never the work tree.

- torchtitan v0.2.2: the JobConfig dataclasses of
  torchtitan/config/job_config.py (TOML tables and their fields, each
  field's type and, for Literal types, its values).
- torchtune v0.6.1: the keys of the llama3_1/8B recipe configs and the
  keys the recipes read from cfg (recipes/*.py), per recipe.
- Megatron-LM core_v0.15.0: the flags of megatron/training/arguments.py
  (argparse add_argument calls: whether a flag takes a value, its int
  type, its literal choices) and the AttnBackend enum of
  megatron/core/transformer/enums.py (--attention-backend's choices).
"""
import ast
import json
import re
import subprocess
import sys

import yaml

TITAN_TAG = "v0.2.2"
TUNE_TAG = "v0.6.1"
MEGATRON_TAG = "core_v0.15.0"

TUNE_RECIPES = {
    "full_finetune_distributed": "llama3_1/8B_full",
    "full_finetune_single_device": "llama3_1/8B_full_single_device",
    "lora_finetune_distributed": "llama3_1/8B_lora",
    "lora_finetune_single_device": "llama3_1/8B_lora_single_device",
}


def show(git, tag, path):
    return subprocess.run(["git", "--git-dir", git, "show", f"{tag}:{path}"],
                          check=True, capture_output=True, text=True).stdout


def commit(git, tag):
    return subprocess.run(["git", "--git-dir", git, "rev-parse",
                           tag + "^{commit}"], check=True,
                          capture_output=True, text=True).stdout.strip()


def literal_values(node):
    """The values of a Literal[...] annotation (or X | None of one)."""
    if isinstance(node, ast.BinOp):
        return literal_values(node.left) or literal_values(node.right)
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == "Literal"):
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) \
            else [node.slice]
        return [e.value for e in elts if isinstance(e, ast.Constant)]
    return None


def titan(git):
    src = show(git, TITAN_TAG, "torchtitan/config/job_config.py")
    tree = ast.parse(src)
    classes = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        fields = {}
        for st in node.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target,
                                                            ast.Name):
                f = {"type": ast.unparse(st.annotation)}
                lv = literal_values(st.annotation)
                if lv:
                    f["choices"] = lv
                fields[st.target.id] = f
        classes[node.name] = fields
    sections = {}

    def walk(cls, path):
        leaf = {}
        for name, f in classes[cls].items():
            if f["type"] in classes:
                walk(f["type"], path + [name])
            else:
                leaf[name] = f
        if path:
            sections[".".join(path)] = leaf

    walk("JobConfig", [])
    return {"source": f"pytorch/torchtitan {TITAN_TAG} "
            f"({commit(git, TITAN_TAG)}) torchtitan/config/job_config.py",
            "sections": sections}


def flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = prefix + str(k)
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        out[key] = type(v).__name__
    return out


def tune(git):
    recipes = {}
    for recipe, cfg in TUNE_RECIPES.items():
        conf = yaml.safe_load(show(git, TUNE_TAG, f"recipes/configs/{cfg}"
                                   ".yaml"))
        src = show(git, TUNE_TAG, f"recipes/{recipe}.py")
        reads = sorted(set(re.findall(r'cfg\.get\(\s*"([a-z_]+)"', src)) |
                       set(re.findall(r'cfg\.([a-z_]+)\b', src)) - {"get"})
        recipes[recipe] = {"config": cfg, "keys": flatten(conf),
                           "reads": reads}
    return {"source": f"pytorch/torchtune {TUNE_TAG} ({commit(git, TUNE_TAG)})"
            " recipes/*.py and recipes/configs/llama3_1/8B_*.yaml",
            "recipes": recipes}


def megatron(git):
    src = show(git, MEGATRON_TAG, "megatron/training/arguments.py")
    flags = {}
    for node in ast.walk(ast.parse(src)):
        if not (isinstance(node, ast.Call) and isinstance(node.func,
                ast.Attribute) and node.func.attr == "add_argument"):
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant)
                 and isinstance(a.value, str) and a.value.startswith("--")]
        kw = {k.arg: k.value for k in node.keywords}
        f = {"value": True}
        act = kw.get("action")
        if isinstance(act, ast.Constant) and act.value in (
                "store_true", "store_false"):
            f["value"] = False
        if isinstance(kw.get("type"), ast.Name) and kw["type"].id == "int":
            f["type"] = "int"
        ch = kw.get("choices")
        if isinstance(ch, (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) for e in ch.elts):
            f["choices"] = [e.value for e in ch.elts]
        for n in names:
            flags[n] = f
    enums = show(git, MEGATRON_TAG, "megatron/core/transformer/enums.py")
    backends = [t.id for node in ast.parse(enums).body
                if isinstance(node, ast.ClassDef) and node.name == "AttnBackend"
                for st in node.body if isinstance(st, ast.Assign)
                for t in st.targets if isinstance(t, ast.Name)]
    flags["--attention-backend"]["choices"] = backends
    return {"source": f"NVIDIA/Megatron-LM {MEGATRON_TAG} "
            f"({commit(git, MEGATRON_TAG)}) megatron/training/arguments.py",
            "flags": flags}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    out = {"torchtitan": titan(sys.argv[1]), "torchtune": tune(sys.argv[2]),
           "megatron": megatron(sys.argv[3])}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
