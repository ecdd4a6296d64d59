#!/usr/bin/env python3
"""export_check.py FORMAT FILE [--dp N] | --list FILE — load a file `vramplan export
FORMAT` wrote with the library that will read it (tests/export.sh).

- deepspeed: DeepSpeed's DeepSpeedConfig on the dict (DS_ACCELERATOR=cpu,
  rank 0 without a process group, the data-parallel size --dp through an
  mpu, so DeepSpeed's own train_batch_size check runs at the job's size), and the
  values it parsed equal the file's.
- accelerate: accelerate's load_config_from_file (unknown keys are its
  errors); FSDP's keys through FullyShardedDataParallelPlugin, set as
  `accelerate launch` sets them (FSDP_* variables); DeepSpeed's file
  through DeepSpeedPlugin(hf_ds_config=...).
- hf: transformers' TrainingArguments(**kwargs) (bf16 allowed without a
  GPU: the check is of the arguments, not of this machine).
- torchtitan: torchtitan 0.2.2's ConfigManager (tyro over JobConfig),
  installed without its trainer's dependencies; and the schema below.
- torchtune: tune run's config loading of torchtune 0.6.1 (installed
  without its recipes' dependencies) over the llama3_1/8B config of the
  recipe the file names, each key read back as the file says; and the
  schema below (keys the recipe reads).
- megatron: Megatron-LM is not a package, so the file is checked against
  the flags of its source at a pinned commit, as torchtitan's and
  torchtune's are too: tests/data/export/schemas.json, made by
  tests/export_schemas.py (the commits are in it).

Exit status 0 when the file loads, 1 when it does not (with why), 77 when
a package is missing (tests/need.sh decides what that means).
"""
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def need(mod):
    try:
        return __import__(mod)
    except ImportError as e:
        print(f"missing Python package {mod}: {e}")
        sys.exit(77)


def fail(why):
    print(f"FAIL: {CURRENT[0]}: {why}")
    sys.exit(1)


CURRENT = [""]


def schemas():
    with open(os.path.join(HERE, "data", "export", "schemas.json")) as f:
        return json.load(f)


def one_rank_group():
    import torch.distributed as dist
    if not dist.is_initialized():
        fd, path = tempfile.mkstemp(prefix="vp-export-pg.")
        os.close(fd)
        os.unlink(path)
        dist.init_process_group("gloo", init_method=f"file://{path}",
                                rank=0, world_size=1)


def check_deepspeed(path, dp):
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    need("deepspeed")
    from deepspeed.runtime.config import DeepSpeedConfig
    with open(path) as f:
        d = json.load(f)
    # No process group: the rank is 0 and the data-parallel size the
    # job's, given through an mpu as Megatron-DeepSpeed gives it.
    import deepspeed.runtime.config as dsc
    dsc.dist.get_rank = lambda *a, **k: 0

    class Mpu:
        def get_data_parallel_world_size(self):
            return dp

    c = DeepSpeedConfig(d, mpu=Mpu())
    z = d["zero_optimization"]
    got = {
        "stage": int(c.zero_config.stage),
        "reduce_bucket_size": int(c.zero_config.reduce_bucket_size),
        "stage3_prefetch_bucket_size":
            int(c.zero_config.prefetch_bucket_size),
        "stage3_param_persistence_threshold":
            int(c.zero_config.param_persistence_threshold),
        "stage3_max_live_parameters": int(c.zero_config.max_live_parameters),
        "stage3_max_reuse_distance": int(c.zero_config.max_reuse_distance),
        "contiguous_gradients": bool(c.zero_config.contiguous_gradients),
        "overlap_comm": bool(c.zero_config.overlap_comm),
    }
    for k, v in got.items():
        if z[k] != v:
            fail(f"zero_optimization.{k}: file {z[k]}, DeepSpeed read {v}")
    off = c.zero_config.offload_optimizer
    dev = str(getattr(off.device, "value", off.device)) if off else "none"
    if dev != z["offload_optimizer"]["device"]:
        fail(f"offload_optimizer.device: DeepSpeed read {dev}")
    off = c.zero_config.offload_param
    dev = str(getattr(off.device, "value", off.device)) if off else "none"
    if dev != z["offload_param"]["device"]:
        fail(f"offload_param.device: DeepSpeed read {dev}")
    if c.bfloat16_config.enabled != d["bf16"]["enabled"] or \
            c.float16_config.enabled != d["fp16"]["enabled"]:
        fail("bf16/fp16 read differently")
    if c.train_micro_batch_size_per_gpu != \
            d["train_micro_batch_size_per_gpu"] or \
            c.gradient_accumulation_steps != d["gradient_accumulation_steps"] \
            or c.train_batch_size != d["train_batch_size"]:
        fail("batch sizes read differently")
    if "optimizer" in d:
        if c.optimizer_name != d["optimizer"]["type"].lower():
            fail(f"optimizer read as {c.optimizer_name}")
    elif c.optimizer_name is not None or not c.zero_allow_untested_optimizer:
        # A client optimizer (torch.optim, built by the script or the
        # Trainer): no optimizer section, and ZeRO must allow it.
        fail("client optimizer: DeepSpeed would build one, or refuse it")


# accelerate launch's fsdp_* keys as the variables it sets
# (accelerate/utils/launch.py, prepare_multi_gpu_env).
FSDP_ENV = {
    "fsdp_version": "FSDP_VERSION",
    "fsdp_sharding_strategy": "FSDP_SHARDING_STRATEGY",
    "fsdp_reshard_after_forward": "FSDP_RESHARD_AFTER_FORWARD",
    "fsdp_offload_params": "FSDP_OFFLOAD_PARAMS",
    "fsdp_auto_wrap_policy": "FSDP_AUTO_WRAP_POLICY",
    "fsdp_transformer_layer_cls_to_wrap": "FSDP_TRANSFORMER_CLS_TO_WRAP",
    "fsdp_backward_prefetch": "FSDP_BACKWARD_PREFETCH",
    "fsdp_forward_prefetch": "FSDP_FORWARD_PREFETCH",
    "fsdp_use_orig_params": "FSDP_USE_ORIG_PARAMS",
    "fsdp_activation_checkpointing": "FSDP_ACTIVATION_CHECKPOINTING",
}


def check_accelerate(path):
    need("accelerate")
    from accelerate.commands.config.config_args import load_config_from_file
    c = load_config_from_file(path)
    kind = str(c.distributed_type).split(".")[-1]
    if kind == "FSDP":
        from accelerate.utils import FullyShardedDataParallelPlugin
        for k, v in c.fsdp_config.items():
            if k not in FSDP_ENV:
                fail(f"fsdp_config.{k} is not a key accelerate launch reads")
            os.environ[FSDP_ENV[k]] = str(v).lower() if isinstance(v, bool) \
                else str(v)
        os.environ["ACCELERATE_USE_FSDP"] = "true"
        p = FullyShardedDataParallelPlugin()
        want = c.fsdp_config.get("fsdp_activation_checkpointing", False)
        if p.activation_checkpointing != want:
            fail("activation checkpointing read differently")
        off = p.cpu_offload
        # FSDP1's CPUOffload(offload_params=), FSDP2's CPUOffloadPolicy.
        off = getattr(off, "offload_params",
                      type(off).__name__ == "CPUOffloadPolicy")
        if off != c.fsdp_config["fsdp_offload_params"]:
            fail("CPU offload read differently")
    elif kind == "DEEPSPEED":
        from accelerate.utils import DeepSpeedPlugin
        ds = os.path.join(os.path.dirname(path),
                          c.deepspeed_config["deepspeed_config_file"])
        p = DeepSpeedPlugin(hf_ds_config=ds)
        with open(ds) as f:
            stage = json.load(f)["zero_optimization"]["stage"]
        if p.zero_stage != stage:
            fail(f"zero stage read as {p.zero_stage}, file {stage}")
    elif kind not in ("MULTI_GPU", "NO"):
        fail(f"distributed_type {kind}")


def check_hf(path):
    need("accelerate")
    tr = need("transformers")
    import transformers.training_args as ta
    with open(path) as f:
        kw = json.load(f)
    # The arguments, not this machine: bf16 is checked against the GPU.
    ta.is_torch_bf16_gpu_available = lambda: True
    with tempfile.TemporaryDirectory() as out:
        if "deepspeed" in kw:
            kw["deepspeed"] = os.path.join(os.path.dirname(path),
                                           kw["deepspeed"])
            os.environ.setdefault("DS_ACCELERATOR", "cpu")
            need("deepspeed")
            one_rank_group()
        a = tr.TrainingArguments(output_dir=out, **kw)
    if a.per_device_train_batch_size != kw["per_device_train_batch_size"]:
        fail("per_device_train_batch_size read differently")
    if "fsdp" in kw and not a.fsdp:
        fail("fsdp not read")


def toml_type_ok(ftype, v):
    if ftype.startswith("Literal") or ftype == "str" or ftype.startswith(
            "str |"):
        return isinstance(v, str)
    if ftype == "bool":
        return isinstance(v, bool)
    if ftype == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if ftype == "float":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if ftype.startswith("list[str]"):
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    return True


def bare_package(name):
    """Import name's submodules without running name/__init__.py (for
    torchtitan and torchtune, whose __init__ imports the trainer: MoE
    kernels that need triton, datasets, tokenizers), as the same files.
    The package's directory, or None when it is not installed."""
    import importlib.util
    import types
    if name in sys.modules:
        return sys.modules[name].__path__[0]
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    pkg = types.ModuleType(name)
    pkg.__path__ = list(spec.submodule_search_locations)
    sys.modules[name] = pkg
    return pkg.__path__[0]


def titan_config_manager():
    """torchtitan's ConfigManager, or None when torchtitan (pinned in
    requirements-test.txt, installed without its trainer's dependencies)
    or tyro is missing (torchtitan.config loaded by bare_package)."""
    try:
        import tyro  # noqa: F401
    except ImportError:
        return None
    if bare_package("torchtitan") is None:
        return None
    from torchtitan.config.manager import ConfigManager
    return ConfigManager


def check_torchtitan(path):
    import tomllib
    cm = titan_config_manager()
    if cm is None:
        print("missing Python package torchtitan (0.2.2, --no-deps) or tyro")
        sys.exit(77)
    # torchtitan's own parser: tyro over JobConfig, the TOML merged.
    cfg = cm().parse_args(["--job.config_file", path])
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    for key, want in doc["parallelism"].items():
        if getattr(cfg.parallelism, key) != want:
            fail(f"torchtitan read parallelism.{key} as "
                 f"{getattr(cfg.parallelism, key)!r}, file {want!r}")
    if cfg.activation_checkpoint.mode != doc["activation_checkpoint"]["mode"]:
        fail("torchtitan read activation_checkpoint.mode differently")
    if cfg.training.local_batch_size != doc["training"]["local_batch_size"]:
        fail("torchtitan read training.local_batch_size differently")
    # And the fields against v0.2.2's source (the same release).
    s = schemas()["torchtitan"]["sections"]
    with open(path, "rb") as f:
        doc = tomllib.load(f)

    def walk(d, prefix):
        for k, v in d.items():
            key = prefix + k
            if isinstance(v, dict):
                if key not in s:
                    fail(f"[{key}] is not a torchtitan v0.2.2 section")
                walk(v, key + ".")
                continue
            sec = prefix[:-1]
            if sec not in s or k not in s[sec]:
                fail(f"{key} is not a field of torchtitan v0.2.2")
            f = s[sec][k]
            if not toml_type_ok(f["type"], v):
                fail(f"{key} = {v!r} is not {f['type']}")
            if "choices" in f and v not in f["choices"]:
                fail(f"{key} = {v!r} is not one of {f['choices']}")

    walk(doc, "")


def tune_load(recipe_cfg, overrides):
    """tune run's config loading (torchtune 0.6.1, torchtune/_cli/run.py
    through torchtune/config/_parse.py): --config and the key=value words
    parsed by TuneRecipeArgumentParser, merged by _merge_yaml_and_cli_args
    (OmegaConf)."""
    need("omegaconf")
    where = bare_package("torchtune")
    if where is None:
        print("missing Python package torchtune (0.6.1, --no-deps)")
        sys.exit(77)
    from torchtune.config._parse import TuneRecipeArgumentParser
    from torchtune.config._utils import _merge_yaml_and_cli_args
    cfg = os.path.join(os.path.dirname(where), "recipes", "configs",
                       recipe_cfg + ".yaml")
    parser = TuneRecipeArgumentParser(description="vramplan export check")
    yaml_args, cli_args = parser.parse_known_args(["--config", cfg] +
                                                  overrides)
    return _merge_yaml_and_cli_args(yaml_args, cli_args)


def check_torchtune(path):
    yaml = need("yaml")
    rec = schemas()["torchtune"]["recipes"]
    recipe = None
    with open(path) as f:
        lines = f.read().splitlines()
    for ln in lines:
        m = re.match(r"# tune run --nproc_per_node \d+ (\S+) ", ln)
        if m:
            recipe = m.group(1)
    if recipe not in rec:
        fail(f"recipe {recipe} is not one of {sorted(rec)}")
    r = rec[recipe]
    for ln in lines:
        if not ln or ln.startswith("#"):
            continue
        k, sep, v = ln.partition("=")
        if not sep:
            fail(f"'{ln}' is not key=value")
        val = yaml.safe_load(v)
        top = k.split(".")[0]
        if k not in r["keys"] and top not in r["reads"]:
            fail(f"{k}: neither in {r['config']}.yaml nor read by {recipe}")
        if top not in r["reads"] and top not in r["keys"]:
            fail(f"{top} is not read by {recipe}")
        t = r["keys"].get(k)
        if t == "bool" and not isinstance(val, bool):
            fail(f"{k}={v}: the config's value is a bool")
        if t == "int" and (isinstance(val, bool) or not isinstance(val, int)):
            fail(f"{k}={v}: the config's value is an int")
    # tune run's own loader over the recipe's llama3_1/8B config.
    from omegaconf import OmegaConf
    over = [ln for ln in lines if ln and not ln.startswith("#")]
    cfg = tune_load(r["config"], over)
    for ln in over:
        k, _, v = ln.partition("=")
        got = OmegaConf.select(cfg, k)
        want = yaml.safe_load(v)
        if OmegaConf.is_config(got):
            got = OmegaConf.to_container(got)
        if got != want:
            fail(f"tune run read {k} as {got!r}, the file says {want!r}")


def check_megatron(path):
    flags = schemas()["megatron"]["flags"]
    with open(path) as f:
        text = f.read()
    m = re.search(r"^MEGATRON_ARGS=\(\n(.*?)^\)$", text, re.M | re.S)
    if m is None:
        fail("no MEGATRON_ARGS=( ... ) array")
    words = m.group(1).split()
    i = 0
    while i < len(words):
        w = words[i]
        if w not in flags:
            fail(f"{w} is not an argument of Megatron-LM core_v0.15.0")
        f = flags[w]
        if f["value"]:
            if i + 1 >= len(words) or words[i + 1].startswith("--"):
                fail(f"{w} needs a value")
            v = words[i + 1]
            if f.get("type") == "int" and not re.fullmatch(r"-?\d+", v):
                fail(f"{w} {v}: not an int")
            if f.get("choices") and v not in f["choices"]:
                fail(f"{w} {v}: not one of {f['choices']}")
            i += 2
        else:
            i += 1


def check(fmt, path, dp):
    CURRENT[0] = f"{fmt} {path}"
    for k in list(os.environ):
        if k.startswith("FSDP_") or k.startswith("ACCELERATE_"):
            del os.environ[k]
    {"deepspeed": lambda: check_deepspeed(path, dp),
     "accelerate": lambda: check_accelerate(path),
     "hf": lambda: check_hf(path),
     "torchtitan": lambda: check_torchtitan(path),
     "torchtune": lambda: check_torchtune(path),
     "megatron": lambda: check_megatron(path)}[fmt]()
    print(f"ok {fmt} {path}")


def main():
    """FORMAT FILE [--dp N], or --list FILE of such lines (one process:
    the imports once)."""
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--list":
        with open(args[1]) as f:
            jobs = [ln.split() for ln in f if ln.strip()]
    else:
        jobs = [args]
    for job in jobs:
        dp = 1
        if "--dp" in job:
            j = job.index("--dp")
            dp = int(job[j + 1])
            del job[j:j + 2]
        if len(job) != 2:
            sys.exit(__doc__)
        check(job[0], job[1], dp)


if __name__ == "__main__":
    main()
