#!/bin/sh
# tui.sh — the TUI end to end: the real program in a tmux pane, driven by
# keys, its screen captured and checked.
#
#   1. 80 x 24, colours, UTF-8: change the precision and the micro-batch,
#      pick a GPU from the list by typing a search, raise the GPU count,
#      run the planner (a), save the plan (s) to a file; the allocated and
#      device peaks and the verdict on screen must be the ones
#      `vramplan MODEL --plan FILE --no-search` prints for the saved plan;
#      then resize to 40 x 12 and 200 x 60 (still running, status line
#      there) and quit with q (exit status 0).
#   2. NO_COLOR, TERM=xterm, the C locale (ASCII): reopen the saved plan
#      with --plan, the help (?), the command line (c), quit.
#   3. An invalid plan (--tp 3 for 32 heads): the TUI opens and says why.
#   4. No terminal: exit status 2 and a message.
#
# The screen at 80 x 24 after step 1 is kept as tui-80x24.txt in the
# directory the test runs from (the build directory under make check).
# Waits poll the screen until the text appears (10 s at most), never a
# fixed sleep.  Needs tmux: skipped (77) without it, a failure when $CI
# is set.
#
# Env (make check sets them): VRAMPLAN, VRAMPLAN_DATA, TOP_SRCDIR.

: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${VRAMPLAN:=./src/vramplan}"
: "${VRAMPLAN_DATA:=$TOP_SRCDIR/models}"
export VRAMPLAN_DATA
case $VRAMPLAN in
/*) ;;
*) VRAMPLAN=$(pwd)/$VRAMPLAN ;;
esac
here=$(pwd)
model=$TOP_SRCDIR/models/llama-3-8b.yaml

if ! command -v tmux >/dev/null 2>&1; then
	if [ -n "${CI-}" ]; then
		echo "FAIL tui: tmux is not installed (CI needs it)"
		exit 1
	fi
	echo "SKIP tui: tmux is not installed"
	exit 77
fi

# A UTF-8 locale for the first run, if there is one.
utf8=
for l in C.UTF-8 C.utf8 en_US.UTF-8 en_US.utf8; do
	if locale -a 2>/dev/null | grep -qx "$l"; then
		utf8=$l
		break
	fi
done
[ -n "$utf8" ] || utf8=C

sock=vramplan-tui-$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramplan-tui.XXXXXX") || exit 2
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

tm() { LC_ALL=$utf8 tmux -L "$sock" -f /dev/null "$@"; }
screen() { tm capture-pane -p -t vp 2>/dev/null; }
keys() { tm send-keys -t vp "$@"; }
type_text() { tm send-keys -t vp -l "$1"; }

# wait_for TEXT [re]: until the screen shows TEXT (a fixed string, or a
# basic regular expression with re); 10 s at most.
wait_for() {
	i=0
	while [ $i -lt 100 ]; do
		if [ "${2-}" = re ]; then
			screen | grep -q -- "$1" && return 0
		else
			screen | grep -qF -- "$1" && return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "    timed out waiting for '$1'; the screen:"
	screen | sed 's/^/    | /'
	return 1
}

# start NAME ENV... -- ARGS...: the TUI in a fresh pane of 80 x 24.
start() {
	name=$1
	shift
	envs=
	while [ "$1" != -- ]; do
		envs="$envs $1"
		shift
	done
	shift
	rm -f "$tmp/rc"
	tm new-session -d -s vp -x 80 -y 24 "cd '$tmp' && env$envs \
	    VRAMPLAN_DATA='$VRAMPLAN_DATA' '$VRAMPLAN' tui $*; \
	    echo \$? >'$tmp/rc'" && return 0
	bad "$name: tmux did not start"
	return 1
}

# The exit status once the program has ended (10 s at most).
wait_exit() {
	i=0
	while [ ! -s "$tmp/rc" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	cat "$tmp/rc" 2>/dev/null || echo none
}

# The byte count after LABEL in a report or a screen ("74.79 GiB").
bytes_of() {
	sed -n "s/.*$1  *\([0-9][0-9.]* [KMGTPE]\{0,1\}i\{0,1\}B\).*/\1/p" |
	    head -n 1
}

# ---- 1. change, pick, plan, save, compare, resize, quit ---------------
name=utf8-session
if start $name TERM=xterm-256color LANG=$utf8 LC_ALL=$utf8 -- \
    "'$model'" --gpus 1xA100; then
	step() {
		if eval "$2"; then ok "$name: $1"; else bad "$name: $1"; fi
	}
	step "opens on the plan" 'wait_for "Memory per GPU" &&
	    wait_for "precision"'
	keys l
	step "precision changed" 'wait_for "precision  *fp16 " re'
	keys j j +
	step "micro-batch changed" 'wait_for "micro-batch *2 " re'
	keys g
	step "GPU list" 'wait_for "Pick a GPU"'
	type_text 4090
	wait_for "RTX4090" >/dev/null
	keys Enter
	step "GPU picked from the list" 'wait_for "GPU  *RTX4090" re'
	# From micro-batch down to GPUs, the second last knob.
	keys j j j j j j j j j j j j j j j +
	step "two GPUs" 'wait_for "GPUs  *2 " re'
	keys a
	step "planner ran" 'wait_for "planner:"'
	screen >"$tmp/planned.txt"
	keys s
	step "save prompt" 'wait_for "save plan to:"'
	keys C-u
	type_text "$tmp/saved.yaml"
	keys Enter
	step "saved" 'wait_for "saved the plan"'
	screen >"$tmp/screen.txt"
	cp "$tmp/screen.txt" "$here/tui-80x24.txt" 2>/dev/null
	if [ -s "$tmp/saved.yaml" ] &&
	    grep -qx 'vramplan-plan: 1' "$tmp/saved.yaml" &&
	    grep -qx 'precision: fp16' "$tmp/saved.yaml" &&
	    grep -qx 'micro-batch: 2' "$tmp/saved.yaml" &&
	    grep -qx 'gpus: 2xRTX4090[-A-Za-z0-9]*' "$tmp/saved.yaml"; then
		ok "$name: the plan file holds the knobs"
	else
		bad "$name: the plan file"
		sed 's/^/    | /' "$tmp/saved.yaml" 2>/dev/null
	fi
	# The same numbers as the estimate of the saved plan.
	"$VRAMPLAN" "$model" --plan "$tmp/saved.yaml" --no-search \
	    >"$tmp/cli.txt" 2>"$tmp/cli.err"
	for label in "allocated peak" "device peak"; do
		tui=$(bytes_of "$label" <"$tmp/screen.txt")
		cli=$(bytes_of "$label" <"$tmp/cli.txt")
		if [ -n "$tui" ] && [ "$tui" = "$cli" ]; then
			ok "$name: $label $tui on screen and in the estimate"
		else
			bad "$name: $label: screen '$tui', estimate '$cli'"
			sed 's/^/    | /' "$tmp/cli.err"
		fi
	done
	if grep -q "DOES NOT FIT" "$tmp/cli.txt"; then
		verdict="DOES NOT FIT"
	else
		verdict="FITS"
	fi
	if grep -qF "$verdict" "$tmp/screen.txt"; then
		ok "$name: the verdict ($verdict) agrees"
	else
		bad "$name: the estimate says $verdict, the screen does not"
	fi
	# A move clears the message: the key help is in the status line.
	keys k j
	wait_for "change" >/dev/null
	tm resize-window -t vp -x 40 -y 12
	step "40x12: running, status line shown" 'wait_for "change" &&
	    [ "$(screen | wc -l)" -le 12 ] && [ ! -s "$tmp/rc" ]'
	tm resize-window -t vp -x 200 -y 60
	step "200x60: running, every panel" 'wait_for "Timeline" &&
	    wait_for "Time and cost" && wait_for "change" &&
	    [ ! -s "$tmp/rc" ]'
	keys q
	rc=$(wait_exit)
	if [ "$rc" = 0 ]; then
		ok "$name: q quits with exit status 0"
	else
		bad "$name: exit status $rc after q"
	fi
fi
tm kill-server >/dev/null 2>&1

# ---- 2. NO_COLOR, ASCII, reopen the saved plan -------------------------
name=ascii-no-color
if [ -s "$tmp/saved.yaml" ] && start $name TERM=xterm NO_COLOR=1 LANG=C \
    LC_ALL=C -- "'$model'" --plan "'$tmp/saved.yaml'"; then
	step() {
		if eval "$2"; then ok "$name: $1"; else bad "$name: $1"; fi
	}
	step "reopens the saved plan" 'wait_for "precision  *fp16 " re &&
	    wait_for "GPU  *RTX4090" re && wait_for "GPUs  *2 " re'
	step "ASCII key help" 'wait_for "h/l change"'
	keys '?'
	step "help" 'wait_for "pick a GPU: type to search"'
	keys x c
	step "command line" 'wait_for "--no-search"'
	keys Escape q
	rc=$(wait_exit)
	if [ "$rc" = 0 ]; then
		ok "$name: q quits with exit status 0"
	else
		bad "$name: exit status $rc after q"
	fi
else
	bad "$name: no saved plan to reopen"
fi
tm kill-server >/dev/null 2>&1

# ---- 3. an invalid plan opens and says why -----------------------------
name=invalid-plan
if start $name TERM=xterm-256color LANG=$utf8 -- "'$model'" \
    --gpus 8xH100 --tp 3 --no-search; then
	if wait_for "not valid: --tp 3" && wait_for "no estimate"; then
		ok "$name: the plan check's message"
	else
		bad "$name: no message"
	fi
	keys q
	rc=$(wait_exit)
	[ "$rc" = 0 ] && ok "$name: quits" || bad "$name: exit status $rc"
fi
tm kill-server >/dev/null 2>&1

# ---- 4. no terminal -----------------------------------------------------
"$VRAMPLAN" tui "$model" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 2 ] && grep -q "needs a terminal" "$tmp/err"; then
	ok "no-terminal: exit status 2 and a message"
else
	bad "no-terminal: exit status $rc"
	sed 's/^/    | /' "$tmp/err"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
