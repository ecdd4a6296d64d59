#!/bin/sh
# The estimate's --svg: written atomically (no temporary left), labelled
# (title, every phase, the peak marked, the band, the capacity), one bar
# per pipeline stage, rendered to a PNG by rsvg-convert; the report is
# still printed; an unwritable target is an error (exit 4) with a clear
# message and nothing printed or left; a failed estimate writes no
# picture.  Env: VRAMPLAN, VRAMPLAN_DATA, TOP_SRCDIR.  Without
# rsvg-convert the other checks still run and the test is then skipped
# (exit 77), or fails when CI is set (tests/need.sh).
top=${TOP_SRCDIR:-.}
exe=${VRAMPLAN:-./src/vramplan}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top/tests/need.sh"
passed=0 failed=0 norsvg=""
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
has() { grep -q -- "$2" "$1"; }

# render NAME FILE: a PNG of at least 5 kB from rsvg-convert.
render() {
	command -v rsvg-convert >/dev/null 2>&1 || {
		norsvg="rsvg-convert is not installed (librsvg2-bin): the SVG was not rendered"
		return
	}
	rsvg-convert -o "$tmp/$1.png" "$2" 2>"$tmp/err"
	sig=$(head -c 8 "$tmp/$1.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
	size=$(wc -c <"$tmp/$1.png" 2>/dev/null || echo 0)
	if [ "$sig" = 89504e470d0a1a0a ] && [ "$size" -gt 5000 ]; then
		ok "$1-renders ($size byte PNG)"
	else
		bad "$1-renders" "rsvg-convert gave '$sig', $size bytes: $(cat "$tmp/err")"
	fi
}

# 1. One GPU, recompute full (it does not fit: exit 1): the report is
# printed, the picture written whole, with every phase, the peak and its
# band, the levels, the card.
"$exe" llama-3-8b --gpus 1xA100 --recompute full --no-search \
    --svg "$tmp/e.svg" >"$tmp/out" 2>"$tmp/err"
if [ $? -le 1 ] && [ -s "$tmp/e.svg" ]; then
	has "$tmp/out" 'allocated peak' && ok report-printed ||
	    bad report-printed "$(head -3 "$tmp/out")"
	f=$tmp/e.svg
	if has "$f" '^<svg ' && has "$f" '</svg>$' &&
	    has "$f" 'Memory of one training step: Llama-3-8B on 1 x A100-80G-SXM' &&
	    has "$f" '>forward<' && has "$f" '>loss<' && has "$f" '>backward<' &&
	    has "$f" '>optimizer<' && has "$f" '>peak<' &&
	    has "$f" 'Allocated peak [0-9.]* GiB' && has "$f" 'known to within' &&
	    has "$f" 'published GPU runs' && has "$f" 'device peak (nvidia-smi)' &&
	    has "$f" 'reserved peak' && has "$f" 'A100-80G-SXM usable' &&
	    has "$f" '>each GPU<'
	then ok svg-labels; else bad svg-labels "a label is missing"; fi
	# The peak's value is the report's allocated peak.
	want=$("$exe" llama-3-8b --gpus 1xA100 --recompute full --no-search \
	    --json | sed -n 's/.*"allocated_peak_bytes": \([0-9]*\).*/\1/p' | head -1)
	gotgib=$(sed -n 's/.*Allocated peak \([0-9.]*\) GiB.*/\1/p' "$f")
	if [ -n "$want" ] && awk -v w="$want" -v g="$gotgib" \
	    'BEGIN { exit !(sprintf("%.2f", w / 1073741824) == g) }'
	then ok "svg-peak-value ($gotgib GiB)"
	else bad svg-peak-value "picture says '$gotgib' GiB, JSON $want bytes"; fi
	ls "$tmp"/e.svg.tmp* >/dev/null 2>&1 && bad svg-atomic "temporary left" ||
	    ok svg-atomic
	render one-gpu "$f"
else
	bad svg "the estimate failed: $(cat "$tmp/err")"
fi

# 2. Pipeline stages: one bar per stage, the worst named; with --json the
# JSON is still printed.
"$exe" llama-3.1-70b --gpus 16xH100 --pp 4 --tp 4 --zero 1 \
    --recompute full --grad-accum 16 --json --svg "$tmp/p.svg" \
    >"$tmp/out" 2>"$tmp/err"
if [ $? -le 1 ] && [ -s "$tmp/p.svg" ]; then
	worst=$(sed -n 's/.*"worst_stage": \([0-9]*\).*/\1/p' "$tmp/out")
	if has "$tmp/p.svg" '>stage 0' && has "$tmp/p.svg" '>stage 3' &&
	    has "$tmp/p.svg" ">stage $worst (worst)<" &&
	    has "$tmp/p.svg" "pipeline stage $worst of 4 (the worst)" &&
	    ! has "$tmp/p.svg" '>stage 4'
	then ok "svg-stages (worst $worst)"; else bad svg-stages "stage bars missing"; fi
	has "$tmp/out" '"schema_version"' && ok svg-with-json ||
	    bad svg-with-json "no JSON printed"
	render stages "$tmp/p.svg"
else
	bad svg-stages "the estimate failed: $(cat "$tmp/err")"
fi

# 3. The CPU and no --gpus: no card, no reserved or device level.
if "$exe" gpt2 --device cpu --seq 256 --svg "$tmp/c.svg" >/dev/null 2>"$tmp/err" &&
    has "$tmp/c.svg" 'on the CPU' && has "$tmp/c.svg" 'live tensor bytes' &&
    ! has "$tmp/c.svg" 'usable' && ! has "$tmp/c.svg" 'nvidia-smi'
then ok svg-cpu; else bad svg-cpu "$(cat "$tmp/err")"; fi

# 4. A user's model name is escaped (control characters as text, < > &).
if "$exe" "$top/tests/data/esc/evil-name.yaml" --gpus 1xH100 --seq 128 \
    --no-search --svg "$tmp/x.svg" >/dev/null 2>&1 &&
    ! LC_ALL=C grep -q "$(printf '\033')" "$tmp/x.svg" && has "$tmp/x.svg" 'Evil\\e'
then ok svg-escaped; else bad svg-escaped "control characters in the SVG"; fi

# 5. A step past an exabyte is not replayed: the picture says so, with
# its bars, and still renders.
"$exe" llama-3.1-405b --seq 100000000 --micro-batch 1000000 --no-search \
    --svg "$tmp/h.svg" >/dev/null 2>"$tmp/err"
st=$?
if [ "$st" -le 1 ] && has "$tmp/h.svg" 'No timeline' && has "$tmp/h.svg" '</svg>$'
then ok "svg-no-timeline"; render no-timeline "$tmp/h.svg"
else bad svg-no-timeline "exit $st: $(cat "$tmp/err")"; fi

# 6. Unwritable targets: exit 4, a message naming the file, nothing on
# stdout, nothing left; an existing file is kept as it was.
"$exe" gpt2 --svg "$tmp/no/such/dir/e.svg" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ "$st" = 4 ] && [ ! -s "$tmp/out" ] && has "$tmp/err" "cannot create '$tmp/no/such/dir/e.svg'"
then ok svg-unwritable; else bad svg-unwritable "exit $st, stderr: $(cat "$tmp/err")"; fi
mkdir "$tmp/d"
"$exe" gpt2 --svg "$tmp/d" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ "$st" = 4 ] && [ ! -s "$tmp/out" ] && has "$tmp/err" "it is a directory" &&
    [ -z "$(ls "$tmp/d")" ]
then ok svg-directory; else bad svg-directory "exit $st, stderr: $(cat "$tmp/err")"; fi
if [ "$(id -u)" != 0 ]; then
	mkdir "$tmp/ro" && echo keep >"$tmp/ro/e.svg" && chmod 555 "$tmp/ro"
	"$exe" gpt2 --svg "$tmp/ro/e.svg" >"$tmp/out" 2>"$tmp/err"
	st=$?
	chmod 755 "$tmp/ro"
	if [ "$st" = 4 ] && [ "$(cat "$tmp/ro/e.svg")" = keep ] && has "$tmp/err" "cannot create"
	then ok svg-read-only-dir; else bad svg-read-only-dir "exit $st: $(cat "$tmp/err")"; fi
fi

# 7. An estimate that fails (a refused plan) writes no picture.
"$exe" gpt2 --tp 5 --svg "$tmp/never.svg" >/dev/null 2>&1
st=$?
if [ "$st" = 3 ] && [ ! -e "$tmp/never.svg" ]
then ok svg-not-on-error; else bad svg-not-on-error "exit $st"; fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] || exit 1
[ -z "$norsvg" ] || missing svg "$norsvg"
exit 0
