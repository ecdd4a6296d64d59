#!/bin/sh
# setup_venv.sh DIR REQUIREMENTS — build the PyTorch 2 test environment
# (`make venv`; .ci/run calls it before make check): a virtual environment
# in DIR with every package of REQUIREMENTS at its pinned version.  Python
# 3.11 (VENV_PYTHON, default /usr/bin/python3, else python3 on PATH).
# Safe to run again: nothing is done while DIR/.requirements equals
# REQUIREMENTS; a changed file rebuilds DIR from scratch.  The environment
# is built under DIR.new and renamed, so a failed install leaves no half
# environment for the tests to find.
set -eu
dir=${1:?usage: setup_venv.sh DIR REQUIREMENTS}
req=${2:?usage: setup_venv.sh DIR REQUIREMENTS}
py=${VENV_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=python3
if [ -x "$dir/bin/python" ] && cmp -s "$req" "$dir/.requirements"; then
	echo "setup_venv: $dir is up to date"
	exit 0
fi
"$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || {
	echo "setup_venv: $py is not Python 3.11 (set VENV_PYTHON)" >&2
	exit 1
}
rm -rf "$dir.new"
"$py" -m venv "$dir.new"
# DeepSpeed ships only an sdist whose setup.py imports torch: it is built
# after the rest, against the torch installed here (--no-build-isolation;
# an isolated build would fetch a torch of its own, the multi-GB CUDA
# one) and without its CUDA ops (DS_BUILD_OPS=0); its dependencies are
# pinned with the rest (--no-deps).
grep -v -e '^deepspeed==' -e '^torchtitan==' -e '^torchtune==' "$req" \
    >"$dir.new/requirements-main.txt"
ds=$(grep '^deepspeed==' "$req" || true)
# torchtitan and torchtune (vramplan export's check) without their
# trainers' dependencies: only their config parsers are used.
tt=$(grep -e '^torchtitan==' -e '^torchtune==' "$req" || true)
if ! "$dir.new/bin/python" -m pip install --no-input -q --disable-pip-version-check \
    -r "$dir.new/requirements-main.txt" >"$dir.new/pip.log" 2>&1; then
	cat "$dir.new/pip.log" >&2
	echo "setup_venv: pip install -r $req failed" >&2
	exit 1
fi
if [ -n "$ds" ] && ! DS_BUILD_OPS=0 "$dir.new/bin/python" -m pip install \
    --no-input -q --disable-pip-version-check --no-build-isolation --no-deps \
    "$ds" >>"$dir.new/pip.log" 2>&1; then
	cat "$dir.new/pip.log" >&2
	echo "setup_venv: pip install $ds failed" >&2
	exit 1
fi
if [ -n "$tt" ] && ! "$dir.new/bin/python" -m pip install --no-input -q \
    --disable-pip-version-check --no-deps $tt >>"$dir.new/pip.log" 2>&1; then
	cat "$dir.new/pip.log" >&2
	echo "setup_venv: pip install" $tt "failed" >&2
	exit 1
fi
"$dir.new/bin/python" -c 'import torch, transformers, yaml'
[ -z "$ds" ] || DS_ACCELERATOR=cpu "$dir.new/bin/python" -c 'import deepspeed'
cp "$req" "$dir.new/.requirements"
# Renamed whole: bin/python finds its packages from its own place (only
# the console scripts' #! lines name DIR.new, and nothing here runs them).
rm -rf "$dir"
mv "$dir.new" "$dir"
echo "setup_venv: $dir ready ($("$dir/bin/python" -c 'import torch, transformers; print("torch", torch.__version__ + ", transformers", transformers.__version__)'))"
