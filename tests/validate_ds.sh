#!/bin/sh
# Run make check's share of the DeepSpeed grid: ZeRO-1/2/3 on 2 CPU ranks
# (DeepSpeed's CPU accelerator, gloo), full and LoRA, fp32 and bf16,
# DeepSpeed's and the Hugging Face integration's "auto" knobs, each rank
# measured with calib/harness.py's exact accounting against vramplan's
# --device cpu estimate of one rank (tests/validate_ds.py --quick; gate 3%
# mean, 8% worst per rank).  The whole grid: tests/validate_ds.py without
# --quick.  Needs the test venv (`make venv`) whose interpreter is
# TORCH2_PYTHON, with deepspeed (pinned in requirements-test.txt).
# Without it the test is skipped (exit 77), or fails when CI is set
# (tests/need.sh), as tests/validate_fsdp.sh.
py=${TORCH2_PYTHON:-${TOP_BUILDDIR:-build}/.venv-test/bin/python}
top=${TOP_SRCDIR:-.}
. "$top/tests/need.sh"
[ -x "$py" ] ||
	missing validate_ds "no test venv at $py; build it with" "make venv"
DS_ACCELERATOR=cpu "$py" -c 'import torch, yaml, deepspeed, torch.distributed as d;
assert d.is_available() and d.is_gloo_available()' >/dev/null 2>&1 ||
	missing validate_ds "$py cannot import torch (gloo), yaml and" \
	    "deepspeed; rebuild it with make venv"
cd "$top" || exit 1
# Every rank runs one CPU thread (torch.set_num_threads(1)).
OMP_NUM_THREADS=1 DS_ACCELERATOR=cpu exec "$py" tests/validate_ds.py --quick
