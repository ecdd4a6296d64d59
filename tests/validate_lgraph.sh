#!/bin/sh
# Run the layer-graph validation grid: transformers' ResNetForImageClassification
# (torchvision's ResNet layout), PyTorch 2.13, measured on the CPU against
# vramplan's --device cpu estimate of the layer-graph files in
# tests/data/lgraph-val.  Needs the test venv (`make venv`), as
# tests/validate_hf.sh; without it the test is skipped (exit 77), or fails
# when CI is set (tests/need.sh).
py=${TORCH2_PYTHON:-${TOP_BUILDDIR:-build}/.venv-test/bin/python}
top=${TOP_SRCDIR:-.}
. "$top/tests/need.sh"
[ -x "$py" ] ||
	missing validate_lgraph "no test venv at $py; build it with" "make venv"
"$py" -c 'import torch, transformers' >/dev/null 2>&1 ||
	missing validate_lgraph "$py cannot import torch and transformers;" \
	    "rebuild it with make venv"
cd "$top" || exit 1
OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} exec "$py" tests/validate_lgraph.py
