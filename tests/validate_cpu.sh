#!/bin/sh
# Run the CPU validation grid: real PyTorch training steps measured on CPU
# against vramplan's --device cpu estimate.  Needs Debian's python3-torch
# (the interpreter in TORCH_PYTHON, default /usr/bin/python3).  A missing
# torch is a failure, not a skip: the accuracy claim rests on this test.
py=${TORCH_PYTHON:-/usr/bin/python3}
top=${TOP_SRCDIR:-.}
if ! "$py" -c 'import torch, yaml' >/dev/null 2>&1; then
	echo "validate_cpu: $py cannot import torch and yaml;" \
	    "install python3-torch python3-yaml (apt-get)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
cd "$top" || exit 1
OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} exec "$py" tests/validate_cpu.py
