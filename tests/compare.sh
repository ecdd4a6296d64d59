#!/bin/sh
# vramplan compare: the SVG renders (converted to PNG with rsvg-convert),
# a user catalog adds cards, a malformed one is reported and ignored,
# --price overrides the catalog.  Env: VRAMPLAN, VRAMPLAN_DATA, TOP_SRCDIR.
# Without rsvg-convert the other checks still run, and the test is then
# skipped (exit 77) if they pass, or fails when CI is set (tests/need.sh).
top=${TOP_SRCDIR:-.}
exe=${VRAMPLAN:-./src/vramplan}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top/tests/need.sh"
passed=0 failed=0 norsvg=""
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# 1. The picture: written atomically, labelled, and it renders.
if "$exe" compare gpt2 --tokens 1e9 --svg "$tmp/c.svg" >"$tmp/out" 2>&1; then
	if [ -s "$tmp/c.svg" ] && grep -q '<svg' "$tmp/c.svg" &&
	    grep -q 'H100-80G-SXM' "$tmp/c.svg" &&
	    grep -q '(cheapest)' "$tmp/c.svg" && grep -q '(fastest)' "$tmp/c.svg"
	then ok svg-labels; else bad svg-labels "labels missing"; fi
	ls "$tmp"/c.svg.tmp* >/dev/null 2>&1 && bad svg-atomic "temporary left" ||
	    ok svg-atomic
	if command -v rsvg-convert >/dev/null 2>&1; then
		rsvg-convert -o "$tmp/c.png" "$tmp/c.svg" 2>"$tmp/err"
		sig=$(head -c 8 "$tmp/c.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
		size=$(wc -c <"$tmp/c.png" 2>/dev/null || echo 0)
		if [ "$sig" = 89504e470d0a1a0a ] && [ "$size" -gt 5000 ]; then
			ok "svg-renders ($size byte PNG)"
		else
			bad svg-renders "rsvg-convert gave '$sig', $size bytes: $(cat "$tmp/err")"
		fi
	else
		norsvg="rsvg-convert is not installed (librsvg2-bin): the SVG was not rendered"
	fi
else
	bad svg "compare failed: $(cat "$tmp/out")"
fi

# 2. A user catalog adds a card; the shipped ones stay.
XDG_CONFIG_HOME="$top/tests/data/xdg-good" "$exe" compare gpt2 --tokens 1e9 \
    --json >"$tmp/j" 2>"$tmp/e"
if grep -q '"MY-CARD-48G"' "$tmp/j" && grep -q '"H100-80G-SXM"' "$tmp/j"
then ok user-catalog; else bad user-catalog "$(cat "$tmp/e")"; fi

# 3. A malformed user catalog: file:line:col error, shipped catalog used.
XDG_CONFIG_HOME="$top/tests/data/xdg-bad" "$exe" compare gpt2 --tokens 1e9 \
    --json >"$tmp/j" 2>"$tmp/e"
if grep -q 'gpus.yaml:4:3: error: unknown key .memroy_type.' "$tmp/e" &&
    grep -q 'ignoring the user catalog' "$tmp/e" &&
    grep -q '"H100-80G-SXM"' "$tmp/j"
then ok bad-user-catalog; else bad bad-user-catalog "$(cat "$tmp/e")"; fi

# 4. --price replaces the dated prices of one card.
"$exe" compare gpt2 --tokens 1e9 --json --price H100=1.00 >"$tmp/j" 2>&1
if /usr/bin/python3 - "$tmp/j" <<'PY'
import json, sys
cards = {c["gpu"]: c for c in json.load(open(sys.argv[1]))["cards"]}
h = cards["H100-80G-SXM"]
assert h["usd_per_gpu_hour"] == 1.0 and h["price_date"] == "given", h
assert abs(h["cost_usd"] - h["hours"] * h["gpus_needed"]) < 1e-3, h
PY
then ok price-override; else bad price-override "$(cat "$tmp/j" | head -3)"; fi

# 5. Cards without bf16 (V100, T4) are planned and timed in fp16-mixed,
# and say so; --precision bf16-mixed keeps bf16 there, untimed, with the
# reason; every null figure of a JSON row carries its reason.
"$exe" compare gpt2 --tokens 1e9 --json >"$tmp/j" 2>&1
"$exe" compare gpt2 --tokens 1e9 --json --precision bf16-mixed >"$tmp/jb" 2>&1
if /usr/bin/python3 - "$tmp/j" "$tmp/jb" <<'PY'
import json, sys
cards = {c["gpu"]: c for c in json.load(open(sys.argv[1]))["cards"]}
for g in ("V100-32G-SXM2", "T4-16G"):
    c = cards[g]
    assert c["plan"]["precision"] == "fp16-mixed" and "precision_note" in c["plan"], c
    assert c["tokens_per_second"] > 0, c
assert cards["H100-80G-SXM"]["plan"]["precision"] == "bf16-mixed"
keys = ("tokens_per_second", "cost_usd", "purchase_usd")
for c in cards.values():
    if not c["fits"]:
        assert c["why"], c
        continue
    for k in keys:
        if c[k] is None:
            assert c["why_missing"][k], (c["gpu"], k)
kept = {c["gpu"]: c for c in json.load(open(sys.argv[2]))["cards"]}["V100-32G-SXM2"]
assert kept["plan"]["precision"] == "bf16-mixed" and kept["tokens_per_second"] is None
assert "no bf16 tensor cores" in kept["why_missing"]["tokens_per_second"], kept
PY
then ok fp16-fallback; else bad fp16-fallback "$(head -c 600 "$tmp/j")"; fi
if "$exe" "$top/models/llama-3-8b.yaml" --gpus 8xV100 2>&1 | grep -q "planned in fp16-mixed" &&
    "$exe" "$top/models/llama-3-8b.yaml" --gpus 8xV100 --precision bf16-mixed 2>&1 |
    grep -q "^Time       none: the catalog has no bf16 rate for V100-32G-SXM2"
then ok fp16-fallback-estimate; else bad fp16-fallback-estimate "no note"; fi

# 7. The job's shape: with --deadline every card shown finishes in time
# (and one more step of GPUs would be the first to), with --budget every
# cost is within it, with --global-batch every plan's dp x micro-batch x
# grad-accum is the global batch.
"$exe" compare "$top/models/llama-3.1-70b.yaml" --tokens 1e11 --deadline 30d \
    --json >"$tmp/jd" 2>&1
"$exe" compare "$top/models/llama-3-8b.yaml" --tokens 1e10 --budget 2000 \
    --json >"$tmp/jbud" 2>&1
"$exe" compare "$top/models/llama-3-8b.yaml" --tokens 1e9 --global-batch 512 \
    --json >"$tmp/jg" 2>&1
if /usr/bin/python3 - "$tmp/jd" "$tmp/jbud" "$tmp/jg" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["deadline_hours"] == 720, d.get("deadline_hours")
met = [c for c in d["cards"] if c["fits"] and c["meets"]]
assert len(met) >= 10, len(met)
for c in met:
    assert c["hours"] <= 720 and c["gpus"] >= c["gpus_needed"], c
assert any(c["gpus"] > c["gpus_needed"] for c in met)
for c in d["cards"]:
    if c["fits"] and not c["meets"]:
        assert "finish" in c["why"] or "time" in c["why"], c
b = json.load(open(sys.argv[2]))
assert b["sort"] == "time"
met = [c for c in b["cards"] if c["fits"] and c["meets"]]
assert met and all(c["cost_usd"] <= 2000 for c in met), met
assert [c["hours"] for c in met] == sorted(c["hours"] for c in met)
for c in b["cards"]:
    if c["fits"] and not c["meets"]:
        assert c["why"], c
g = json.load(open(sys.argv[3]))
for c in g["cards"]:
    if c["fits"] and c["meets"]:
        p = c["plan"]
        assert p["dp"] * p["micro_batch"] * p["grad_accum"] == 512, (c["gpu"], p)
PY
then ok job-shape; else bad job-shape "$(head -c 400 "$tmp/jd")"; fi

# 8. Every shipped price states its unit of sale, what it covers and
# whether it is multi-node (the reader's defaults are for user catalogs).
n=$(grep -c '^    usd_per_gpu_hour:' "$top/models/gpus.yaml")
if [ "$n" -gt 0 ] &&
    [ "$(grep -c '^    unit_gpus: [0-9]' "$top/models/gpus.yaml")" = "$n" ] &&
    [ "$(grep -cE '^    covers: (instance|gpu)$' "$top/models/gpus.yaml")" = "$n" ] &&
    [ "$(grep -cE '^    multi_node: (true|false)$' "$top/models/gpus.yaml")" = "$n" ]
then ok "price-terms ($n prices)"; else bad price-terms "a price lacks unit_gpus, covers or multi_node"; fi

# 9. Cards sold for one node (consumer, workstation) get no multi-node
# plan; a user catalog that says their nodes are networked gets them.
"$exe" compare "$top/models/llama-3.1-70b.yaml" --tokens 1e9 --json \
    >"$tmp/jn" 2>&1
mkdir -p "$tmp/xdg/vramplan"
/usr/bin/python3 - "$top/models/gpus.yaml" "$tmp/xdg/vramplan/gpus.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read().split("\n- id: ")
card = [c for c in text if c.startswith("RTX4090-24G\n")][0]
card = card.replace("    scale_out: false", "    scale_out: true")
assert "scale_out: true" in card
open(sys.argv[2], "w").write("- id: " + card + "\n")
PY
XDG_CONFIG_HOME="$tmp/xdg" "$exe" compare "$top/models/llama-3.1-70b.yaml" \
    --tokens 1e9 --segment consumer --json >"$tmp/jx" 2>"$tmp/ex"
if /usr/bin/python3 - "$tmp/jn" "$tmp/jx" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
seg = {c["gpu"]: c for c in d["cards"]}
single = [c for c in d["cards"] if c["gpu"].startswith("RTX")]
assert single, "no consumer or workstation card"
for c in single:
    assert not c["fits"] or c["gpus"] <= 8, (c["gpu"], c.get("gpus"))
    if not c["fits"]:
        assert "one node" in c["why"], c
x = {c["gpu"]: c for c in json.load(open(sys.argv[2]))["cards"]}
assert x["RTX4090-24G"]["fits"] and x["RTX4090-24G"]["gpus"] > 8, x["RTX4090-24G"]
assert not x["RTX3090-24G"]["fits"]
PY
then ok single-node-cards; else bad single-node-cards "$(cat "$tmp/ex")"; fi

# 6. Only runnable plans: every card's plan passes the estimate's rules.
if /usr/bin/python3 "$top/tests/compare_rules.py" >"$tmp/r" 2>&1
then ok "runnable-plans ($(tail -1 "$tmp/r"))"; else bad runnable-plans "$(cat "$tmp/r")"; fi

# 7. Safe writes (issue 17, finding 1): only a regular file is replaced.
# A symbolic link is followed and its target written, the link kept; a
# FIFO, a directory and a device are refused with exit status 4, untouched.
svg() { "$exe" compare gpt2 --tokens 1e9 --svg "$1" >/dev/null 2>"$tmp/e"; }
echo old >"$tmp/target.svg"
chmod 640 "$tmp/target.svg"
mkdir "$tmp/sub"
ln -s ../target.svg "$tmp/sub/link.svg"
if svg "$tmp/sub/link.svg" && [ -L "$tmp/sub/link.svg" ] &&
    grep -q '<svg' "$tmp/target.svg" &&
    [ "$(ls -l "$tmp/target.svg" | cut -c1-10)" = "-rw-r-----" ] &&
    ! ls "$tmp"/target.svg.tmp* "$tmp"/sub/link.svg.tmp* >/dev/null 2>&1
then ok svg-symlink-followed; else bad svg-symlink-followed "$(cat "$tmp/e"; ls -l "$tmp" "$tmp/sub")"; fi
ln -s new.svg "$tmp/dangling.svg"
if svg "$tmp/dangling.svg" && [ -L "$tmp/dangling.svg" ] &&
    grep -q '<svg' "$tmp/new.svg"
then ok svg-dangling-symlink; else bad svg-dangling-symlink "$(cat "$tmp/e")"; fi
refused() { # NAME PATH WHAT: exit 4, the path still what it was, nothing left
	svg "$2"
	st=$?
	if [ "$st" = 4 ] && grep -q "cannot write '.*': .*$3, not a regular file" "$tmp/e" &&
	    ! ls "$tmp"/*.tmp* >/dev/null 2>&1
	then ok "$1"; else bad "$1" "exit $st: $(cat "$tmp/e")"; fi
}
if mkfifo "$tmp/fifo" 2>/dev/null; then
	refused svg-fifo-refused "$tmp/fifo" "a FIFO"
	[ -p "$tmp/fifo" ] || bad svg-fifo-kept "the FIFO was replaced"
	ln -s fifo "$tmp/to-fifo"
	refused svg-link-to-fifo-refused "$tmp/to-fifo" "a FIFO"
fi
# A link to standard output on a pipe (what /dev/stdout is): the chain
# ends at /proc/self/fd/1 -> 'pipe:[N]', no file; refused as a FIFO.
if [ -e /proc/self/fd/1 ]; then
	ln -s /proc/self/fd/1 "$tmp/to-stdout"
	( "$exe" compare gpt2 --tokens 1e9 --svg "$tmp/to-stdout" 2>"$tmp/e"
	  echo $? >"$tmp/st" ) | cat >/dev/null
	if [ "$(cat "$tmp/st")" = 4 ] && grep -q "leads to a FIFO" "$tmp/e" &&
	    [ -L "$tmp/to-stdout" ]
	then ok svg-stdout-pipe-refused
	else bad svg-stdout-pipe-refused "exit $(cat "$tmp/st"): $(cat "$tmp/e")"; fi
fi
mkdir "$tmp/dir.svg"
refused svg-directory-refused "$tmp/dir.svg" "a directory"
[ -d "$tmp/dir.svg" ] || bad svg-directory-kept "the directory was replaced"
# A device: where /dev is writable (root) a regression would replace
# /dev/null itself, so there the test makes its own node in $tmp.
dev=/dev/null
if [ -w /dev ]; then
	dev="$tmp/null"
	mknod "$dev" c 1 3 2>/dev/null || dev=""
fi
if [ -n "$dev" ] && [ -w "$dev" ]; then
	refused svg-device-refused "$dev" "a character device"
	[ -c "$dev" ] || bad svg-device-kept "$dev was replaced"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] || exit 1
[ -z "$norsvg" ] || missing compare "$norsvg"
