#!/bin/sh
# params.sh — parameter counts of the shipped models against published ones.
#
# For each row of tests/data/params.tsv (model, published_params, source)
# run `$VRAMPLAN $VRAMPLAN_DATA/MODEL.yaml --json` and compare model.params
# with the published count; within 0.5 % passes.  A MODEL that is not in
# the library but is a Hugging Face config, tests/data/hf/MODEL.config.json,
# is read from there and must match exactly: its count is that of the
# transformers class itself (calib/hf_params.py), not a rounded figure.  Prints a table (model,
# computed, published, error %) and "N passed, M failed"; exits 1 on any
# failure.
#
# Env: VRAMPLAN (the program), VRAMPLAN_DATA (the models directory),
# TOP_SRCDIR (the source root).  Defaults suit a run from the source tree.

top=${TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
prog=${VRAMPLAN:-$top/src/vramplan}
data=${VRAMPLAN_DATA:-$top/models}
tsv=$top/tests/data/params.tsv
tolerance=0.5		# percent

if [ ! -f "$tsv" ]; then
	echo "params.sh: cannot find $tsv (set TOP_SRCDIR)" >&2
	exit 1
fi
if [ ! -x "$prog" ]; then
	echo "params.sh: cannot run '$prog' (set VRAMPLAN)" >&2
	exit 1
fi

# model.params from the JSON report on stdin.
json_params() {
	if [ -x /usr/bin/python3 ]; then
		/usr/bin/python3 -c '
import json, sys
try:
    print(int(json.load(sys.stdin)["model"]["params"]))
except Exception as e:
    sys.exit("bad JSON: %s" % e)'
	else
		# The "model" object comes first and holds the first "params".
		tr -d '\n' | grep -o '"model"[^}]*' | grep -o '"params": *[0-9]*' |
		    head -n 1 | grep -o '[0-9]*$'
	fi
}

pass=0
fail=0
printf '%-16s %16s %16s %9s  %s\n' model computed published "error %" result
# Skip the header row; fields are tab-separated, the source may hold spaces.
tab=$(printf '\t')
while IFS=$tab read -r model published source; do
	case $model in
	''|'#'*|model) continue ;;
	esac
	yaml=$data/$model.yaml
	tol=$tolerance
	if [ ! -f "$yaml" ] && [ -f "$top/tests/data/hf/$model.config.json" ]; then
		yaml=$top/tests/data/hf/$model.config.json
		tol=0
	fi
	if [ ! -f "$yaml" ]; then
		printf '%-16s %16s %16s %9s  %s\n' "$model" - "$published" - \
		    "FAIL (no $yaml)"
		fail=$((fail + 1))
		continue
	fi
	# A multimodal config's language model (its text_config) alone.
	only=
	grep -q '"text_config"' "$yaml" && only=--text-only
	# ... but for LLaVA, whose vision tower vramplan models.
	grep -q '"model_type": "llava"' "$yaml" && only=
	computed=$("$prog" "$yaml" $only --json 2>/dev/null | json_params)
	case $computed in
	''|*[!0-9]*)
		printf '%-16s %16s %16s %9s  %s\n' "$model" error \
		    "$published" - "FAIL (vramplan or its JSON failed)"
		fail=$((fail + 1))
		continue ;;
	esac
	verdict=$(awk -v c="$computed" -v p="$published" -v t="$tol" '
	    BEGIN {
		e = (c - p) / p * 100
		a = e < 0 ? -e : e
		printf "%+.4f %s\n", e, (a <= t ? "ok" : "FAIL")
	    }')
	err=${verdict% *}
	res=${verdict#* }
	printf '%-16s %16s %16s %9s  %s\n' "$model" "$computed" "$published" \
	    "$err" "$res"
	if [ "$res" = ok ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi
done <"$tsv"

if [ $((pass + fail)) -eq 0 ]; then
	echo "params.sh: no rows in $tsv" >&2
	fail=1
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
