#!/bin/sh
# Run the CPU validation grid: real PyTorch training steps measured on CPU
# against vramplan's --device cpu estimate.  Needs Debian's python3-torch
# (the interpreter in TORCH_PYTHON, default /usr/bin/python3).  Without
# torch it is skipped (exit 77), or fails when CI is set (tests/need.sh):
# the accuracy claim rests on this test, so CI must run it.
py=${TORCH_PYTHON:-/usr/bin/python3}
top=${TOP_SRCDIR:-.}
. "$top/tests/need.sh"
"$py" -c 'import torch, yaml' >/dev/null 2>&1 ||
	missing validate_cpu "$py cannot import torch and yaml; install" \
	    "python3-torch python3-yaml (apt-get)"
cd "$top" || exit 1
OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} exec "$py" tests/validate_cpu.py
