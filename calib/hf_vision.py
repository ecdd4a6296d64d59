"""Real Hugging Face image classifiers under calib/harness.py's CPU meter.

    python calib/hf_vision.py --write-configs tests/data/lgraph-val   # regenerate the configs
    python calib/hf_vision.py CONFIG.json [--precision P] [--optimizer O] [--micro-batch B]
                              [--image N] [--inplace] [--trace]

The layer-graph models of vramplan (models/resnet*.yaml, vramplan-model(5))
are measured here with transformers' ResNetForImageClassification (the
same ops as torchvision's ResNet: conv-bn-relu, the 1x1 conv + BN
shortcut, the stride on the bottleneck's 3x3 conv), built from a
config.json with random weights, no hub.  torchvision itself cannot be
installed beside the pinned torch.  transformers' ReLU is nn.ReLU()
(ACT2FN["relu"]), not torchvision's nn.ReLU(inplace=True); --inplace
replaces every ReLU module with the in-place one, which is torchvision's
code.  The step is harness._train_step's (forward with labels, backward,
the optimizer's step, zero_grad(set_to_none=True)) under
harness._measure_cpu's exact replay of the CPU allocator's events; the
phases as in hf_models.py ("loss" is the model's loss_function, the
cross-entropy).
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import harness  # noqa: E402  (sets the oneDNN ISA cap before torch is imported)
from harness import torch, nn, phase  # noqa: E402

# Tiny ResNets: torchvision's layouts (ResNet-18's basic blocks, ResNet-50's
# bottlenecks) with fewer channels and blocks, 10 classes.
CONFIGS = {
    "resnet-basic": ("resnet", dict(num_channels=3, embedding_size=16, hidden_sizes=[16, 32, 64, 128],
                                    depths=[2, 2, 2, 2], layer_type="basic", num_labels=10)),
    "resnet-bottleneck": ("resnet", dict(num_channels=3, embedding_size=16, hidden_sizes=[64, 128, 256, 512],
                                         depths=[2, 1, 2, 1], layer_type="bottleneck", num_labels=10)),
}


def write_configs(out_dir):
    import transformers
    os.makedirs(out_dir, exist_ok=True)
    for name, (mt, kw) in sorted(CONFIGS.items()):
        kw = dict(kw)
        n = kw.pop("num_labels")
        cfg = transformers.CONFIG_MAPPING[mt](**kw)
        cfg.num_labels = n
        d = cfg.to_dict()
        d.pop("transformers_version", None)
        path = os.path.join(out_dir, name + ".config.json")
        with open(path, "w") as f:
            json.dump(d, f, indent=2, sort_keys=True)
            f.write("\n")
        print(path)
        for inplace in (False, True):
            path = os.path.join(out_dir, name + ("-inplace" if inplace else "") + ".yaml")
            with open(path, "w") as f:
                f.write(layer_graph_yaml(name, d, inplace))
            print(path)


def layer_graph_yaml(name, d, inplace=False):
    """vramplan's layer-graph file for the ResNetConfig dict d, layer by
    layer as modeling_resnet.py builds it (ResNetEmbeddings, ResNetStage
    of ResNetBasicLayer / ResNetBottleNeckLayer, ResNetShortCut, the
    pooler, the classifier)."""
    relu = "relu: {inplace: true}" if inplace else "relu"

    def conv(out, k, s=1):
        a = "out: %d, kernel: %d" % (out, k)
        if s != 1:
            a += ", stride: %d" % s
        if k // 2:
            a += ", padding: %d" % (k // 2)
        return "conv2d: {%s, bias: false}" % a

    def block(cin, cout, stride):
        if d["layer_type"] == "basic":
            body = [conv(cout, 3, stride), "batchnorm2d", relu, conv(cout, 3), "batchnorm2d"]
        else:
            w = cout // 4
            s1, s2 = (stride, 1) if d["downsample_in_bottleneck"] else (1, stride)
            body = [conv(w, 1, s1), "batchnorm2d", relu, conv(w, 3, s2), "batchnorm2d", relu, conv(cout, 1),
                    "batchnorm2d"]
        out = ["  - residual:", "      layers:"] + ["        - " + b for b in body]
        if cin != cout or stride != 1:
            out += ["      shortcut:", "        - " + conv(cout, 1, stride), "        - batchnorm2d"]
        return out + ["      after:", "        - " + relu]

    L = ["# Written by calib/hf_vision.py from %s.config.json (transformers' ResNetConfig):" % name,
         "# the layers of ResNetForImageClassification%s." % (
             ", every ReLU made in place (torchvision's)" if inplace else ""),
         "name: %s" % name, "input:", "  channels: %d" % d["num_channels"], "  image: 64", "layers:",
         "  - " + conv(d["embedding_size"], 7, 2), "  - batchnorm2d", "  - " + relu,
         "  - maxpool2d: {kernel: 3, stride: 2, padding: 1}"]
    cin = d["embedding_size"]
    for i, (cout, depth) in enumerate(zip(d["hidden_sizes"], d["depths"])):
        stride = 2 if (i > 0 or d["downsample_in_first_stage"]) else 1
        L += block(cin, cout, stride)
        for _ in range(depth - 1):
            L += block(cout, cout, 1)
        cin = cout
    L += ["  - adaptive-avgpool2d", "  - flatten", "  - linear: {out: %d}" % len(d["id2label"])]
    return "\n".join(L) + "\n"


def load_config(path):
    import transformers
    with open(path) as f:
        d = json.load(f)
    mt = d.pop("model_type")
    return transformers.CONFIG_MAPPING[mt].from_dict(d)


class ImageStep(nn.Module):
    """model(pixels, labels) -> loss, with the phase marks of hf_models.HFStep."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        inner = model.loss_function

        def loss_function(*a, **k):
            with phase("loss"):
                return inner(*a, **k)
        model.loss_function = loss_function

    def forward(self, pixels, labels):
        with phase("forward"):
            out = self.model(pixel_values=pixels, labels=labels)
            loss = out.loss
            del out
        return loss


def _inplace_relu(mod):
    for name, child in mod.named_children():
        if isinstance(child, nn.ReLU):
            setattr(mod, name, nn.ReLU(inplace=True))
        else:
            _inplace_relu(child)


def build(config_path, precision, inplace):
    import transformers
    cfg = load_config(config_path)
    model = transformers.AutoModelForImageClassification.from_config(cfg)
    if any(p.dtype != torch.float32 for p in model.parameters()):
        model = model.float()
    if inplace:
        _inplace_relu(model)
    model.train()
    if precision == "bf16":
        model.to(torch.bfloat16)
    return ImageStep(model), cfg


def measure(config_path, precision="fp32", optimizer="adamw", micro_batch=2, image=64, inplace=False,
            steps=2, seed=0, num_threads=2, trace=False, optimizer_impl="default"):
    """harness.measure's result keys for an image classifier."""
    import transformers
    torch.set_num_threads(int(num_threads))
    torch.manual_seed(seed)
    o = {"device": "cpu", "precision": precision}
    model, cfg = build(config_path, precision, inplace)
    gen = torch.Generator().manual_seed(seed + 1)
    dt = torch.bfloat16 if precision == "bf16" else torch.float32
    pixels = torch.randn((micro_batch, int(cfg.num_channels), image, image), generator=gen).to(dt)
    labels = torch.randint(0, int(cfg.num_labels), (micro_batch,), generator=gen)
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = harness.make_optimizer(optimizer, trainable, "cpu", optimizer_impl)
    params = list(model.parameters())
    buffers = list(model.buffers())
    seen = {}
    weights = harness._unique_bytes(params, seen)
    bufs = harness._unique_bytes(buffers, seen)
    inputs = harness._unique_bytes([pixels, labels], seen)
    res = {
        "torch": torch.__version__, "transformers": transformers.__version__,
        "model_class": type(model.model).__name__, "attention_impl": None,
        "params": sum(p.numel() for p in params),
        "precision": precision, "optimizer": optimizer, "foreach": harness.effective_foreach(opt),
        "micro_batch": micro_batch, "image": image, "inplace": inplace,
        "weights_bytes": weights, "buffers_bytes": bufs, "inputs_bytes": inputs,
        "baseline_bytes": weights + bufs + inputs,
    }
    import gc
    gc.collect()
    info = {}
    rep = harness._measure_cpu(res, model, pixels, labels, opt, o, None, info, params, buffers, steps, trace)
    res["grad_bytes"] = info.get("grad_bytes")
    res["optimizer_state_bytes"] = harness._unique_bytes(harness._optimizer_tensors(opt))
    res["final_loss"] = info.get("loss")
    del model, opt, pixels, labels, params, buffers, trainable
    gc.collect()
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(prog="hf_vision.py")
    ap.add_argument("config", nargs="?")
    ap.add_argument("--write-configs", metavar="DIR")
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--optimizer", default="adamw")
    ap.add_argument("--micro-batch", type=int, default=2)
    ap.add_argument("--image", type=int, default=64)
    ap.add_argument("--inplace", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--trace", action="store_true")
    a = ap.parse_args(argv)
    if a.write_configs:
        write_configs(a.write_configs)
        return 0
    if not a.config:
        ap.error("a config.json is needed")
    res = measure(a.config, a.precision, a.optimizer, a.micro_batch, a.image, a.inplace,
                  num_threads=a.threads, trace=a.trace)
    json.dump(res, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
