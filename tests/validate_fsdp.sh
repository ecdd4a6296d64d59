#!/bin/sh
# Run the FSDP grid: FSDP1 and FSDP2 on 2 and 4 CPU ranks (gloo), each
# rank measured with calib/harness.py's exact accounting against vramplan's
# --device cpu estimate of one rank (tests/validate_fsdp.py; gate 3% mean,
# 8% worst per rank).  Needs the test venv (`make venv`) whose interpreter
# is TORCH2_PYTHON, with torch.distributed and FSDP2's fully_shard.
# Without it the test is skipped (exit 77), or fails when CI is set
# (tests/need.sh), as tests/validate_oib.sh.
py=${TORCH2_PYTHON:-${TOP_BUILDDIR:-build}/.venv-test/bin/python}
top=${TOP_SRCDIR:-.}
. "$top/tests/need.sh"
[ -x "$py" ] ||
	missing validate_fsdp "no test venv at $py; build it with" "make venv"
"$py" -c 'import torch, yaml, torch.distributed as d;
assert d.is_available() and d.is_gloo_available()
from torch.distributed.fsdp import fully_shard' >/dev/null 2>&1 ||
	missing validate_fsdp "$py cannot import torch (>= 2.6, gloo," \
	    "FSDP2's fully_shard) and yaml; rebuild it with make venv"
cd "$top" || exit 1
# Every rank runs one CPU thread (torch.set_num_threads(1)).
OMP_NUM_THREADS=1 exec "$py" tests/validate_fsdp.py
