#!/bin/sh
# Run the Hugging Face validation grid: the real transformers classes,
# PyTorch 2.13, measured on the CPU against vramplan's --device cpu
# estimate.  Needs the test venv (`make venv`, requirements-test.txt) whose
# interpreter is TORCH2_PYTHON.  Without it the test is skipped (exit 77),
# or fails when CI is set (tests/need.sh; .ci/run builds the venv).
py=${TORCH2_PYTHON:-${TOP_BUILDDIR:-build}/.venv-test/bin/python}
top=${TOP_SRCDIR:-.}
. "$top/tests/need.sh"
[ -x "$py" ] ||
	missing validate_hf "no test venv at $py; build it with" "make venv"
"$py" -c 'import torch, transformers, yaml' >/dev/null 2>&1 ||
	missing validate_hf "$py cannot import torch, transformers and yaml;" \
	    "rebuild it with make venv"
cd "$top" || exit 1
# make check runs the grid less FULL_ONLY (--quick), the whole grid with
# VALIDATE_FULL=1.
quick=--quick
[ -n "${VALIDATE_FULL:-}" ] && quick=
OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} exec "$py" tests/validate_hf.py $quick
