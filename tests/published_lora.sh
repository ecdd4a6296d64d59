#!/bin/sh
# Published LoRA/QLoRA measurements against vramplan (see published_lora.py).
exec "${TORCH_PYTHON:-/usr/bin/python3}" "${TOP_SRCDIR:-.}/tests/published_lora.py"
