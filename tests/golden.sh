#!/bin/sh
# golden.sh — run vramplan on fixed inputs and compare its stdout, stderr and
# exit status with the expected files in tests/golden/.
#
#   tests/golden.sh            compare; one "ok NAME" / "FAIL NAME" line per
#                              case, a unified diff under each failure, and a
#                              final "N passed, M failed" line
#   tests/golden.sh --update   rewrite tests/golden/ from the current binary
#                              (then read every changed file before committing)
#
# Environment (make check sets all three):
#   VRAMPLAN       the binary (default: ./src/vramplan)
#   VRAMPLAN_DATA  the model library (default: $TOP_SRCDIR/models)
#   TOP_SRCDIR     the source tree (default: the directory above this script)
#   GOLDEN_TIMEOUT seconds one case may run before it fails (default 60)
#
# For case NAME the expected files are tests/golden/NAME.out (stdout),
# NAME.err (stderr) and NAME.rc (exit status); a missing .out or .err means
# "expect nothing".  Cases run from inside $TOP_SRCDIR with relative paths,
# so file names in messages do not depend on the machine.  Every file in
# tests/bad/ is a case of its own (expected exit status 3); generated inputs
# (a 20 MB file, inputs that are slow to parse when the reader is quadratic)
# are written to a temporary directory and run from inside it.

LC_ALL=C
export LC_ALL
NO_COLOR=1
export NO_COLOR
unset CLICOLOR_FORCE FORCE_COLOR

update=0
case ${1-} in
--update) update=1 ;;
"") ;;
*)
	echo "usage: tests/golden.sh [--update]" >&2
	exit 2
	;;
esac

if [ -z "${TOP_SRCDIR-}" ]; then
	TOP_SRCDIR=$(cd "$(dirname "$0")/.." && pwd) || exit 2
fi
: "${VRAMPLAN:=./src/vramplan}"
# Relative paths are taken from where the script was started.
case $VRAMPLAN in
/*) ;;
*) VRAMPLAN=$(pwd)/$VRAMPLAN ;;
esac
case $TOP_SRCDIR in
/*) ;;
*) TOP_SRCDIR=$(pwd)/$TOP_SRCDIR ;;
esac
: "${VRAMPLAN_DATA:=$TOP_SRCDIR/models}"
case $VRAMPLAN_DATA in
/*) ;;
*) VRAMPLAN_DATA=$(pwd)/$VRAMPLAN_DATA ;;
esac
export VRAMPLAN_DATA
: "${GOLDEN_TIMEOUT:=60}"

if [ ! -x "$VRAMPLAN" ]; then
	echo "golden: no vramplan binary at '$VRAMPLAN' (set VRAMPLAN)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
cd "$TOP_SRCDIR" || exit 2
golden=$TOP_SRCDIR/tests/golden
if [ "$update" = 1 ]; then
	mkdir -p "$golden" || exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramplan-golden.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

passed=0
failed=0

# limit SECONDS COMMAND...: run COMMAND with stdout to $tmp/out, stderr to
# $tmp/err and its exit status to $tmp/rc ("timeout after N s" when it ran
# past the limit).  The limit needs timeout(1); without it cases run unlimited.
if command -v timeout >/dev/null 2>&1; then
	have_timeout=1
else
	have_timeout=0
fi
limit() {
	secs=$1
	shift
	if [ "$have_timeout" = 1 ]; then
		timeout -k 5 "$secs" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
		st=$?
		case $st in
		124 | 137) st="timeout after $secs s" ;;
		esac
	else
		"$@" >"$tmp/out" 2>"$tmp/err" </dev/null
		st=$?
	fi
	echo "$st" >"$tmp/rc"
}

# compare NAME [RC]: check $tmp/{out,err,rc} against the golden files of
# NAME; with RC, the exit status must also be RC whatever the golden says.
compare() {
	name=$1
	want=${2-}
	if [ -n "$want" ] && [ "$(cat "$tmp/rc")" != "$want" ]; then
		echo "FAIL $name"
		echo "    exit status $(cat "$tmp/rc"), expected $want"
		sed 's/^/    stderr: /' "$tmp/err"
		failed=$((failed + 1))
		return
	fi
	if [ "$update" = 1 ] && grep -q '^timeout' "$tmp/rc"; then
		# A hang is never the expected behaviour: keep the old files.
		echo "FAIL $name"
		echo "    timed out; tests/golden/$name.* left as they were"
		failed=$((failed + 1))
		return
	fi
	if [ "$update" = 1 ]; then
		for ext in out err; do
			if [ -s "$tmp/$ext" ]; then
				cp "$tmp/$ext" "$golden/$name.$ext"
			else
				rm -f "$golden/$name.$ext"
			fi
		done
		cp "$tmp/rc" "$golden/$name.rc"
		echo "updated $name"
		passed=$((passed + 1))
		return
	fi
	bad=0
	: >"$tmp/diff"
	if [ ! -f "$golden/$name.rc" ]; then
		echo "no expected files (tests/golden/$name.rc is missing;" \
		    "run tests/golden.sh --update)" >>"$tmp/diff"
		bad=1
	fi
	for ext in rc out err; do
		exp=$golden/$name.$ext
		[ -f "$exp" ] || exp=/dev/null
		if ! cmp -s "$exp" "$tmp/$ext"; then
			diff -u "$exp" "$tmp/$ext" |
			    sed "2s|^+++ $tmp/|+++ actual |" >>"$tmp/diff"
			bad=1
		fi
	done
	if [ "$bad" = 0 ]; then
		echo "ok $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name"
		sed 's/^/    /' "$tmp/diff"
		failed=$((failed + 1))
	fi
}

# run NAME ARGS...: one case, run from $TOP_SRCDIR.
run() {
	name=$1
	shift
	limit "$GOLDEN_TIMEOUT" "$VRAMPLAN" "$@"
	compare "$name"
}

# run_bad FILE: a malformed input; exit status 3 is required.
run_bad() {
	base=${1#tests/bad/}
	base=${base%.yaml}
	base=${base%.json}
	limit "$GOLDEN_TIMEOUT" "$VRAMPLAN" "$1"
	compare "bad-$base" 3
}

# run_in DIR SECONDS NAME ARGS...: a case on generated files, run from DIR.
run_in() {
	dir=$1 secs=$2 name=$3
	shift 3
	(cd "$dir" && limit "$secs" "$VRAMPLAN" "$@")
	compare "$name"
}

# ---- malformed model files: each must be refused with exit status 3 ------
for f in tests/bad/*; do
	[ -e "$f" ] || continue
	run_bad "$f"
done

# ---- generated inputs ----------------------------------------------------
gen=$tmp/gen
mkdir "$gen" || exit 2
# A file over the 16 MiB limit: a valid model, then 20 MiB of comments.
awk 'BEGIN {
	print "name: tiny"; print "layers: 2"; print "hidden: 128"
	print "heads: 4"; print "ffn: 512"; print "vocab: 1000"
	line = "#"
	for (i = 0; i < 127; i++)
		line = line " "
	for (i = 0; i < 163840; i++)	# 163840 * 128 bytes = 20 MiB
		print line
}' </dev/null >"$gen/huge.yaml"
run_in "$gen" "$GOLDEN_TIMEOUT" gen-20mb-file huge.yaml

# 60,000 lists of 9 items: the tree builder must stay linear in the input
# (growing a list past 8 items must not rescan everything read so far).
# About 1.2 MB; a linear reader parses it in a fraction of a second (a
# quadratic one took 15 s).
awk -v n=60000 'BEGIN {
	printf "name: ["
	for (i = 0; i < n; i++)
		printf "%s[1, 2, 3, 4, 5, 6, 7, 8, 9]", (i ? ", " : "")
	print "]"
	print "layers: 2"; print "hidden: 128"; print "heads: 4"
	print "ffn: 512"; print "vocab: 1000"
}' </dev/null >"$gen/many-lists.yaml"
run_in "$gen" 5 gen-many-short-lists many-lists.yaml

# 40,000 anchors and 200,000 aliases to the first: looking an alias up must
# not scan every anchor (a linear scan took 26 s).  About 1.2 MB.
awk -v n=40000 -v a=200000 'BEGIN {
	printf "name: ["
	for (i = 0; i < n; i++)
		printf "%s&a%d 0", (i ? ", " : ""), i
	for (i = 0; i < a; i++)
		printf ", *a0"
	print "]"
	print "layers: 2"; print "hidden: 128"; print "heads: 4"
	print "ffn: 512"; print "vocab: 1000"
}' </dev/null >"$gen/many-aliases.yaml"
run_in "$gen" 5 gen-many-aliases many-aliases.yaml

# ---- the command line ----------------------------------------------------
run cli-help --help
run cli-version --version
run cli-no-arguments
run cli-unknown-option gpt2 --frobnicate
run cli-missing-option-value gpt2 --gpus
run cli-precision-near-miss gpt2 --precision bf16-mixd
run cli-micro-batch-zero gpt2 --micro-batch 0
run cli-micro-batch-negative gpt2 --micro-batch -1
run cli-micro-batch-abc gpt2 --micro-batch abc
run cli-micro-batch-huge gpt2 --micro-batch 1e30
run cli-json-and-csv gpt2 --json --csv
run cli-two-models gpt2 bert-base
run cli-unknown-gpu gpt2 --gpus 2xA1000
run cli-gpu-count-zero gpt2 --gpus 0xA100
run cli-model-near-miss llama-3-8
run cli-model-unknown no-such-model-at-all
run cli-model-missing-file tests/no-such-file.yaml
run cli-models models
run cli-models-extra-argument models gpt2
run cli-gpus gpus
run cli-gpus-filtered gpus --vendor NVIDIA --segment datacenter --min-mem 80
# The quiet listings the shell completions read, and the completions
# command's refusal of a shell it does not know (tests/completion.sh runs
# the scripts themselves).
run cli-models-names models --names
run cli-gpus-ids gpus --ids --vendor NVIDIA --segment datacenter --min-mem 80
run cli-models-option-elsewhere models --json
run cli-models-short-help models -h
run cli-completions-unknown-shell completions tcsh
run cli-completions-no-shell completions
run cli-compare compare x
run cli-compare-no-tokens compare gpt2
run cli-compare-bad-price compare gpt2 --tokens 1e9 --price H100
run cli-compare-unknown-price-card compare gpt2 --tokens 1e9 --price H1000=2
run cli-tp-not-dividing models/llama-3-8b.yaml --tp 3
# Options from the one option table (issue: every option from one table).
# --cp without --gpus: the world is dp x tp x pp x cp (it left cp out).
run cli-cp-without-gpus gpt2 --cp 2 --seq 512
run cli-max-seq-without-gpus gpt2 --max-seq
run cli-min-gpus-without-gpus gpt2 --min-gpus
run cli-max-micro-batch-without-gpus gpt2 --max-micro-batch
run cli-ambiguous-prefix gpt2 --lora-d 3
run cli-option-near-miss gpt2 --precison bf16
run cli-compare-only-option gpt2 --tokens 1e9
run cli-host-mem-zero-is-no-limit gpt2 --host-mem 0 --seq 256 --json
run cli-tui-report-option tui gpt2 --json
run cli-gpus-unknown-option gpus --bogus
# compare takes the estimate's plan options, with the same ranges and
# messages (it lacked --attention, --framework, --plan, ...).
run cli-compare-lora-targets compare gpt2 --tokens 1e9 --lora-targets qq
run cli-compare-micro-batch-range compare gpt2 --tokens 1e9 --micro-batch 2000000
# Issue 17, finding 5: each numeric option its own documented range, the
# message naming the option; the job at most 65,536 GPUs however it is
# made; the degrees' product in 64 bits; a plan file's GPU count is not
# called --gpus; --nodes past the GPU count suggests only what splits.
run cli-compare-lora-range compare gpt2 --tokens 1e9 --lora 100000
run cli-compare-global-batch-range compare gpt2 --tokens 1e9 --global-batch 200000000
run cli-compare-max-gpus-range compare gpt2 --tokens 1e9 --max-gpus 65537
run cli-nodes-times-gpn-over gpt2 --gpus H100 --nodes 65536 --gpus-per-node 1024
run cli-nodes-times-gpn-max gpt2 --gpus H100 --nodes 8192 --gpus-per-node 8 \
	--no-search --seq 256
run cli-degrees-wrap-32 gpt2 --dp 4 --tp 1024 --pp 1024 --cp 1024
run cli-dp-vs-plan-file-gpus models/llama-3-8b.yaml \
	--plan tests/data/plans/llama-3-8b-2xa100.yaml --dp 3 --no-search
run cli-nodes-past-gpus gpt2 --gpus 8xH100 --nodes 100
# Issue 17, finding 7: control characters and escape sequences in user
# text (a model's name, a key it quotes, a user catalog's card, name and
# offering) are escaped in text output (\e, \xHH); the JSON escapes them
# as \u00XX, C1 and DEL included.
run esc-model-name tests/data/esc/evil-name.yaml --gpus 1xH100 --seq 128 \
	--no-search
run esc-model-name-json tests/data/esc/evil-name.yaml --gpus 1xH100 \
	--seq 128 --no-search --json
run esc-model-name-compare compare tests/data/esc/evil-name.yaml \
	--tokens 1e9 --vendor AMD --max-gpus 2
run esc-model-key tests/data/esc/evil-key.yaml
run esc-model-not-found "$(printf 'no-such\033[31m-model')"
(XDG_CONFIG_HOME=$TOP_SRCDIR/tests/data/xdg-esc
export XDG_CONFIG_HOME
limit "$GOLDEN_TIMEOUT" "$VRAMPLAN" gpus --vendor Example)
compare esc-user-catalog-gpus
(XDG_CONFIG_HOME=$TOP_SRCDIR/tests/data/xdg-esc
export XDG_CONFIG_HOME
limit "$GOLDEN_TIMEOUT" "$VRAMPLAN" compare gpt2 --tokens 1e9 \
	--vendor Example --max-gpus 2)
compare esc-user-catalog-compare
run cli-compare-profile-file compare gpt2 --tokens 1e9 --profile x.yaml
run compare-gpt2-plan-options compare gpt2 --tokens 1e9 --attention eager \
	--framework deepspeed --zero 2 --max-gpus 8 --csv
run compare-plan-file compare models/llama-3-8b.yaml --tokens 1e9 \
	--plan tests/data/plans/llama-3-8b-2xa100.yaml --max-gpus 16 --csv

# ---- estimates -----------------------------------------------------------
run est-llama-3-8b-2xa100 models/llama-3-8b.yaml --gpus 2xA100
run est-llama-3-8b-2xa100-json models/llama-3-8b.yaml --gpus 2xA100 --json
run est-llama-3-8b-2xa100-csv models/llama-3-8b.yaml --gpus 2xA100 --csv
run est-gpt2-cpu-fp32 gpt2 --device cpu --precision fp32 --micro-batch 2 \
    --seq 128
run est-bert-base-1xt4 bert-base --gpus 1xT4
run est-fits-gpt2-1xa100 gpt2 --gpus 1xA100 --seq 512
run est-no-fit-llama-2-70b-1xt4 llama-2-70b --gpus 1xT4
run est-hf-llama-3-8b-1xh100 tests/data/hf/llama-3-8b.config.json \
    --gpus 1xH100
run est-explain-tiny-llama tests/data/val/tiny-llama.yaml --explain
# Gemma-2's soft-capping: eager attention by default, sdpa refused.
run est-gemma-2-9b-8xa100 gemma-2-9b --gpus 8xA100 --no-search
run est-hf-gemma2-sdpa tests/data/hf-val/gemma2.config.json --attention sdpa
# Qwen3 (q/k norms) and Qwen3-MoE, from the library and from config.json.
run est-qwen3-8b-4xh100 qwen3-8b --gpus 4xH100 --zero 3 --no-search
run est-qwen3-30b-a3b-8xh100 qwen3-30b-a3b --gpus 8xH100
run est-hf-qwen3-coder-480b tests/data/hf/qwen3-coder-480b-a35b.config.json \
    --json --no-search --tp 1 --pp 1
# Llama 4: the library's Scout on 8 H100s (no plan fits: what would),
# Maverick with ZeRO-3 on 64, and the real Scout config.json, refused for
# its vision tower without --text-only.
run est-llama-4-scout-8xh100 llama-4-scout --gpus 8xH100
run est-llama-4-maverick-64xh100 llama-4-maverick --gpus 64xH100 --zero 3 \
    --recompute full --no-search
run est-hf-llama-4-scout-vision tests/data/hf/llama-4-scout-hf.config.json
run est-hf-llama-4-scout-text-only tests/data/hf/llama-4-scout-hf.config.json \
    --text-only --gpus 64xH100 --zero 3 --recompute full --no-search
run est-hf-llama-4-lora tests/data/hf/llama-4-scout-hf.config.json \
    --text-only --lora 16
# DeepSeek's MLA families: the done-when planner runs on 8 H100s, a
# config.json with its MTP note, Kimi-K2's config, and a refused plan.
run est-deepseek-v2-lite-8xh100 deepseek-v2-lite --gpus 8xH100
run est-deepseek-v3-8xh100 deepseek-v3 --gpus 8xH100
run est-hf-deepseek-v3 tests/data/hf/deepseek-v3-hf.config.json --json \
    --no-search --ep 8 --gpus 8xH100 --zero 3 --recompute full
run est-hf-kimi-k2 tests/data/hf/kimi-k2-base.config.json --no-search \
    --ep 8 --gpus 64xH100 --zero 3 --recompute full
run est-mla-tp-refused deepseek-v2-lite --gpus 8xH100 --tp 2 --no-search
# A multimodal config: its language model alone with --text-only and a
# note (LLaVA-1.5's sparse text_config read with LlamaConfig's defaults).
run est-hf-text-only-mistral-small-3 \
    tests/data/hf/mistral-small-3-24b.config.json --text-only \
    --gpus 8xH100 --zero 3 --seq 2048 --no-search
run est-hf-text-only-llava-defaults tests/data/hf/llava-1.5-7b-hf.config.json \
    --text-only
# Gemma-3 (local/global attention): the library model at a sequence past
# its window with sdpa (the local layers' masks), a multimodal config with
# --text-only (its sparse text_config read with Gemma3TextConfig's
# defaults), and what is refused with a window.
run est-gemma-3-1b-1xa100 gemma-3-1b --gpus 1xA100 --seq 8192 --no-search
run est-hf-text-only-gemma-3-27b-6l \
    tests/data/hf/gemma-3-27b-6l.config.json --text-only --gpus 1xH100 \
    --no-search
run est-gemma-3-lora-refused gemma-3-1b --lora 16
# gpt-oss: sinks (eager only: sdpa refused), experts with biases, local
# layers; its MXFP4 config planned dequantized, with a note.
run est-gpt-oss-20b-8xh100 gpt-oss-20b --gpus 8xH100 --no-search --zero 3
run est-hf-gpt-oss-20b-mxfp4 tests/data/hf/gpt-oss-20b.config.json \
    --gpus 8xH100 --no-search --zero 3 --seq 8192
run est-gpt-oss-sdpa-refused gpt-oss-120b --attention sdpa
run est-gemma-3-transformers-4-refused gemma-3-1b --transformers 4.57

# The planner and parallelism.
run plan-llama-3.1-70b-16xh100 models/llama-3.1-70b.yaml --gpus 16xH100
run plan-pp-stages models/llama-3.1-70b.yaml --gpus 16xH100 --pp 4 --tp 4 \
	--zero 1 --recompute full --grad-accum 16
run plan-pp-stages-json models/llama-3.1-70b.yaml --gpus 16xH100 --pp 4 \
	--tp 4 --zero 1 --recompute full --grad-accum 16 --json
run plan-moe-mixtral-ep models/mixtral-8x7b.yaml --gpus 16xH100 --ep 8
run plan-moe-deepseek deepseek-moe-16b --gpus 8xA100
run plan-multi-node llama-3.1-405b --gpus 128xH100 --nodes 16
run plan-multi-node-gpus-per-node llama-3.1-70b --gpus H100 --nodes 4 \
	--gpus-per-node 8 --seq 4096
run plan-no-fit llama-3.1-405b --gpus 8xRTX4090
run plan-min-gpus llama-3.1-70b --gpus A100 --min-gpus --seq 4096
run plan-max-seq llama-3-8b --gpus 8xH100 --zero 3 --recompute full --max-seq
run plan-fsdp llama-3-8b --gpus 8xH100 --framework fsdp1 --fsdp full
# FSDP2 (per-parameter sharding, the all-gather output kept to the next
# block, gradients of trainable parameters only), and FSDP1 LoRA with the
# adapters in their block's unit: with use_orig_params the frozen weights'
# gradients are made; without it FSDP1 refuses the unit.
run plan-fsdp2-keep llama-3-8b --gpus 8xH100 --framework fsdp2 --fsdp full \
	--reshard-after-forward no --no-search
run est-fsdp1-lora-block llama-2-7b --gpus 2xA100 --fsdp full --lora 16 \
	--fsdp-lora-wrap block --no-search
run plan-bad-fsdp1-lora-unit llama-2-7b --gpus 2xA100 --fsdp full --lora 16 \
	--fsdp-lora-wrap block --fsdp-orig-params no
run plan-megatron-distopt llama-3-8b --gpus 8xH100 --framework megatron \
	--precision bf16-master --zero 1 --tp 2 --no-search
run plan-bad-cp-eager llama-3-8b --gpus 8xH100 --cp 2 --attention eager
run plan-bad-ep-dense llama-3-8b --gpus 8xH100 --ep 2
run plan-bad-pp-deep gpt2 --gpus 16xH100 --pp 16
# --recompute-stride: torchtitan's every-N-th-block checkpointing; the
# planner applies it to the recompute mode it picks.
run plan-recompute-stride llama-3.1-70b --gpus 16xH100 --recompute full \
	--recompute-stride 2 --seq 4096
run est-recompute-stride-json llama-3-8b --gpus 1xH100 --recompute full \
	--recompute-stride 4 --no-search --json
run cli-recompute-stride-zero gpt2 --recompute-stride 0
run cli-recompute-stride-deep gpt2 --recompute full --recompute-stride 13
run plan-bad-tp-across-nodes llama-3-8b --gpus 16xH100 --tp 16
run plan-bad-nodes llama-3-8b --gpus 12xH100 --nodes 5

# Which card: compare.
run compare-llama-3.1-70b compare models/llama-3.1-70b.yaml --tokens 1e9
run compare-gpt2-json compare gpt2 --tokens 1e9 --json
run compare-gpt2-csv compare gpt2 --tokens 1e9 --csv --sort time
run compare-filtered compare llama-3-8b --tokens 2e9 --vendor NVIDIA \
	--segment datacenter --min-mem 70 --explain
run compare-lora compare llama-2-7b --tokens 1e8 --lora 16 --quant nf4 \
	--sort gpus
# The job's shape: a deadline (the fewest GPUs in time), a budget (the
# fastest within it), a recipe's global batch; and their errors.
run compare-deadline compare llama-3.1-70b --tokens 1e11 --deadline 30d \
	--segment datacenter
run compare-budget compare llama-3-8b --tokens 1e10 --budget 2000 \
	--segment datacenter
run compare-global-batch compare llama-3-8b --tokens 1e9 --global-batch 1024 \
	--seq 8192 --vendor NVIDIA --segment datacenter
run cli-compare-bad-deadline compare gpt2 --tokens 1e9 --deadline 3x
run cli-compare-global-batch-grad-accum compare gpt2 --tokens 1e9 \
	--global-batch 64 --grad-accum 4
run cli-compare-global-batch-micro-batch compare gpt2 --tokens 1e9 \
	--global-batch 63 --micro-batch 2

# Fine-tuning.
run ft-qlora-4090 models/llama-2-7b.yaml --gpus 1xRTX4090 --lora 64 \
	--quant nf4 --seq 2048 --micro-batch 4
run ft-qlora-paged-json models/llama-2-7b.yaml --gpus 1xRTX4090 --lora 64 \
	--quant nf4 --seq 2048 --micro-batch 4 --optimizer paged-adamw-8bit --json
run ft-lora-all-linear llama-3-8b --gpus 1xA100 --lora 16 \
	--lora-targets all-linear --lora-dropout 0.05 --seq 4096 --explain
run ft-offload llama-3.1-70b --gpus 8xA100 --zero 3 --offload optimizer+params \
	--host-mem 512 --recompute full --seq 4096
run ft-offload-nvme llama-3.1-70b --gpus 8xA100 --zero 3 --offload optimizer \
	--offload-nvme --recompute full --seq 4096
# Issue 17, finding 6: the GPUs have room but the node's host RAM does
# not: text, JSON (fits false, host_fits false, verdict does_not_fit) and
# CSV agree with the exit status 1.
run host-mem-over llama-3-8b --gpus 8xH100 --zero 3 --offload optimizer \
	--host-mem 64 --no-search --recompute full
run host-mem-over-json llama-3-8b --gpus 8xH100 --zero 3 --offload optimizer \
	--host-mem 64 --no-search --recompute full --json
run host-mem-over-csv llama-3-8b --gpus 8xH100 --zero 3 --offload optimizer \
	--host-mem 64 --no-search --recompute full --csv
run host-mem-over-nogpus-json llama-3-8b --zero 3 --offload optimizer \
	--host-mem 64 --recompute full --json
# Without checkpointing it is refused (every save would be packed: not
# modelled; the planner, when it may, picks a checkpointing recompute).
run ft-activation-offload llama-3-8b --gpus 8xH100 --zero 3 --activation-offload \
	--no-search
# Under checkpointing: torchtune's OffloadActivations (the blocks' inputs
# to the host past its stash of five); with a stride it is refused.
run ft-activation-offload-ac llama-3.1-8b --gpus 1xH100 --trainer torchtune \
	--recompute full --activation-offload --optimizer-in-backward \
	--no-search --seq 4096 --micro-batch 2
run ft-activation-offload-stride llama-3.1-8b --gpus 1xH100 --recompute full \
	--recompute-stride 2 --activation-offload --no-search
run ft-fp8 llama-3-8b --gpus 8xH100 --precision fp8 --zero 1 --no-search
run ft-chunked-loss llama-3-8b --gpus 1xH100 --loss chunked --zero 0 \
	--recompute full --optimizer adamw-8bit --no-search
# torchtune's chunked output (--loss chunked-output): the logits are all
# kept, the upcast and the loss go chunk by chunk; refused where torchtune
# does not run it as modelled.
run ft-chunked-output-loss tests/data/published_gpu/models/llama-3.2-3b.yaml \
	--gpus 1xA100-80G-SXM --no-search --precision bf16 --micro-batch 2 \
	--seq 4096 --recompute full --lora 64 --lora-dtype bf16 \
	--lora-targets q,v,o,gate,up,down --loss chunked-output --explain
run ft-chunked-output-refused gpt2 --loss chunked-output \
	--precision bf16-mixed --lora 8 --lora-targets q,head
run ft-chunked-output-bert bert-base --loss chunked-output --precision bf16
run ft-adafactor gpt2-xl --gpus 1xA10 --optimizer adafactor --no-search
run ft-bad-target gpt2 --lora 8 --lora-targets gate
run ft-bad-target-name gpt2 --lora 8 --lora-targets q,vv
run ft-head-chunked-loss gpt2 --lora 8 --lora-targets q,head --loss chunked
run ft-bad-rank gpt2 --lora 5000
run ft-bad-quant-no-lora llama-2-7b --quant nf4
run ft-bad-quant-cpu llama-2-7b --quant nf4 --lora 8 --device cpu
run ft-bad-nvme llama-2-7b --offload-nvme
run ft-bad-offload-unsharded llama-2-7b --gpus 1xA100 --offload optimizer \
	--zero 0
run ft-offload-planned llama-3-8b --gpus 1xRTX4090 --offload optimizer \
	--seq 2048

# Saved plans (--plan FILE, what the TUI's s writes): the keys count as
# options, options given on the command line win; malformed files exit 3
# with file:line:col.
run plan-file-good models/llama-3-8b.yaml \
	--plan tests/data/plans/llama-3-8b-2xa100.yaml
run plan-file-cli-wins models/llama-3-8b.yaml \
	--plan tests/data/plans/llama-3-8b-2xa100.yaml --micro-batch 2 \
	--gpus 4xA100
run plan-file-partial llama-3-8b --plan tests/data/plans/partial.yaml
run plan-file-bad-key llama-3-8b --plan tests/data/plans/bad-key.yaml
run plan-file-bad-value llama-3-8b --plan tests/data/plans/bad-value.yaml
run plan-file-bad-version llama-3-8b \
	--plan tests/data/plans/bad-version.yaml
run plan-file-no-version llama-3-8b --plan tests/data/plans/no-version.yaml
run plan-file-bad-gpus llama-3-8b --plan tests/data/plans/bad-gpus.yaml
run plan-file-not-a-map llama-3-8b --plan tests/data/plans/not-a-map.yaml
run plan-file-missing llama-3-8b --plan tests/data/plans/no-such-plan.yaml
run plan-file-fused-alias gpt2 --plan tests/data/plans/fused-alias.yaml --json

# A DeepSpeed JSON config (--deepspeed-config FILE): issue 14's command
# with the ZeRO-3 + CPU offload + "auto" config Hugging Face users write
# (notes say what "auto" became), options given win (with a note),
# malformed files exit 3 with file:line:col, keys that change memory but
# are not modelled are warnings.
run ds-zero3-offload-lora llama-2-70b --gpus 8xA100 --lora 16 \
	--deepspeed-config tests/data/deepspeed/zero3-offload-auto.json
run ds-cli-wins llama-2-70b --gpus 8xA100 --lora 16 --zero 2 \
	--micro-batch 2 --no-search \
	--deepspeed-config tests/data/deepspeed/zero3-offload-auto.json
run ds-zero2-warnings llama-2-7b --gpus 8xA100 --no-search \
	--deepspeed-config tests/data/deepspeed/zero2-warnings.json
run ds-bad-syntax llama-2-7b --deepspeed-config \
	tests/data/deepspeed/bad-syntax.json
run ds-bad-type llama-2-7b --deepspeed-config \
	tests/data/deepspeed/bad-type.json
run ds-bad-stage llama-2-7b --deepspeed-config \
	tests/data/deepspeed/bad-stage.json
run ds-unknown-key llama-2-7b --deepspeed-config \
	tests/data/deepspeed/unknown-key.json
run ds-missing llama-2-7b --deepspeed-config \
	tests/data/deepspeed/no-such-config.json

# --optimizer-impl (torch.optim's foreach= / fused=): the first option
# added as one row of the option table.
# The software stack: CUDA before 11.7 loads every kernel with the context
# (1343 MiB measured on a V100, CUDA 11.2); PyTorch 2.0 on Hopper uses the
# pre-Hopper cuBLAS workspace; a version that is not one is refused.
run stack-cuda-11.2-eager bert-large --gpus 1xV100-16G-SXM2 --cuda 11.2 \
	--seq 512 --micro-batch 1 --precision fp32 --no-search
run stack-torch-2.0-hopper gpt2 --gpus 1xH100 --torch 2.0 --seq 256 \
	--no-search --json
run stack-bad-torch gpt2 --torch 2.x
run stack-bad-cuda gpt2 --cuda 8.0
# --transformers: whose modelling code a Hugging Face model runs (named
# in the report and the JSON; a torch-nn model names none); a plan file
# may carry it.
run stack-transformers-4.40 llama-3-8b --gpus 1xH100 --transformers 4.40 \
	--seq 2048 --no-search --json
run stack-transformers-torch-nn tests/data/val/torchnn-enc.yaml \
	--device cpu --transformers 4.40
run stack-bad-transformers gpt2 --transformers 3.9
run plan-file-transformers gpt2 --plan tests/data/plans/transformers.yaml
# --alloc-conf: the reserved level is the simulated caching allocator under
# the job's PYTORCH_CUDA_ALLOC_CONF; the Profile line names the settings;
# cudaMallocAsync is not simulated; a bad value is a usage error.
run alloc-conf-defaults gpt2 --gpus 1xA100 --seq 512 --no-search \
	--alloc-conf defaults
run alloc-conf-expandable gpt2 --gpus 1xA100 --seq 512 --no-search \
	--alloc-conf expandable_segments:True
run alloc-conf-async-json gpt2 --gpus 1xA100 --seq 512 --no-search \
	--alloc-conf backend:cudaMallocAsync --json
run alloc-conf-bad gpt2 --gpus 1xA100 --alloc-conf max_split_size_mb:10
run alloc-conf-typo gpt2 --gpus 1xA100 --alloc-conf expandable_segment:True
# A card whose software stack nobody has measured says so.
run est-mi300x-unmeasured-stack llama-3-8b --gpus 1xMI300X --no-search
run opt-impl-for-loop gpt2 --optimizer-impl for-loop --seq 256 --gpus 1xA100
run opt-impl-foreach-cpu gpt2 --optimizer-impl foreach --seq 256 \
	--device cpu --precision fp32 --json
run opt-impl-fused-alias gpt2 --fused-optimizer --seq 256 --json
run opt-impl-bad gpt2 --optimizer-impl fusd
# DeepSpeed fuses unless an implementation is given: then it is the
# client torch.optim optimizer's, stepped on the flat fp32 partition.
run opt-impl-deepspeed-fuses gpt2 --zero 2 --gpus 2xA100 --json
run opt-impl-deepspeed-client gpt2 --optimizer-impl for-loop --zero 2 \
	--gpus 2xA100 --json
# torchtune's optimizer in backward: no gradient set, no optimizer phase;
# refused with gradient accumulation and under DeepSpeed.
run oib-llama llama-2-7b --optimizer-in-backward --precision bf16 \
	--optimizer paged-adamw --micro-batch 2 --seq 512 --recompute full \
	--gpus 1xRTX4090 --no-search
run oib-grad-accum gpt2 --optimizer-in-backward --grad-accum 4
run oib-zero gpt2 --optimizer-in-backward --zero 2 --gpus 2xA100
# torchtitan's op-level checkpointing: q, v, gate and down and the CUDA
# SDPA outputs kept per block; with a stride; refused for MoE models and
# QLoRA.  Framework refusals (issue 14, item 6): DeepSpeed's pipeline with
# ZeRO-2/3, QLoRA under tensor parallelism; the planner never proposes
# them either (plan-zero-pp: ZeRO and PP open, ZeRO-3 without PP wins).
run recompute-op llama-3.1-8b --recompute op --attention sdpa --optimizer sgd \
	--precision bf16 --micro-batch 4 --seq 8192 --gpus 1xH100 --no-search
run recompute-op-stride llama-3.1-8b --recompute op --recompute-stride 2 \
	--precision bf16 --seq 4096 --gpus 1xH100 --no-search --json
run recompute-op-moe mixtral-8x7b --recompute op --gpus 8xH100
run recompute-op-qk-norm qwen3-8b --recompute op --gpus 1xH100
run recompute-op-quant llama-2-7b --recompute op --lora 16 --quant nf4 \
	--gpus 1xA100
run refuse-zero3-pp llama-2-7b --zero 3 --pp 2 --gpus 8xA100 --no-search
run refuse-zero2-pp-search llama-2-7b --zero 2 --pp 2 --gpus 8xA100
run refuse-qlora-tp llama-2-7b --lora 16 --quant nf4 --tp 2 --gpus 2xA100 \
	--no-search
# torchao float8 linears (torchtitan's converter): the casts' transients
# at down_proj's backward under full recompute (against float8-none);
# FSDP2's fp8 all-gather; refused on a card without fp8 tensor cores
# (and so is Transformer Engine's fp8), with rowwise all-gather, TP, CPU.
run float8-none llama-2-7b --seq 4096 --micro-batch 4 --optimizer sgd \
	--precision bf16 --gpus 1xH100 --no-search --recompute full
run float8-tensorwise llama-2-7b --seq 4096 --micro-batch 4 --optimizer sgd \
	--precision bf16 --gpus 1xH100 --no-search --recompute full \
	--float8 tensorwise
run float8-all-gather llama-3.1-8b --float8 tensorwise --float8-all-gather \
	--gpus 8xH100 --framework fsdp2 --fsdp full --seq 4096 --no-search --json
run float8-a100 llama-3.1-8b --float8 rowwise --gpus 8xA100
run fp8-te-a100 llama-3.1-8b --precision fp8 --gpus 8xA100 --no-search
run float8-rowwise-all-gather llama-3.1-8b --float8 rowwise \
	--float8-all-gather --framework fsdp2 --fsdp full --gpus 8xH100
run float8-tp llama-3.1-8b --float8 tensorwise --tp 2 --gpus 8xH100 \
	--no-search
run float8-cpu gpt2 --float8 tensorwise --device cpu
# Compiled (--compile): Inductor fuses each cast, which holds its fp8
# result alone; down_proj's backward peak against float8-tensorwise.
run float8-compile llama-2-7b --seq 4096 --micro-batch 4 --optimizer sgd \
	--precision bf16 --gpus 1xH100 --no-search --recompute full \
	--float8 tensorwise --compile
# Async TP: the symmetric-memory workspace (2 b s/tp h in bf16) at the
# device level; refused without TP and SP, and without --compile
# (torchtitan's maybe_enable_async_tp: Inductor does the fusion).
run async-tp llama-3.1-8b --gpus 8xH100 --tp 8 --sp --async-tp --seq 8192 \
	--compile --no-search
run async-tp-json llama-3.1-8b --gpus 8xH100 --tp 4 --sp --async-tp \
	--compile --seq 8192 --no-search --json
run async-tp-no-sp llama-3.1-8b --gpus 8xH100 --tp 8 --async-tp --compile \
	--no-search
run async-tp-no-compile llama-3.1-8b --gpus 8xH100 --tp 8 --sp --async-tp \
	--no-search
# The Plan line names the trainer, the DeepSpeed config and the float8,
# async-TP and FSDP knobs when not at their defaults.
run plan-knobs llama-3.1-8b --gpus 8xH100 --trainer torchtitan \
	--recompute op --compile --float8 rowwise --no-search
run plan-knobs-fsdp1 llama-2-7b --gpus 2xA100 --trainer hf --fsdp full \
	--lora 16 --fsdp-prefetch post --fsdp-lora-wrap block --no-search
run plan-knobs-orig-params llama-2-7b --gpus 8xA100 --framework fsdp1 \
	--fsdp full --fsdp-orig-params no --no-search
run plan-knobs-json llama-3.1-8b --gpus 8xH100 --framework fsdp2 \
	--fsdp full --float8 tensorwise --float8-all-gather \
	--reshard-after-forward no --no-search --json
run float8-compare compare llama-3.1-8b --tokens 2e9 --float8 tensorwise \
	--vendor NVIDIA --segment datacenter
# torchtune 0.1's single-device QLoRA: building the model (torchao 0.1's
# to_nf4, one deep copy per layer) reserves more than the step; refused
# on two GPUs (the distributed recipes empty the cache first).
run load-torchtune-qlora llama-2-7b --load torchtune-0.1 --precision bf16 \
	--lora 8 --lora-targets q,k,v,o,gate,up,down --lora-dtype bf16 \
	--quant nf4 --kbit-prep keep --micro-batch 2 --seq 512 \
	--recompute full --gpus 1xRTX4090 --no-search
run load-torchtune-json llama-2-7b --load torchtune-0.1 --precision bf16 \
	--lora 8 --lora-targets q,v --lora-dtype bf16 --micro-batch 2 \
	--seq 512 --recompute full --gpus 1xRTX4090 --no-search --json
run load-two-gpus llama-2-7b --load torchtune-0.1 --precision bf16 \
	--gpus 2xRTX4090 --no-search
run load-partial-nf4 llama-2-7b --load torchtune-0.1 --precision bf16 \
	--lora 8 --lora-targets q,v --quant nf4 --gpus 1xRTX4090 --no-search
# torch.compile of each block (and the loss): the partitioner's saved set;
# refused where it was not measured (eager attention, non-Llama blocks,
# a compiled loss other than the cross-entropy of the logits or
# torchtune's chunked one).
run compile-llama llama-3-8b --compile --attention sdpa --precision bf16 \
	--seq 4096 --micro-batch 2 --gpus 1xA100 --no-search --json
run compile-loss-rc llama-3-8b --compile --compile-loss --attention sdpa \
	--recompute full --gpus 1xH100 --no-search
run compile-eager llama-3-8b --compile --attention eager
run compile-gpt2 gpt2 --compile --compile-loss --attention sdpa
run compile-loss-chunked llama-3-8b --compile-loss --attention sdpa \
	--loss chunked
# The checkpoint inside the compiled block (torchtitan's order, the
# default with --recompute op): the full policy's JSON names it; a note
# where it has no effect; selective recompute (eager attention's core)
# refused under --compile.
run compile-wraps-ckpt llama-3-8b --compile --compile-wraps-checkpoint \
	--recompute full --attention sdpa --gpus 1xH100 --no-search --json
run compile-wraps-ckpt-inert llama-3-8b --compile --compile-wraps-checkpoint \
	--attention sdpa --gpus 1xH100 --no-search
run compile-selective llama-3-8b --compile --recompute selective \
	--attention sdpa
run compile-op-offload llama-3-8b --compile --recompute op --attention sdpa \
	--activation-offload --gpus 1xH100 --no-search
# torchtune's compiled chunked loss: each chunk's cross-entropy compiled.
# (logits and loss 0 B, the peak in backward; 12.72 GiB of them in the
# loss phase with the loss eager).
run compile-loss-chunked-output llama-3-8b --trainer torchtune --compile \
	--compile-loss --attention sdpa --seq 8192 --micro-batch 2 \
	--recompute full --optimizer-in-backward --gpus 1xA100 --no-search

# --trainer: each library's defaults for what was not given (the report
# lists them with their sources, and what is not modelled); an explicit
# option wins over the preset; hf's adapter dtype and k-bit preparation
# follow the sharding.
run trainer-hf-fsdp-qlora llama-2-7b --gpus 2xA100 --trainer hf --fsdp full \
	--lora 16 --quant nf4 --explain
run trainer-hf-one-gpu-json llama-2-7b --gpus 1xA100 --trainer hf --lora 16 \
	--quant nf4 --no-search --json
run trainer-hf-old-transformers gpt2 --trainer hf --transformers 4.31 \
	--gpus 1xA100 --seq 512 --no-search
run trainer-explicit-wins llama-2-7b --gpus 1xA100 --trainer hf --lora 16 \
	--quant nf4 --kbit-prep keep --lora-dtype bf16 --optimizer-impl foreach \
	--no-search
run trainer-torchtune-lora tests/data/published_gpu/models/llama-3.2-3b.yaml \
	--gpus 1xA100-80G-SXM --trainer torchtune --lora 64 --recompute full \
	--micro-batch 2 --seq 4096 --no-search
run trainer-torchtune-2gpu-json llama-2-7b --gpus 2xRTX4090 --trainer torchtune \
	--lora 8 --recompute full --seq 2048 --no-search --json
run trainer-torchtune-bert bert-base --trainer torchtune --seq 128 \
	--gpus 1xA100 --no-search
run trainer-torchtune-autocast gpt2 --trainer torchtune --precision bf16-mixed \
	--seq 512 --gpus 1xA100 --no-search
run trainer-torchtitan llama-3.1-8b --gpus 8xH100 --trainer torchtitan \
	--no-search
run trainer-plain gpt2 --trainer plain --gpus 1xA100 --seq 512 --no-search
# torchtune's QLoRA: the base is torchao's NF4Tensor (--quant-lib torchao,
# set by the trainer with --quant), compiled per block as the Llama-3.2
# flags table runs it; torchao has NF4 only, to_nf4 needs multiples of
# 64 x 256 elements, and bitsandbytes under --compile stays refused.
run trainer-torchtune-qlora-compile \
	tests/data/published_gpu/models/llama-3.2-3b.yaml --gpus 1xA100-80G-SXM \
	--trainer torchtune --lora 64 --lora-targets q,v,o,gate,up,down \
	--quant nf4 --recompute full --compile --micro-batch 2 --seq 4096 \
	--no-search --json
run refuse-torchao-int8 llama-2-7b --trainer torchtune --lora 8 \
	--quant int8 --gpus 1xA100 --no-search
run refuse-torchao-shape tests/data/val/tiny-llama.yaml --device cpu \
	--precision bf16 --lora 8 --quant nf4 --quant-lib torchao --seq 64
run refuse-compile-bnb llama-2-7b --lora 8 --quant nf4 --compile \
	--attention sdpa --gpus 1xA100 --no-search
run trainer-bad gpt2 --trainer hff
# --explain names the framework's buffers as the frameworks do (one
# table, fw_buffers in mem.c): FSDP's unsharded flat parameter and
# reduce-scatter gradient, ZeRO-3's prefetch/gather, IPG bucket and
# persistent parameters, DDP's buckets.
run explain-fsdp-qlora-hf llama-2-7b --gpus 2xA100 --trainer hf --fsdp full \
	--lora 16 --quant nf4 --no-search --explain
run explain-ds-zero3-offload llama-2-70b --gpus 8xA100 --lora 16 \
	--deepspeed-config tests/data/deepspeed/zero3-offload-auto.json --explain
run explain-ds-zero3-offload-hf llama-2-70b --gpus 8xA100 --trainer hf \
	--lora 16 --deepspeed-config tests/data/deepspeed/zero3-offload-auto.json \
	--explain
run explain-ddp gpt2 --gpus 2xA100 --zero 0 --seq 512 --no-search --explain
run explain-zero2 gpt2 --gpus 4xA100 --zero 2 --seq 512 --no-search --explain
# Options that refine one the plan has off are a note on stderr, not an
# error (the exit status is the estimate's).
run note-kbit-without-quant gpt2 --kbit-prep keep --seq 128 --device cpu \
	--precision fp32
run note-lora-options-without-lora gpt2 --lora-dropout 0.1 --lora-dtype bf16 \
	--lora-targets q,v --seq 128 --device cpu --precision fp32
run note-stride-without-recompute gpt2 --recompute-stride 2 --seq 128 \
	--device cpu --precision fp32
run note-alloc-conf-cpu gpt2 --alloc-conf expandable_segments:True --seq 128 \
	--device cpu --precision fp32
# Encoder-decoders (T5): issue 15's done-when command, an explained
# estimate, what is refused, and --target-seq on a decoder.
run t5-base-a100 t5-base --seq 512 --target-seq 128 --gpus 1xA100
run explain-flan-t5-large tests/data/hf/flan-t5-large.config.json --seq 256 \
	--target-seq 64 --gpus 1xA100 --recompute full --no-search --explain
run refuse-t5-sdpa t5-base --attention sdpa --gpus 1xA100 --no-search
run refuse-t5-tp t5-base --tp 2 --gpus 2xA100 --no-search
run refuse-t5-lora t5-base --lora 8 --gpus 1xA100 --no-search
run refuse-target-seq-decoder gpt2 --target-seq 64 --seq 128 --device cpu \
	--precision fp32

# Layer-graph models (ResNets): an estimate with --image, the CPU replay
# with --explain, the plans they refuse, --image on a transformer, and
# the options that do nothing for them (notes).
run est-lgraph-resnet50-rtx4090 resnet50 --image 224 --micro-batch 64 \
	--gpus 1xRTX4090
run est-lgraph-resnet18-cpu-json resnet18 --device cpu --precision fp32 \
	--optimizer sgd-momentum --micro-batch 8 --image 64 --json
run explain-lgraph-resnet18-cpu resnet18 --device cpu --micro-batch 4 \
	--image 96 --explain
run lgraph-refuse-tp resnet50 --gpus 2xA100 --tp 2
run lgraph-refuse-recompute resnet18 --gpus 1xA100 --recompute full
run lgraph-image-on-transformer gpt2 --image 224 --device cpu
run lgraph-refuse-max-seq resnet50 --gpus 1xA100 --max-seq
run lgraph-image-changes-linear tests/data/lgraph/flat-head.yaml --device cpu \
	--image 64
run note-lgraph-seq resnet18 --seq 128 --attention eager --device cpu \
	--micro-batch 2 --image 32
# Parallel attention + MLP blocks (issue 15): Phi-2 from the library and
# from its config.json (the dropout warning), and a combination that was
# not measured, refused.
run est-phi-2-1xa100 phi-2 --gpus 1xA100 --seq 2048
run est-hf-phi-2-explain tests/data/hf/phi-2-hf.config.json --seq 2048 \
	--micro-batch 8 --device cpu --precision bf16-mixed --explain
run refuse-phi-2-lora phi-2 --lora 16 --gpus 1xA100
# GPT-NeoX: Pythia-6.9B from the library; gpt-neox-20b's config (gelu_fast
# is not modelled: read as gelu, with a warning).
run est-pythia-6.9b-2xa100 pythia-6.9b --gpus 2xA100 --zero 3 --no-search
run est-hf-gpt-neox-20b tests/data/hf/gpt-neox-20b.config.json --gpus 8xH100 \
	--zero 3 --no-search
run refuse-pythia-tp pythia-6.9b --gpus 2xA100 --tp 2
# OPT: OPT-1.3B from the library (a position table of 2050 rows).
run est-opt-1.3b-1xa100 opt-1.3b --gpus 1xA100 --seq 2048
run refuse-opt-recompute-op opt-1.3b --gpus 1xA100 --recompute op
# BART and Whisper: issue 15's done-when commands, an explained estimate
# of a real config, and what is refused (flash, fp16, a Whisper length
# its class refuses, BART past its position table).
run bart-base-a100 bart-base --seq 512 --target-seq 128 --gpus 1xA100
run whisper-small-rtx4090 whisper-small --gpus 1xRTX4090
run explain-bart-large-cnn tests/data/hf/bart-large-cnn.config.json \
	--seq 256 --target-seq 64 --gpus 1xA100 --no-search --explain
run refuse-bart-flash bart-base --attention flash --gpus 1xA100 --no-search
run refuse-bart-fp16 bart-base --precision fp16-mixed --gpus 1xA100 \
	--no-search
run refuse-bart-seq bart-base --seq 2048 --gpus 1xA100 --no-search
run refuse-whisper-seq whisper-small --seq 3000 --gpus 1xA100 --no-search
run refuse-whisper-target whisper-small --target-seq 512 --gpus 1xA100 \
	--no-search
run refuse-whisper-max-seq whisper-small --gpus 1xA100 --max-seq
# ModernBERT: the base model from the library, ModernBERT-large's config
# (a classification checkpoint, planned with the MLM head), and what was
# not measured, refused (tests/bad/8[01]-hf-modernbert-*: a biased norm, a
# layer order other than ModernBERT's).
run est-modernbert-base-1xa100 modernbert-base --gpus 1xA100 --seq 8192
run est-hf-modernbert-large-explain \
	tests/data/hf/modernbert-large-zeroshot.config.json --seq 1024 \
	--micro-batch 8 --device cpu --precision bf16-mixed --attention eager \
	--explain
run refuse-modernbert-tp modernbert-base --gpus 2xA100 --tp 2
run refuse-modernbert-lora modernbert-base --gpus 1xA100 --lora 16
# DeBERTa-v3: the base model from the library (eager attention by
# default), its config on the CPU, and refusals
# (tests/bad/82-hf-deberta-v2-xxlarge.json: DeBERTa-v2-xxlarge, whose
# conv layer is not lowered).
run est-deberta-v3-base-1xa100 deberta-v3-base --gpus 1xA100
run est-hf-deberta-v3-base-explain tests/data/hf/deberta-v3-base.config.json \
	--seq 512 --micro-batch 8 --device cpu --precision bf16-mixed --explain
run refuse-deberta-v3-sdpa deberta-v3-base --gpus 1xA100 --attention sdpa
run refuse-deberta-v3-zero3 deberta-v3-base --gpus 2xA100 --zero 3
# Vision transformers (ViT, issue 15): the done-when command, another
# resolution (the position table interpolated), its CPU replay from
# google/vit-base-patch16-224's config.json, a resolution that is not
# whole patches, what is refused, and --seq (a note).
run est-vit-b-16-a100 vit-b-16 --micro-batch 128 --gpus 1xA100
run est-vit-b-16-image-384 vit-b-16 --image 384 --micro-batch 32 --gpus 1xA100
run explain-hf-vit-base-cpu tests/data/hf/vit-base-patch16-224.config.json \
	--device cpu --micro-batch 4 --precision fp32 --explain
run refuse-vit-image vit-b-16 --image 200 --gpus 1xA100
run refuse-vit-tp vit-b-16 --tp 2 --gpus 2xA100 --no-search
run refuse-vit-lora vit-b-16 --lora 8 --gpus 1xA100
run note-vit-seq vit-b-16 --seq 512 --device cpu --micro-batch 2
run refuse-vit-max-seq vit-b-16 --gpus 1xA100 --max-seq
# CLIP (issue 15): ViT-L/14 from the library, the CPU replay of
# openai/clip-vit-base-patch32's config.json, and what is refused.
run est-clip-vit-l-14-a100 clip-vit-l-14 --gpus 1xA100
run explain-hf-clip-b32-cpu tests/data/hf/clip-vit-base-patch32.config.json \
	--device cpu --micro-batch 4 --precision bf16-mixed --explain
run refuse-clip-zero3 clip-vit-l-14 --gpus 2xA100 --zero 3 --no-search
run refuse-clip-seq clip-vit-l-14 --seq 100 --gpus 1xA100 --no-search
# LLaVA-1.5-7B (the CLIP tower frozen): the library model on 8 H100s, its
# config.json on the CPU, a sequence that cannot hold the image tokens, and
# what is refused.
run est-llava-1.5-7b-8xh100 llava-1.5-7b --gpus 8xH100 --seq 2048 --micro-batch 4
run explain-hf-llava-cpu tests/data/hf/llava-1.5-7b-hf.config.json \
	--device cpu --micro-batch 1 --seq 1024 --precision bf16-mixed --explain
run refuse-llava-seq llava-1.5-7b --seq 512 --gpus 1xH100 --no-search
run refuse-llava-zero3 llava-1.5-7b --gpus 8xH100 --zero 3 --no-search
# Mamba-2 (issue 15): Mamba-Codestral-7B from the library on the CPU (the
# torch_forward path measured there) and on a GPU (the note on mamba_ssm's
# fused kernel), its config.json, and a combination not measured, refused.
run est-mamba-codestral-7b-cpu mamba-codestral-7b --device cpu --seq 2048 \
	--explain
run est-mamba-codestral-7b-1xh100 mamba-codestral-7b --gpus 1xH100 \
	--seq 2048 --recompute full --no-search
run est-hf-mamba-codestral-7b tests/data/hf/mamba-codestral-7b-hf.config.json \
	--device cpu --seq 1024 --precision bf16
run refuse-mamba-codestral-tp mamba-codestral-7b --gpus 2xH100 --tp 2
# A Mamba-2 hybrid (Bamba): the validation config (an attention block
# between two Mamba-2 blocks) on the CPU, and LoRA on it, refused.
run est-hf-bamba-cpu tests/data/hf-val/bamba.config.json --device cpu \
	--micro-batch 2 --seq 64 --attention eager --explain
run refuse-bamba-lora tests/data/hf-val/bamba.config.json --gpus 1xA100 \
	--lora 16
run est-own-bamba-tiny tests/data/ssm/bamba-tiny.yaml --device cpu \
	--micro-batch 2 --seq 64 --attention eager
# Nemotron-H: the validation config (Mamba-2, attention and relu2 MLP
# blocks) on the CPU, LoRA on it refused, and the library's 8B on an H200
# (tests/bad/90-hf-nemotron-h-moe.json: a MoE block, not modelled).
run est-hf-nemotron-h-cpu tests/data/hf-val/nemotron-h.config.json \
	--device cpu --micro-batch 2 --seq 64 --attention eager --explain
run refuse-nemotron-h-lora tests/data/hf-val/nemotron-h.config.json \
	--gpus 1xA100 --lora 16
run est-nemotron-h-8b-1xh200 nemotron-h-8b --gpus 1xH200 --seq 4096 \
	--recompute full --no-search
# Zamba2: the validation config (Mamba-2 and hybrid blocks calling two
# shared transformer blocks) on the CPU, LoRA on it refused
# (tests/bad/92-hf-zamba2-untied.json: tie_word_embeddings false, which
# shares nothing in transformers 5.24, refused).
run est-hf-zamba2-cpu tests/data/hf-val/zamba2.config.json --device cpu \
	--micro-batch 2 --seq 64 --attention eager --explain
run refuse-zamba2-lora tests/data/hf-val/zamba2.config.json \
	--gpus 1xA100 --lora 16
run refuse-zamba2-grad-accum tests/data/hf-val/zamba2.config.json \
	--gpus 1xA100 --grad-accum 4
run est-own-zamba2-tiny tests/data/ssm/zamba2-tiny.yaml --device cpu \
	--micro-batch 2 --seq 64 --attention eager
# Jamba: the validation config (Mamba-1 blocks on the recurrent scan,
# attention, experts) on the CPU, LoRA on it refused, a tiny config known
# by its architectures alone, and the library's v0.1 on eight H200s.
run est-hf-jamba-cpu tests/data/hf-val/jamba.config.json --device cpu \
	--micro-batch 2 --seq 32 --attention eager --explain
run refuse-jamba-lora tests/data/hf-val/jamba.config.json --gpus 1xA100 \
	--lora 16
run est-hf-jamba-architectures tests/data/hf/jamba-tiny-architectures.config.json \
	--device cpu --seq 16
run est-jamba-v0.1-8xh200 jamba-v0.1 --gpus 8xH200 --seq 4096 \
	--recompute full --no-search
# Mamba (MambaForCausalLM, the same Mamba-1 mixer without the norms): the
# validation config on the CPU, and on a GPU (the note on mamba_ssm's
# mamba_inner_fn), --compile refused.
run est-hf-mamba-cpu tests/data/hf-val/mamba.config.json --device cpu \
	--micro-batch 2 --seq 32 --explain
run est-hf-mamba-1xa100 tests/data/hf-val/mamba.config.json --gpus 1xA100 \
	--micro-batch 2 --seq 1024 --no-search
run refuse-mamba-compile tests/data/hf-val/mamba.config.json --gpus 1xA100 \
	--compile
# Falcon-Mamba: the library's 7B on an H100, bf16 with full recompute.
run est-falcon-mamba-7b-1xh100 falcon-mamba-7b --gpus 1xH100 --seq 2048 --precision bf16 \
	--recompute full --no-search
# The two validation configs in the own schema: the same estimates
# (tests/bad/96 and 97: an expert offset and mamba.py's scan, refused).
run est-own-jamba-tiny tests/data/ssm/jamba-tiny.yaml --device cpu \
	--micro-batch 2 --seq 32 --attention eager --dropout 0
run est-own-mamba-tiny tests/data/ssm/mamba-tiny.yaml --device cpu \
	--micro-batch 2 --seq 32 --attention eager --dropout 0
# Zamba (v1): the validation config (Mamba-1 blocks of two mamba heads,
# hybrid blocks calling the one shared transformer block) on the CPU and
# in the own schema (the same estimate), on a GPU (the note on
# mamba_ssm's selective_scan_fn), LoRA and gradient accumulation refused
# (tests/bad/98-hf-zamba-untied.json: tie_word_embeddings false, which
# shares nothing in transformers 5.24, refused).
run est-hf-zamba-cpu tests/data/hf-val/zamba.config.json --device cpu \
	--micro-batch 2 --seq 32 --attention eager --explain
run est-own-zamba-tiny tests/data/ssm/zamba-tiny.yaml --device cpu \
	--micro-batch 2 --seq 32 --attention eager --dropout 0
run est-hf-zamba-1xa100 tests/data/hf-val/zamba.config.json --gpus 1xA100 \
	--micro-batch 2 --seq 1024 --no-search
run refuse-zamba-lora tests/data/hf-val/zamba.config.json --gpus 1xA100 \
	--lora 16
run refuse-zamba-grad-accum tests/data/hf-val/zamba.config.json \
	--gpus 1xA100 --grad-accum 4

# ---- inputs that are not regular files, and file messages (issue 17) ----
# Findings 4 and 8.  A FIFO with no writer as any input hung forever; each
# case runs under a 10 s limit so that a hang fails instead of blocking.
# Inputs must be regular files; /dev/stdin and /dev/fd/N name a stream the
# user asked for.
inp=$tmp/inputs
mkdir -p "$inp/lib" "$inp/cfg/vramplan" "$inp/xdg-data" || exit 2
if mkfifo "$inp/fifo.yaml" "$inp/lib/fifo-model.yaml" \
    "$inp/cfg/vramplan/gpus.yaml" 2>/dev/null; then
	cp "$TOP_SRCDIR/models/gpt2.yaml" "$TOP_SRCDIR/models/gpus.yaml" \
	    "$inp/lib/" || exit 2
	run_in "$inp" 10 input-fifo-model fifo.yaml
	run_in "$inp" 10 input-fifo-plan "$TOP_SRCDIR/models/gpt2.yaml" \
	    --plan fifo.yaml
	run_in "$inp" 10 input-fifo-catalog "$TOP_SRCDIR/models/gpt2.yaml" \
	    --gpus 1xA100 --catalog fifo.yaml
	run_in "$inp" 10 input-fifo-profile "$TOP_SRCDIR/models/gpt2.yaml" \
	    --gpus 1xA100 --profile fifo.yaml
	run_in "$inp" 10 input-fifo-deepspeed "$TOP_SRCDIR/models/gpt2.yaml" \
	    --deepspeed-config fifo.yaml
	run_in "$inp" 10 input-fifo-measurements calibrate --measurements \
	    fifo.yaml --out "$inp/never-written.yaml"
	# A FIFO among the library's *.yaml: the listing names it and goes on.
	saved_data=$VRAMPLAN_DATA
	VRAMPLAN_DATA=lib	# relative to $inp: no temporary name in messages
	run_in "$inp" 10 input-fifo-in-library models
	VRAMPLAN_DATA=$saved_data
	# The user catalog a FIFO: reported and ignored, the estimate goes on.
	saved_cfg=${XDG_CONFIG_HOME-}
	XDG_CONFIG_HOME=cfg
	export XDG_CONFIG_HOME
	# (An unknown card after it: the output stays this case's own.)
	run_in "$inp" 10 input-fifo-user-catalog \
	    "$TOP_SRCDIR/models/gpt2.yaml" --gpus 1xNO-SUCH-CARD
	if [ -n "$saved_cfg" ]; then
		XDG_CONFIG_HOME=$saved_cfg
	else
		unset XDG_CONFIG_HOME
	fi
else
	echo "FAIL input-fifo (mkfifo failed)"
	failed=$((failed + 1))
fi
run input-dev-null-model /dev/null
run input-directory-plan gpt2 --plan tests
# Standard input, asked for: read (here it is /dev/null, an empty file),
# and a model on descriptor 3, as a process substitution gives it (one
# without a name: the message shows it was read).
run input-stdin-model /dev/stdin
run_in "$inp" 10 input-fd3-model /dev/fd/3 \
    3<"$TOP_SRCDIR/tests/bad/10-missing-name.yaml"
# Messages name the kind of file: a plan, a catalog, a profile in UTF-16,
# with an invalid UTF-8 sequence or two documents, each said as itself.
printf '\377\376v\000r\000a\000m\000' >"$inp/utf16.yaml"
printf 'vramplan-plan: 1\nseq: "2\302048"\n' >"$inp/bad-utf8.yaml"
printf -- '- id: X\n---\n- id: Y\n' >"$inp/two-docs.yaml"
run_in "$inp" 10 input-utf16-plan "$TOP_SRCDIR/models/gpt2.yaml" \
    --plan utf16.yaml
run_in "$inp" 10 input-utf16-catalog "$TOP_SRCDIR/models/gpt2.yaml" \
    --gpus 1xA100 --catalog utf16.yaml
run_in "$inp" 10 input-bad-utf8-plan "$TOP_SRCDIR/models/gpt2.yaml" \
    --plan bad-utf8.yaml
run_in "$inp" 10 input-bad-utf8-profile "$TOP_SRCDIR/models/gpt2.yaml" \
    --gpus 1xA100 --profile bad-utf8.yaml
run_in "$inp" 10 input-two-docs-catalog "$TOP_SRCDIR/models/gpt2.yaml" \
    --gpus 1xA100 --catalog two-docs.yaml
run_in "$inp" 10 input-two-docs-measurements calibrate --measurements \
    two-docs.yaml --out "$inp/never-written.yaml"
# Found by tests/fuzz/fuzz_profile: a measurements file without 'device'
# or 'points' was refused with no message at all.
printf 'vramplan-measurements: 1\n' >"$inp/meas-no-device.yaml"
printf 'vramplan-measurements: 1\ndevice: cpu\n' >"$inp/meas-no-points.yaml"
run_in "$inp" 10 input-measurements-no-device calibrate --measurements \
    meas-no-device.yaml --out "$inp/never-written.yaml"
run_in "$inp" 10 input-measurements-no-points calibrate --measurements \
    meas-no-points.yaml --out "$inp/never-written.yaml"
# An ambiguous prefix is said to be one, in calibrate too; a short option
# other than -h, and a value given to an option that takes none.
run cli-calibrate-ambiguous-prefix calibrate --p x
run cli-calibrate-unknown-option calibrate --frobnicate
run cli-calibrate-flag-value calibrate --show=yes
run cli-short-option gpt2 -p
run cli-flag-value gpt2 --json=yes

# vramplan export (issue 18): one launch file per format, the notes on
# stderr, and refusals (tests/export.sh loads the files in their readers).
run export-deepspeed-70b export deepspeed llama-3.1-70b --gpus 16xH100
run export-accelerate-fsdp1 export accelerate qwen3-8b --gpus 8xH100 \
    --framework fsdp1 --recompute full
run export-accelerate-ddp export accelerate llama-3.1-8b --gpus 8xH100
run export-hf-fsdp2 export hf llama-3.1-8b --gpus 8xH100 --framework fsdp2
run export-torchtitan-float8 export torchtitan llama-3.1-70b --gpus 64xH100 \
    --float8 tensorwise --float8-all-gather --compile
run export-torchtune-lora export torchtune llama-3.1-8b --gpus 1xRTX4090-24G \
    --lora 8 --lora-targets q,v --seq 2048
run export-megatron-70b export megatron llama-3.1-70b --gpus 16xH100 \
    --alloc-conf expandable_segments:True
run export-refused-hf-pp export hf llama-3.1-8b --gpus 8xH100 --pp 2
run export-refused-ds-nvme export deepspeed llama-3.1-8b --gpus 8xH100 \
    --offload optimizer --offload-nvme
run export-unknown-format export deepspeeed llama-3.1-8b
run export-report-option export torchtitan llama-3.1-8b --csv
# The format's families are checked first: the reason is the builder
# torchtune lacks, not an option --trainer torchtune implies.
run export-refused-tune-jamba export torchtune jamba-v0.1 --gpus 8xH100

# Every option --help lists (made from the option table) is documented in
# vramplan(1), and the manual documents no option the program lacks.
"$VRAMPLAN" --help >"$tmp/help" 2>&1
man=$TOP_SRCDIR/man/vramplan.1
sed -n 's/^  --\([a-z0-9-]*\).*/\1/p' "$tmp/help" | sort -u >"$tmp/opts"
sed -n 's/^\.It Fl -\([a-z0-9-]*\).*/\1/p' "$man" | sort -u >"$tmp/manopts"
if [ -s "$tmp/opts" ] && cmp -s "$tmp/opts" "$tmp/manopts"; then
	echo "ok options-in-manual"
	passed=$((passed + 1))
else
	echo "FAIL options-in-manual"
	echo "    --help (<) and vramplan(1)'s .It Fl lines (>) differ:"
	diff "$tmp/opts" "$tmp/manopts" | sed -n 's/^[<>].*/    &/p'
	failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
