#!/bin/sh
# Run the CPU validation cases that need PyTorch >= 2.4 (optimizer in
# backward: Tensor.register_post_accumulate_grad_hook; --recompute op:
# torch.utils.checkpoint.create_selective_checkpoint_contexts; torch.compile),
# tests/validate_cpu.py --grid torch2, in the test venv whose interpreter
# is TORCH2_PYTHON (`make venv`).  Without it the test is skipped (exit
# 77), or fails when CI is set (tests/need.sh), as tests/validate_hf.sh.
py=${TORCH2_PYTHON:-${TOP_BUILDDIR:-build}/.venv-test/bin/python}
top=${TOP_SRCDIR:-.}
. "$top/tests/need.sh"
[ -x "$py" ] ||
	missing validate_oib "no test venv at $py; build it with" "make venv"
"$py" -c 'import torch, yaml, torch.utils.checkpoint as c
torch.Tensor.register_post_accumulate_grad_hook
c.create_selective_checkpoint_contexts' >/dev/null 2>&1 ||
	missing validate_oib "$py cannot import torch (>= 2.4) and yaml;" \
	    "rebuild it with make venv"
cd "$top" || exit 1
# The --compile cases: Inductor's compiled kernels are kept outside the
# trees, per user, so a second run skips the C++ compiler.
TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-${TMPDIR:-/tmp}/vramplan-inductor-$(id -u)}
export TORCHINDUCTOR_CACHE_DIR
OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} exec "$py" tests/validate_cpu.py --grid torch2
