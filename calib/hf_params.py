"""Parameter counts of Hugging Face config.json files from the transformers classes.

    .venv-test/bin/python calib/hf_params.py CONFIG.json...

For each file, the class its model_type names (AutoModelForCausalLM,
AutoModelForMaskedLM for an encoder, AutoModelForSeq2SeqLM for T5 / mT5 / BART,
AutoModelForSpeechSeq2Seq for Whisper, AutoModelForImageClassification for ViT,
AutoModel (CLIPModel) for CLIP, AutoModelForImageTextToText
(LlavaForConditionalGeneration) for LLaVA) is instantiated from the config on
PyTorch's meta device (no weights, no memory, no hub access) and its
num_parameters() (tied weights once) is printed with the transformers
version: the ground truth tests/data/params.tsv records for the configs in
tests/data/hf/ (tests/params.sh compares vramplan's count with it,
exactly).  Needs torch and transformers (the test venv, `make venv`).
"""

import json
import os
import sys
import warnings

import torch
import transformers


def count(path):
    with open(path) as f:
        d = json.load(f)
    mt = d.pop("model_type")
    # Kimi-K2's model_type is not registered with transformers: its config's
    # auto_map and architectures name DeepSeek-V3's classes, which it runs.
    mt = {"kimi_k2": "deepseek_v3"}.get(mt, mt)
    cfg = transformers.CONFIG_MAPPING[mt].from_dict(d)
    if mt in ("bert", "roberta", "modernbert", "deberta-v2"):
        auto = transformers.AutoModelForMaskedLM
    elif mt in ("t5", "mt5", "bart"):
        auto = transformers.AutoModelForSeq2SeqLM
    elif mt == "whisper":
        auto = transformers.AutoModelForSpeechSeq2Seq
    elif mt == "vit":
        auto = transformers.AutoModelForImageClassification
    elif mt == "clip":
        auto = transformers.AutoModel
    elif mt == "llava":
        auto = transformers.AutoModelForImageTextToText
    else:
        auto = transformers.AutoModelForCausalLM
    with torch.device("meta"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = auto.from_config(cfg)
    return type(model).__name__, model.num_parameters()


def main(argv):
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    for p in argv:
        cls, n = count(p)
        print("%s\t%d\t%s (transformers %s, meta device)" % (os.path.basename(p), n, cls, transformers.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
