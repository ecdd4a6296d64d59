#!/bin/sh
# vramplan calibrate end to end on the CPU: measure a grid with the PyTorch
# harness, fit, store the profile under XDG_DATA_HOME, and check that later
# estimates pick it up and print error bars; then every way a profile is
# rejected (corrupt, foreign, another format version, not a profile), and
# the failures a user can meet (no GPU, no Python, nowhere to write).
#
# Needs the Python with torch (TORCH_PYTHON, default /usr/bin/python3):
# skipped without it, a failure when CI is set (tests/need.sh), as in
# validate_cpu.sh.
vp=${VRAMPLAN:-./src/vramplan}
top=${TOP_SRCDIR:-.}
py=${TORCH_PYTHON:-/usr/bin/python3}
pass=0
fail=0
tmp=$(mktemp -d) || exit 1
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
XDG_DATA_HOME=$tmp/xdg
VRAMPLAN_PYTHON=$py
export XDG_DATA_HOME VRAMPLAN_PYTHON
unset NO_COLOR
dir=$XDG_DATA_HOME/vramplan/profiles
model=$top/tests/data/val/gpt2-tiny.yaml

ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -f "$tmp/err" ] && sed 's/^/  | /' "$tmp/err"; }
# check NAME WANT_STATUS GREP_PATTERN FILE -- CMD...: status and a line.
check() {
	name=$1 want=$2 pat=$3 file=$4
	shift 5
	"$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ "$st" -ne "$want" ]; then
		echo "  exit status $st, wanted $want"
		bad "$name"
	elif [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/$file"; then
		echo "  no line matching '$pat' in std$file:"
		sed 's/^/  | /' "$tmp/$file" | head -20
		bad "$name"
	else
		ok "$name"
	fi
}

. "$top/tests/need.sh"
"$py" -c 'import torch, yaml' >/dev/null 2>&1 ||
	missing calibrate "$py cannot import torch and yaml; install" \
	    "python3-torch python3-yaml (apt-get)"

# 1. The whole loop: measure -> fit -> store.
check "calibrate --device cpu" 0 '^profile ' out -- \
    "$vp" calibrate --device cpu --model "$model"
cat "$tmp/out"
prof=$(ls "$dir"/cpu--*.yaml 2>/dev/null | head -1)
if [ -n "$prof" ] && grep -q '^vramplan-profile: 1$' "$prof"; then
	ok "profile stored under XDG_DATA_HOME"
else
	bad "profile stored under XDG_DATA_HOME"
fi
ls "$dir" | grep -q 'tmp' && bad "no temporary file left" ||
    ok "no temporary file left"
# The fit must leave the allocated level within 3% on its own grid.
worst=$(sed -n 's/^allocated  worst \([0-9.]*\)%.*/\1/p' "$tmp/out")
if [ -n "$worst" ] && awk "BEGIN { exit !($worst <= 3.0) }"; then
	ok "fit residual $worst% <= 3%"
else
	bad "fit residual '$worst' <= 3%"
fi

# 2. Later estimates use it and print the error bar.
check "estimate shows the error bar" 0 'allocated peak.*± ' out -- \
    "$vp" "$model" --device cpu
check "estimate names the profile" 0 'Profile    calibrated on cpu' out -- \
    "$vp" "$model" --device cpu
check "JSON has the error" 0 '"allocated_err_bytes"' out -- \
    "$vp" "$model" --device cpu --json
check "--profile none: built-in" 0 'Profile    cpu (no caching' out -- \
    "$vp" "$model" --device cpu --profile none
if grep -q '±' "$tmp/out"; then bad "--profile none has no error bar"; else
	ok "--profile none has no error bar"; fi
check "--profile FILE" 0 'allocated peak.*± ' out -- \
    "$vp" "$model" --device cpu --profile "$prof"
check "calibrate --show" 0 'error bars  allocated' out -- \
    "$vp" calibrate --show
check "calibrate --show --profile" 0 'device      cpu' out -- \
    "$vp" calibrate --show --profile "$prof"

# 2b. Held apart: configurations (and lowerings) the fit never saw,
# measured by the harness and estimated with the stored profile.
if "$py" "$top/calib/heldout.py" --device cpu --no-hf --profile "$prof" \
    --vramplan "$vp" --out "$tmp/held" >"$tmp/out" 2>"$tmp/err"; then
	ok "held-apart grid after calibration: $(grep '^allocated' "$tmp/out")"
else
	cat "$tmp/out"
	bad "held-apart grid after calibration"
fi

# 3. Refit from the stored measurements of a file, with a copy (--out).
check "--measurements with --out" 0 '^copy ' out -- \
    "$vp" calibrate --measurements "$top/tests/data/calib/cpu-measurements.yaml" \
    --out "$tmp/copy.yaml"
cmp -s "$tmp/copy.yaml" "$(ls -t "$dir"/cpu--*.yaml | head -1)" &&
    ok "copy equals the stored profile" || bad "copy equals the stored profile"

# 3b. The CUDA side of the fit, without a GPU: a synthetic CUDA grid and
# an example probe record (tests/data/calib).  Known: 6% fragmentation,
# 560 MiB beyond reserved, 8 MiB the model does not see; the probe's free
# memory becomes the card's capacity.
cdir=$tmp/cuda-xdg
check "CUDA grid: fragmentation fitted" 0 'fragmentation 5.9[0-9]%\|fragmentation 6.0[0-9]%' out -- \
    env XDG_DATA_HOME="$cdir" "$vp" calibrate --measurements \
    "$top/tests/data/calib/h200-synthetic-measurements.yaml" \
    --probe "$top/tests/data/calib/h200-probe-example.yaml"
grep -q '^capacity   139.82 GiB measured' "$tmp/out" &&
    ok "CUDA grid: the probe's capacity kept" ||
    bad "CUDA grid: the probe's capacity kept"
grep -q '^device     worst 0\.[0-4]' "$tmp/out" &&
    ok "CUDA grid: device level within 0.5%" ||
    bad "CUDA grid: device level within 0.5%"
ls "$cdir/vramplan/profiles/" | grep -q '^H200-141G-SXM--drv580.65.06--cuda12.8--torch_2.7.0.yaml$' &&
    ok "CUDA grid: keyed by card, driver, CUDA, torch" ||
    bad "CUDA grid: keyed by card, driver, CUDA, torch"
check "H200 estimate: measured capacity" 0 'measured by vramplan-probe' out -- \
    env XDG_DATA_HOME="$cdir" "$vp" "$model" --gpus 1xH200 --no-search
check "H200 estimate: capacity in JSON" 0 '"capacity_bytes": 150129868800' out -- \
    env XDG_DATA_HOME="$cdir" "$vp" "$model" --gpus 1xH200 --no-search --json
# compare costs every card under its own stored profile (it once ignored
# them): the H200 is marked calibrated, the others are not.
check "compare: the H200 under its profile" 0 \
    '"gpu": "H200-141G-SXM", "fits": true, "calibrated": true' out -- \
    env XDG_DATA_HOME="$cdir" "$vp" compare "$model" --tokens 1e9 --json
grep -q '"gpu": "H100-80G-SXM", "fits": true, "calibrated": false' \
    "$tmp/out" && ok "compare: other cards built-in" ||
    bad "compare: other cards built-in"
check "compare: the text names the calibrated card" 0 \
    'Calibrated profiles (vramplan calibrate) used for: H200-141G-SXM' out -- \
    env XDG_DATA_HOME="$cdir" "$vp" compare "$model" --tokens 1e9
check "compare --profile none: no profile" 0 '"calibrated": false' out -- \
    env XDG_DATA_HOME="$cdir" "$vp" compare "$model" --tokens 1e9 --json \
    --profile none
grep -q '"calibrated": true' "$tmp/out" &&
    bad "compare --profile none: none calibrated" ||
    ok "compare --profile none: none calibrated"
check "--probe needs --measurements" 2 'goes with' err -- \
    "$vp" calibrate --probe "$top/tests/data/calib/h200-probe-example.yaml"
# A malformed probe record is refused with its positions (the reader once
# dropped them, and leaked the record's text).
printf 'vramplan-probe: 1\ngpu:\n  name: [1]\n  memory_total_bytes: -5\n' \
    >"$tmp/bad-probe.yaml"
check "malformed probe: each field with its position" 3 \
    'bad-probe.yaml:4:23: error: .memory_total_bytes' err -- \
    env XDG_DATA_HOME="$tmp/bad-probe-xdg" "$vp" calibrate --measurements \
    "$top/tests/data/calib/h200-synthetic-measurements.yaml" \
    --probe "$tmp/bad-probe.yaml"
grep -q 'bad-probe.yaml:3:9: error' "$tmp/err" &&
    ok "malformed probe: the first field too" ||
    bad "malformed probe: the first field too"
printf 'foo: 1\n' >"$tmp/not-probe.yaml"
check "not a probe record" 3 'not a vramplan-probe record' err -- \
    env XDG_DATA_HOME="$tmp/bad-probe-xdg" "$vp" calibrate --measurements \
    "$top/tests/data/calib/h200-synthetic-measurements.yaml" \
    --probe "$tmp/not-probe.yaml"

# 4. Rejected profiles.
mkdir -p "$tmp/p"
head -c 300 "$prof" >"$tmp/p/cut.yaml"
echo '  context_bytes: [oops' >>"$tmp/p/cut.yaml"
check "corrupt profile: error" 3 'cut.yaml:[0-9]*:[0-9]*: error' err -- \
    "$vp" "$model" --device cpu --profile "$tmp/p/cut.yaml"
sed 's/^vramplan-profile: 1$/vramplan-profile: 2/' "$prof" >"$tmp/p/v2.yaml"
check "newer format: rejected" 3 'format version 2 is not one' err -- \
    "$vp" "$model" --device cpu --profile "$tmp/p/v2.yaml"
check "not a profile: rejected" 3 'not a vramplan profile' err -- \
    "$vp" "$model" --device cpu --profile "$model"
sed 's/^  frag_share: .*/  frag_share: 7/' "$prof" >"$tmp/p/range.yaml"
check "value out of range: rejected" 3 "range.yaml:[0-9]*:[0-9]*: error: 'frag_share'" err -- \
    "$vp" "$model" --device cpu --profile "$tmp/p/range.yaml"
sed 's/^  unknown_key: .*//; s/^  temp_scale:/  temp_scal:/' "$prof" >"$tmp/p/key.yaml"
check "unknown key: did you mean" 3 "did you mean 'temp_scale'" err -- \
    "$vp" "$model" --device cpu --profile "$tmp/p/key.yaml"
check "cpu profile for a cuda estimate" 3 'was measured on cpu' err -- \
    "$vp" "$model" --gpus 1xA100 --no-search --profile "$prof"
# A profile of another card (a cuda profile made from the cpu one).
sed 's/^  device: "cpu"$/  device: "cuda"/; s/^  catalog_id: null$/  catalog_id: "H100-80G-SXM"/; s/^  gpu: null$/  gpu: "NVIDIA H100 80GB HBM3"/' \
    "$prof" >"$tmp/p/h100.yaml"
check "H100 profile for an A100 estimate" 3 'not on A100-80G-SXM' err -- \
    "$vp" "$model" --gpus 1xA100 --no-search --profile "$tmp/p/h100.yaml"
# Copied to another machine's profile directory, it applies to that card.
cp "$tmp/p/h100.yaml" "$dir/H100-80G-SXM--copied.yaml"
check "copied profile applies to its card" 0 'device peak.*± ' out -- \
    "$vp" "$model" --gpus 1xH100 --no-search
check "and not to another card" 0 'built-in defaults' out -- \
    "$vp" "$model" --gpus 1xA100 --no-search
# The TUI draws the same error bars (when it is built and tmux is here).
if command -v tmux >/dev/null 2>&1 &&
    "$vp" tui --help >/dev/null 2>&1; then
	sock=vp-calib-$$
	tmux -L "$sock" new-session -d -x 100 -y 30 \
	    "LANG=C.UTF-8 TERM=xterm-256color '$vp' tui '$model' --gpus 1xH100; sleep 5"
	i=0
	while [ $i -lt 50 ]; do
		tmux -L "$sock" capture-pane -p >"$tmp/screen" 2>/dev/null
		grep -q 'device peak.*± ' "$tmp/screen" && break
		sleep 0.2
		i=$((i + 1))
	done
	tmux -L "$sock" send-keys q 2>/dev/null
	tmux -L "$sock" kill-server 2>/dev/null
	if grep -q 'device peak.*± ' "$tmp/screen"; then
		ok "the TUI shows the error bars"
	else
		sed 's/^/  | /' "$tmp/screen"
		bad "the TUI shows the error bars"
	fi
else
	echo "skip the TUI check: no tmux or no TUI in this build"
fi
# A stored profile that went bad is ignored with a note, not fatal.
cp "$tmp/p/cut.yaml" "$dir/H100-80G-SXM--zz-broken.yaml"
touch -d '2099-01-01' "$dir/H100-80G-SXM--zz-broken.yaml" 2>/dev/null
check "bad stored profile: ignored with a note" 0 'note: ignoring the profile' err -- \
    "$vp" "$model" --gpus 1xH100 --no-search
check "calibrate --show flags it" 3 'rejected' out -- "$vp" calibrate --show
rm -f "$dir/H100-80G-SXM--zz-broken.yaml"

# 5. Failures a user can meet.
printf 'vramplan-measurements: 1\ndevice: cpu\npoints:\n  - id: x\n    kind: step\n    modle: a.yaml\n' >"$tmp/m.yaml"
check "bad measurements: file:line:col" 3 "m.yaml:6:5: error: unknown key 'modle'" err -- \
    "$vp" calibrate --measurements "$tmp/m.yaml"
check "no Python with torch" 4 'VRAMPLAN_PYTHON' err -- \
    env VRAMPLAN_PYTHON=/nonexistent/python3 "$vp" calibrate --device cpu --model "$model"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; then
	echo "skip no-GPU check: this machine has a GPU"
else
	check "--device cuda without a GPU" 5 'GPU\|probe' err -- \
	    "$vp" calibrate --device cuda --model "$model"
fi
mkdir -p "$tmp/ro" && chmod a-w "$tmp/ro"
if [ "$(id -u)" = 0 ]; then
	echo "skip read-only directory check: root can write anywhere"
else
	check "unwritable profile directory" 4 'cannot' err -- \
	    env XDG_DATA_HOME="$tmp/ro" "$vp" calibrate --measurements \
	    "$top/tests/data/calib/cpu-measurements.yaml"
fi
check "--out into a missing directory" 4 'cannot create' err -- \
    "$vp" calibrate --measurements "$top/tests/data/calib/cpu-measurements.yaml" \
    --out "$tmp/nodir/p.yaml"
[ -e "$tmp/nodir" ] && bad "nothing half-written" || ok "nothing half-written"
check "usage: stray argument" 2 'takes no arguments' err -- \
    "$vp" calibrate "$model"
check "usage: bad device" 2 "unknown --device 'tpu'" err -- \
    "$vp" calibrate --device tpu

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
