#!/usr/bin/env bash
# calib/gpu-check.sh [OUT]: calibrate vramplan on this machine's NVIDIA GPU,
# then check it on held-apart configurations (calib/heldout.py).
#
#   1. build vramplan and vramplan-probe out of tree, in build-gpu/
#   2. build-gpu/src/vramplan calibrate --device cuda --out OUT/profile.yaml
#      (XDG_DATA_HOME=OUT/xdg: nothing in your home directory changes)
#   3. calib/heldout.py: >= 10 configurations outside the calibration grid
#      (+ Hugging Face models when transformers imports), estimate vs measured
#      at the allocated / reserved / device levels; OUT/heldout.tsv
#
# OUT defaults to ./gpu-check-out.  Needs: a C toolchain (autotools only if
# ./configure is missing), an NVIDIA GPU, and a Python with a CUDA build of
# PyTorch and PyYAML: $VRAMPLAN_PYTHON, else the python3 on PATH, else
# /usr/bin/python3.  Optional: pynvml (exact device figures), transformers.
# Environment: REUSE_PROFILE=1 skips step 2 when OUT/profile.yaml exists;
# MAKEFLAGS etc. pass through to make.
# Exit status: 0 the acceptance bar is met (mean |error| allocated <= 2%,
# device <= 3%); 1 it is not, or a held-out row failed; 2 setup problem
# (no usable Python / no GPU); other: the failing build or calibrate step's.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
cd "$root"

OUT=${1:-./gpu-check-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export XDG_DATA_HOME="$OUT/xdg"
mkdir -p "$XDG_DATA_HOME"

start=$SECONDS
say() { printf '[gpu-check %3ds] %s\n' "$((SECONDS - start))" "$*"; }

# ---- a Python that imports torch with CUDA --------------------------------
py_ok() {
	"$1" -c 'import sys, torch, yaml; sys.exit(0 if torch.cuda.is_available() else 3)' >/dev/null 2>&1
}
PY=""
for cand in "${VRAMPLAN_PYTHON:-}" "$(command -v python3 || true)" /usr/bin/python3; do
	[ -n "$cand" ] || continue
	if py_ok "$cand"; then PY=$cand; break; fi
done
if [ -z "$PY" ]; then
	say "no Python with a CUDA build of PyTorch and PyYAML (tried \$VRAMPLAN_PYTHON, python3, /usr/bin/python3)"
	say "set VRAMPLAN_PYTHON to one, on a machine where torch.cuda.is_available() is True"
	exit 2
fi
export VRAMPLAN_PYTHON=$PY
say "python: $PY ($("$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "-", torch.cuda.get_device_name(0))'))"
if command -v nvidia-smi >/dev/null 2>&1; then
	say "driver: $(nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader | head -n 1)"
fi

# ---- 1. build ---------------------------------------------------------------
if [ ! -x ./configure ]; then
	say "no ./configure: running ./bootstrap"
	./bootstrap
fi
mkdir -p build-gpu
if [ ! -f build-gpu/Makefile ]; then
	say "configuring build-gpu/"
	(cd build-gpu && ../configure -q)
fi
say "building (make -j$(nproc))"
make -C build-gpu -s -j"$(nproc)" >"$OUT/build.log" 2>&1 || {
	tail -n 40 "$OUT/build.log"
	say "build failed (full log: $OUT/build.log)"
	exit 1
}
VRAMPLAN=$root/build-gpu/src/vramplan
export VRAMPLAN
[ -x "$VRAMPLAN" ] || { say "missing $VRAMPLAN after the build"; exit 1; }
if [ -x build-gpu/calib/vramplan-probe ]; then
	say "probe: build-gpu/calib/vramplan-probe"
else
	say "warning: build-gpu/calib/vramplan-probe was not built (CUDA headers missing?)"
fi

# ---- 2. calibrate -------------------------------------------------------------
if [ "${REUSE_PROFILE:-0}" = 1 ] && [ -s "$OUT/profile.yaml" ]; then
	say "reusing $OUT/profile.yaml (REUSE_PROFILE=1)"
else
	say "calibrating: $VRAMPLAN calibrate --device cuda --out $OUT/profile.yaml"
	t0=$SECONDS
	"$VRAMPLAN" calibrate --device cuda --out "$OUT/profile.yaml"
	say "calibration done in $((SECONDS - t0)) s"
fi
[ -s "$OUT/profile.yaml" ] || { say "no profile was written to $OUT/profile.yaml"; exit 1; }

# ---- 3. held-apart rows ---------------------------------------------------------
say "held-apart check: calib/heldout.py --out $OUT"
t0=$SECONDS
rc=0
"$PY" calib/heldout.py --out "$OUT" --profile "$OUT/profile.yaml" --vramplan "$VRAMPLAN" || rc=$?
say "held-apart check done in $((SECONDS - t0)) s (exit $rc); total $((SECONDS - start)) s"
[ -f "$OUT/heldout.tsv" ] && say "results: $OUT/heldout.tsv, profile: $OUT/profile.yaml"
exit "$rc"
