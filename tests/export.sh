#!/bin/sh
# vramplan export (issue 18, parts 1 and 2).
#
# 1. Every DeepSpeed file export writes is read back with
#    --deepspeed-config (the command in its _vramplan.read_back) to the
#    same estimate: the report's JSON equal to the exported estimate's
#    (the command in _vramplan.estimate), but for the planner's own
#    search and fewest-GPUs answer, which a file that fixes every knob
#    does not run.
# 2. Every file's header names an estimate whose device peak, rerun, is
#    the one the header says.
# 3. Plans a target cannot express are refused with exit status 6 and
#    nothing written; report options are refused with 2.
# 4. The files load in the libraries that read them (tests/export_check.py
#    in the test venv: DeepSpeed, accelerate, transformers, torchtitan's
#    ConfigManager, torchtune's tune run config loading; Megatron-LM, and
#    the keys torchtitan and torchtune read, against their sources at
#    pinned commits).  Without the venv, or without those packages in it,
#    this part is skipped (exit 77), or fails when CI is set
#    (tests/need.sh).
vp=${VRAMPLAN:-build/src/vramplan}
top=${TOP_SRCDIR:-.}
py=${TORCH2_PYTHON:-${TOP_BUILDDIR:-build}/.venv-test/bin/python}
sys_py=${TORCH_PYTHON:-python3}
command -v "$sys_py" >/dev/null 2>&1 || sys_py=python3
. "$top/tests/need.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vp-export.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
: >"$tmp/list"

# export FORMAT NAME DP ARGS...: write NAME, expect exit 0 or 1 (the
# estimate's verdict), queue it for the parsers.
export_one() {
	fmt=$1 name=$2 dp=$3
	shift 3
	"$vp" export "$fmt" "$@" -o "$tmp/$name" >"$tmp/$name.out" \
	    2>"$tmp/$name.err"
	rc=$?
	if [ "$rc" -gt 1 ] || [ ! -s "$tmp/$name" ] || [ -s "$tmp/$name.out" ]
	then
		bad "export $fmt $* (exit $rc)"
		sed 's/^/    /' "$tmp/$name.err"
		return 1
	fi
	echo "$fmt $tmp/$name --dp $dp" >>"$tmp/list"
	ok "export $fmt $* (exit $rc)"
}

# The header's estimate, rerun, has the header's device peak.
same_peak() {
	name=$1 fmt=$2
	if ! "$sys_py" - "$vp" "$tmp/$name" "$fmt" "$tmp/$name.err" <<'EOF'
import json, re, shlex, subprocess, sys
vp, path, fmt, err = sys.argv[1:]
text = open(path).read() if fmt != "hf" else open(err).read()
if fmt == "deepspeed":
    meta = json.loads(text)["_vramplan"]
    cmd, peak = meta["estimate"], meta["device_peak_gib"]
else:
    cmd = re.search(r"estimate: (vramplan .*?)(;|\n)", text).group(1)
    peak = float(re.search(r"device peak ([0-9.]+) GiB", text).group(1))
args = shlex.split(cmd)[1:]
r = subprocess.run([vp] + args + ["--json"], capture_output=True, text=True)
rep = json.loads(r.stdout)
got = rep["per_gpu"]["device_peak_bytes"] / 2**30
if abs(got - peak) > 0.006:
    sys.exit(f"estimate {cmd}: device peak {got:.2f} GiB, file says {peak}")
EOF
	then
		bad "$name: the header's estimate is not the file's"
		return
	fi
	ok "$name: the header's estimate reruns to its device peak"
}

# A DeepSpeed file read back to the same estimate.
round_trip() {
	name=$1
	if ! "$sys_py" - "$vp" "$tmp/$name" <<'EOF'
import json, shlex, subprocess, sys
vp, path = sys.argv[1:]
meta = json.load(open(path))["_vramplan"]

def run(cmd):
    r = subprocess.run([vp] + shlex.split(cmd)[1:] + ["--json"],
                       capture_output=True, text=True)
    if r.returncode > 1:
        sys.exit(f"{cmd}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)

a, b = run(meta["estimate"]), run(meta["read_back"])
# The file the estimate read (the exported one's may have read one too).
a["plan"].pop("deepspeed_config", None)
b["plan"].pop("deepspeed_config", None)
for k in sorted(set(a) | set(b)):
    if k in ("search", "min_gpus"):
        continue
    if a.get(k) != b.get(k):
        sys.exit(f"{k} differs:\n  exported  {a.get(k)}\n  read back {b.get(k)}")
EOF
	then
		bad "$name: read back with --deepspeed-config to another estimate"
		return
	fi
	ok "$name: read back with --deepspeed-config to the same estimate"
}

# Refused: exit status $1, nothing written, the message on stderr.
refused() {
	want=$1
	shift
	rm -f "$tmp/refused"
	"$vp" export "$@" -o "$tmp/refused" >"$tmp/refused.out" \
	    2>"$tmp/refused.err"
	rc=$?
	if [ "$rc" -ne "$want" ] || [ -e "$tmp/refused" ] ||
	    [ ! -s "$tmp/refused.err" ]; then
		bad "export $* (exit $rc, expected $want)"
		sed 's/^/    /' "$tmp/refused.err"
		return
	fi
	ok "export $* refused ($rc): $(tail -n 1 "$tmp/refused.err" | cut -c1-90)"
}

# --- DeepSpeed: several models and plans, each read back ---------------
cp "$top/tests/data/deepspeed/zero3-offload-auto.json" "$tmp/in-auto.json"
export_one deepspeed ds-70b.json 16 llama-3.1-70b --gpus 16xH100
export_one deepspeed ds-8b.json 8 llama-3.1-8b --gpus 8xH100
export_one deepspeed ds-70b-off.json 16 llama-3.1-70b --gpus 16xH100 \
    --offload optimizer
export_one deepspeed ds-moe.json 8 qwen3-30b-a3b --gpus 8xH100
export_one deepspeed ds-gpt2.json 1 gpt2 --gpus 1xA100-80G-SXM
export_one deepspeed ds-z2-fp16.json 8 mistral-7b --gpus 8xA100-40G-SXM \
    --zero 2 --micro-batch 2 --grad-accum 4 --precision fp16-master \
    --optimizer adam --recompute full
export_one deepspeed ds-auto.json 8 llama-3.1-8b --gpus 8xH100 \
    --deepspeed-config "$tmp/in-auto.json" --micro-batch 1 --grad-accum 2
export_one deepspeed ds-lora.json 2 llama-3.1-8b --gpus 2xRTX4090-24G \
    --lora 16 --zero 3 --seq 2048
for f in ds-70b ds-8b ds-70b-off ds-moe ds-gpt2 ds-z2-fp16 ds-auto ds-lora
do
	[ -s "$tmp/$f.json" ] || continue
	round_trip "$f.json"
	same_peak "$f.json" deepspeed
done

# --- The other formats ----------------------------------------------------
export_one accelerate acc-ddp.yaml 2 gpt2 --gpus 2xH100 --zero 0
export_one accelerate acc-fsdp1.yaml 8 qwen3-8b --gpus 8xH100 \
    --framework fsdp1 --recompute full
export_one accelerate acc-fsdp2.yaml 8 llama-3.1-8b --gpus 8xH100 \
    --framework fsdp2 --offload optimizer+params
# A DeepSpeed plan under accelerate or the Trainer: the DeepSpeed file is
# written beside, from the same plan (read back and loaded below too).
export_one accelerate acc-ds.yaml 8 llama-3.1-8b --gpus 8xH100 \
    --precision bf16-master --deepspeed-file "$tmp/ds-acc.json"
export_one hf hf-fsdp1.json 8 qwen3-8b --gpus 8xH100 --framework fsdp1
export_one hf hf-fsdp2.json 8 llama-3.1-8b --gpus 8xH100 \
    --framework fsdp2 --recompute full
export_one hf hf-ds.json 8 llama-3.1-8b --gpus 8xH100 \
    --precision bf16-master --deepspeed-file "$tmp/ds-hf.json"
for f in ds-acc ds-hf; do
	[ -s "$tmp/$f.json" ] || { bad "$f.json not written"; continue; }
	echo "deepspeed $tmp/$f.json --dp 8" >>"$tmp/list"
	round_trip "$f.json"
	same_peak "$f.json" deepspeed
done
export_one hf hf-lora.json 1 llama-3.1-8b --gpus 1xRTX4090-24G --lora 16 \
    --quant nf4 --optimizer paged-adamw-8bit --seq 2048
export_one torchtitan titan-8b.toml 8 llama-3.1-8b --gpus 8xH100
export_one torchtitan titan-70b.toml 8 llama-3.1-70b --gpus 64xH100 \
    --float8 tensorwise --float8-all-gather --compile
export_one torchtitan titan-op.toml 4 llama-3.1-8b --gpus 8xH100 --tp 2 \
    --recompute op
export_one torchtune tune-full.txt 8 llama-3.1-8b --gpus 8xH100
export_one torchtune tune-lora.txt 1 llama-3.1-8b --gpus 1xRTX4090-24G \
    --lora 8 --lora-targets q,v --seq 2048
export_one torchtune tune-oib.txt 1 llama-3.1-8b --gpus 1xH200-141G-SXM \
    --optimizer-in-backward --activation-offload --recompute full \
    --seq 2048
export_one torchtune tune-compile.txt 8 llama-3.1-8b --gpus 8xH100 \
    --compile --compile-loss --recompute full
export_one megatron mega-70b.sh 1 llama-3.1-70b --gpus 16xH100
export_one megatron mega-8b.sh 8 llama-3.1-8b --gpus 8xH100 --zero 1 \
    --recompute selective --attention eager --tp 1 --pp 1 --cp 1
export_one megatron mega-qwen2.sh 8 qwen2.5-7b --gpus 8xH100
# Mixtral's experts (expert parallel, grouped GEMM, alltoall; with a
# capacity factor and the experts looped as transformers 4.x runs them),
# Qwen3's q/k norms.
export_one megatron mega-mixtral.sh 8 mixtral-8x7b --gpus 16xH100
export_one megatron mega-mixtral-tp.sh 4 mixtral-8x7b --gpus 16xH100 \
    --tp 2 --pp 2 --ep 4 --sp --capacity-factor 1.25
export_one megatron mega-mixtral-loop.sh 8 mixtral-8x7b --gpus 16xH100 \
    --transformers 4.40 --ep 2
export_one megatron mega-qwen3.sh 8 qwen3-8b --gpus 8xH100
for f in acc-ddp.yaml:accelerate acc-fsdp1.yaml:accelerate \
    acc-fsdp2.yaml:accelerate acc-ds.yaml:accelerate hf-fsdp1.json:hf \
    hf-fsdp2.json:hf hf-ds.json:hf hf-lora.json:hf titan-8b.toml:torchtitan \
    titan-70b.toml:torchtitan titan-op.toml:torchtitan \
    tune-full.txt:torchtune tune-lora.txt:torchtune tune-oib.txt:torchtune \
    tune-compile.txt:torchtune \
    mega-70b.sh:megatron mega-8b.sh:megatron mega-qwen2.sh:megatron \
    mega-mixtral.sh:megatron mega-mixtral-tp.sh:megatron \
    mega-mixtral-loop.sh:megatron mega-qwen3.sh:megatron; do
	[ -s "$tmp/${f%%:*}" ] && same_peak "${f%%:*}" "${f##*:}"
done

# The MoE arguments say the plan's layout: EP as estimated, experts whole
# on each rank, grouped GEMM unless looped, the capacity factor.
for c in "mega-mixtral.sh:--expert-tensor-parallel-size 1" \
    "mega-mixtral.sh:--moe-grouped-gemm" \
    "mega-mixtral-tp.sh:--expert-model-parallel-size 4" \
    "mega-mixtral-tp.sh:--moe-expert-capacity-factor 1.25" \
    "mega-mixtral-tp.sh:--sequence-parallel" \
    "mega-mixtral-loop.sh:--expert-model-parallel-size 2" \
    "mega-qwen3.sh:--qk-layernorm"; do
	if grep -qx -- "  ${c#*:}" "$tmp/${c%%:*}"; then
		ok "${c%%:*} says ${c#*:}"
	else
		bad "${c%%:*} does not say ${c#*:}"
	fi
done
if grep -q -- "--moe-grouped-gemm" "$tmp/mega-mixtral-loop.sh"; then
	bad "mega-mixtral-loop.sh: looped experts written as a grouped GEMM"
else
	ok "mega-mixtral-loop.sh: looped experts are Megatron's SequentialMLP"
fi

# --- Refusals ---------------------------------------------------------------
refused 6 hf llama-3.1-8b --gpus 8xH100 --pp 2
refused 6 accelerate llama-3.1-8b --gpus 8xH100 --framework fsdp2 --compile
refused 6 accelerate llama-3.1-8b --gpus 8xH100 --zero 3
refused 6 deepspeed llama-3.1-8b --gpus 8xH100 --offload optimizer \
    --offload-nvme
refused 6 deepspeed llama-3.1-8b --gpus 8xH100 --tp 2
refused 6 deepspeed llama-3.1-8b --gpus 8xH100 --zero 2 --offload params
refused 6 megatron gpt2 --gpus 8xH100
refused 6 megatron qwen1.5-moe-a2.7b --gpus 8xH100
refused 6 megatron qwen3-30b-a3b --gpus 8xH100
refused 6 megatron deepseek-v3 --gpus 64xH100
refused 6 megatron mixtral-8x7b --gpus 16xH100 --tp 2 --ep 4 --no-search
refused 6 torchtune llama-3.1-8b --gpus 1xH100 --lora 8 --quant nf4
refused 6 torchtitan llama-3.1-8b --gpus 8xH100 --lora 8
refused 6 torchtune llama-3.1-8b --gpus 8xH100 --compile
refused 6 torchtitan gpt2 --gpus 8xH100
refused 6 torchtune qwen3-8b --gpus 8xH100
# The format's own families first (before the options it implies and the
# estimate): the model it has no builder for is the reason.
refused 6 torchtune jamba-v0.1 --gpus 8xH100
refused 6 torchtitan nemotron-h-8b --gpus 8xH100
refused 6 torchtune mixtral-8x7b --gpus 8xH100 --lora 8
refused 6 torchtitan whisper-small --gpus 8xH100 --zero 3
refused 6 torchtitan llava-1.5-7b --gpus 8xH100
for c in "torchtune jamba-v0.1:torchtune 0.6 has no builder for family jamba" \
    "torchtitan nemotron-h-8b:torchtitan 0.2.2 has no model for family nemotron-h" \
    "megatron t5-base:Megatron-LM's arguments are not written for family t5"
do
	want="vramplan: export ${c%% *}: ${c#*:}"
	"$vp" export ${c%%:*} --gpus 8xH100 >/dev/null 2>"$tmp/first.err"
	if [ "$(wc -l <"$tmp/first.err")" -eq 1 ] &&
	    [ "$(cut -c1-${#want} "$tmp/first.err")" = "$want" ]; then
		ok "export ${c%%:*}: the family refused first, alone"
	else
		bad "export ${c%%:*}: not refused for its family first:"
		sed 's/^/    /' "$tmp/first.err"
	fi
done
# Every library model in every format: written (0, or 1 when it does not
# fit), refused by the format (6, "vramplan: export FORMAT: ..."), or, for
# the formats that take any model (deepspeed, accelerate, hf), a plan the
# estimate does not model (3, "... is not modelled ..."); never anything
# else, and never 3 from a format whose families are checked first.
for m in $("$vp" models --names); do
	for f in deepspeed accelerate torchtitan torchtune megatron hf; do
		rm -f "$tmp/all.out"
		"$vp" export "$f" "$m" --gpus 8xH100 -o "$tmp/all.out" \
		    >/dev/null 2>"$tmp/all.err"
		rc=$?
		msg=$(grep -v '^vramplan: note:' "$tmp/all.err" | tail -n 1)
		case $rc:$f in
		0:*|1:*) [ -s "$tmp/all.out" ] && continue ;;
		6:*) [ ! -e "$tmp/all.out" ] &&
			case $msg in "vramplan: export $f: "*) continue ;; esac ;;
		3:deepspeed|3:accelerate|3:hf) [ ! -e "$tmp/all.out" ] &&
			case $msg in *"not modelled"*) continue ;; esac ;;
		esac
		bad "export $f $m --gpus 8xH100: exit $rc: $msg"
	done
done
ok "every library model x format: written, or refused with a reason"
refused 2 hf llama-3.1-8b --gpus 8xH100 --precision bf16-master
refused 2 frobnicate llama-3.1-8b
refused 2 deepspeed llama-3.1-8b --gpus 8xH100 --json

# --- The estimate's --emit: export's file, and the report of its plan ------
for c in "deepspeed:llama-3.1-8b --gpus 8xH100" \
    "torchtitan:llama-3.1-8b --gpus 8xH100 --recompute op" \
    "megatron:mixtral-8x7b --gpus 16xH100"; do
	f=${c%%:*}
	"$vp" export $f ${c#*:} -o "$tmp/exp.$f" 2>/dev/null
	"$vp" ${c#*:} --emit $f -o "$tmp/emit.$f" --json >"$tmp/emit.$f.json" \
	    2>/dev/null
	rc=$?
	sed "s|$tmp/exp\.$f|FILE|g" "$tmp/exp.$f" >"$tmp/exp.$f.n"
	sed "s|$tmp/emit\.$f|FILE|g" "$tmp/emit.$f" >"$tmp/emit.$f.n"
	if [ "$rc" -gt 1 ] || ! cmp -s "$tmp/exp.$f.n" "$tmp/emit.$f.n"; then
		bad "--emit $f ${c#*:}: exit $rc, or not export's file"
		continue
	fi
	# The report is the estimate the file's header names.
	if "$sys_py" - "$vp" "$tmp/emit.$f" "$tmp/emit.$f.json" <<'EOF2'
import json, re, shlex, subprocess, sys
vp, path, rep = sys.argv[1:]
text = open(path).read()
if text.startswith("{"):
    cmd = json.loads(text)["_vramplan"]["estimate"]
else:
    cmd = re.search(r"estimate: (vramplan .*)", text).group(1)
r = subprocess.run([vp] + shlex.split(cmd)[1:] + ["--json"],
                   capture_output=True, text=True)
a, b = json.loads(r.stdout), json.load(open(rep))
# The planner's own search aside: the estimate line pins what the
# format kept the planner from, so it weighs fewer alternatives.
for k in sorted(set(a) | set(b)):
    if k not in ("search", "min_gpus") and a.get(k) != b.get(k):
        sys.exit(f"{k}: the report is not the estimate of {cmd}")
EOF2
	then
		ok "--emit $f ${c#*:}: export's file, the report of its estimate"
	else
		bad "--emit $f ${c#*:}: the report is not the file's estimate"
	fi
done
rm -f "$tmp/refused"
"$vp" llama-3.1-8b --gpus 8xH100 --emit hf >"$tmp/refused.out" 2>&1
[ $? -eq 2 ] && ok "--emit without -o: usage error (2)" ||
    bad "--emit without -o is not a usage error"
"$vp" jamba-v0.1 --gpus 8xH100 --emit torchtune -o "$tmp/refused" \
    >"$tmp/refused.out" 2>"$tmp/refused.err"
if [ $? -eq 6 ] && [ ! -e "$tmp/refused" ] && [ ! -s "$tmp/refused.out" ]
then
	ok "--emit torchtune jamba-v0.1: refused (6), no file, no report"
else
	bad "--emit torchtune jamba-v0.1: not refused as export refuses it"
fi
refused 2 hf llama-3.1-8b --gpus 8xH100 --emit hf

# --- The real parsers -----------------------------------------------------
if [ "$fail" -eq 0 ]; then
	[ -x "$py" ] || missing export "no test venv at $py; build it with" \
	    "make venv"
	DS_ACCELERATOR=cpu "$py" -c 'import deepspeed, accelerate, transformers
import tyro, omegaconf, importlib.util
assert importlib.util.find_spec("torchtitan")
assert importlib.util.find_spec("torchtune")' >/dev/null 2>&1 ||
	    missing export "$py cannot import deepspeed, accelerate," \
	    "transformers, tyro, omegaconf, torchtitan and torchtune;" \
	    "rebuild it with make venv"
	if DS_ACCELERATOR=cpu "$py" "$top/tests/export_check.py" --list \
	    "$tmp/list" >"$tmp/check.out" 2>"$tmp/check.err"; then
		ok "$(grep -c '^ok' "$tmp/check.out") files load in their" \
		    "readers (tests/export_check.py)"
	else
		bad "a file does not load in its reader:"
		grep -v '^ok' "$tmp/check.out" | sed 's/^/    /'
		tail -n 5 "$tmp/check.err" | sed 's/^/    /'
	fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
