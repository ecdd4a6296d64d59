#!/bin/sh
# completion.sh — the shell completions `vramplan completions SHELL`
# writes from the option table (src/completion.c).
#
# bash: the script is sourced and its function called as bash's
# programmable completion calls it (COMP_WORDS, COMP_CWORD set; COMPREPLY
# read back): a card id after the count (--gpus 2xA1, --gpus=8xH1), an
# option value (--recompute f -> full; compare's --sort), option names
# (per command), a library model name, a repository of the Hugging Face
# cache, a subcommand, calibrate's options.
# The script make built (completions/vramplan) is the one the program
# prints.  zsh and fish, when installed (skipped with a note when not):
# parsed (zsh -n, fish -n); zsh completing 14 command lines in a
# pseudo-terminal (zsh/zpty), fish answering `complete -C`.
#
# Env (make check sets them): VRAMPLAN, VRAMPLAN_DATA, TOP_BUILDDIR,
# TOP_SRCDIR.

top=$(cd "${TOP_SRCDIR:-$(dirname "$0")/..}" && pwd) || exit 1
prog=${VRAMPLAN:-./src/vramplan}
case $prog in /*) ;; *) prog=$(pwd)/$prog ;; esac
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
	fail=$((fail + 1)); echo "FAIL $1"
	[ -z "${2-}" ] || sed 's/^/     | /' "$2"
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
LC_ALL=C
export LC_ALL
# A Hugging Face cache of our own, holding one repository (MODEL
# completes the cache's repositories too), not the user's.
mkdir -p "$tmp/hub/models--meta-llama--Meta-Llama-3-8B/snapshots/c1"
echo '{}' >"$tmp/hub/models--meta-llama--Meta-Llama-3-8B/snapshots/c1/config.json"
HF_HUB_CACHE=$tmp/hub
export HF_HUB_CACHE

for sh in bash zsh fish; do
	if "$prog" completions $sh >"$tmp/vramplan.$sh" 2>"$tmp/err" &&
	    [ -s "$tmp/vramplan.$sh" ]; then
		ok "completions $sh: printed"
	else
		bad "completions $sh: printed" "$tmp/err"
	fi
done
"$prog" completions tcsh >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "unknown shell 'tcsh' (bash, zsh or fish)" "$tmp/err" &&
    ok "completions tcsh: usage error" || bad "completions tcsh: usage error" "$tmp/err"
if [ -n "${TOP_BUILDDIR-}" ] && [ -f "$TOP_BUILDDIR/completions/vramplan" ]; then
	cmp -s "$TOP_BUILDDIR/completions/vramplan" "$tmp/vramplan.bash" &&
	    ok "the built bash script is the program's" ||
	    bad "the built bash script is the program's"
fi

# ---- bash: each case is words (the last one being completed) and the
# replies expected, in order.  Run from an empty directory, so that file
# names do not join the replies.
mkdir "$tmp/cwd"
if ! command -v bash >/dev/null 2>&1; then
	echo "skip bash: not installed"
else
	cat >"$tmp/ask.bash" <<'EOF'
# ask WORD...: complete the last word; prints the replies, one a line.
source "$1" || exit 1
shift
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
_vramplan
printf '%s\n' "${COMPREPLY[@]}" | sort
EOF
	# $1 name, $2 the replies expected (one a line), then the words.
	bcase() {
		name=$1 want=$2
		shift 2
		(cd "$tmp/cwd" && bash "$tmp/ask.bash" "$tmp/vramplan.bash" \
		    "$prog" "$@") >"$tmp/got" 2>&1
		printf '%s\n' "$want" | sort >"$tmp/want"
		if cmp -s "$tmp/got" "$tmp/want"; then
			ok "bash: $name"
		else
			diff "$tmp/want" "$tmp/got" >"$tmp/diff"
			bad "bash: $name" "$tmp/diff"
		fi
	}
	ids_a1=$("$prog" gpus --ids | grep '^A1' | sed 's/^/2x/')
	bcase "--gpus 2xA1: card ids after the count" "$ids_a1" \
	    gpt2 --gpus 2xA1
	case $ids_a1 in
	*2xA100-80G-SXM*) ok "bash: 2xA1 offers 2xA100-80G-SXM" ;;
	*) bad "bash: 2xA1 offers 2xA100-80G-SXM" ;;
	esac
	bcase "--gpus=8xH1 (split at '=')" \
	    "$("$prog" gpus --ids | grep '^H1' | sed 's/^/8x/')" \
	    gpt2 --gpus = 8xH1
	bcase "--recompute f: an option value" "full" gpt2 --recompute f
	bcase "--precision: every value" \
	    "$("$prog" gpt2 --precision x 2>&1 | sed -n 's/.*(one of: \(.*\))$/\1/p' |
	    tr ' ' '\n')" gpt2 --precision ""
	bcase "--recomp: option names" "--recompute
--recompute-stride" gpt2 --recomp
	bcase "compare --sort: its values" "cost
time
gpus" compare gpt2 --sort ""
	bcase "compare --tok: compare's own option" "--tokens" compare gpt2 --tok
	bcase "--tok: not the estimate's" "" gpt2 --tok
	bcase "gpus --i" "--ids" gpus --i
	bcase "models --n" "--names" models --n
	bcase "MODEL: library names" "llama-3.1-405b
llama-3.1-70b
llama-3.1-8b" llama-3.1-
	bcase "MODEL: a repository of the Hugging Face cache" \
	    "meta-llama/Meta-Llama-3-8B" meta-
	bcase "tui MODEL" "gpt2-large
gpt2-medium
gpt2-xl" tui gpt2-
	bcase "subcommands and models" "command-r
compare
completions" com
	bcase "calibrate --device" "cpu
cuda" calibrate --device c
	bcase "calibrate --model: library names" "qwen3-30b-a3b
qwen3-8b" calibrate --model qwen3
	bcase "completions SHELL" "zsh" completions z
	bcase "--seq: a number, nothing offered" "" gpt2 --seq ""
fi

# ---- zsh and fish: syntax, and fish's answers.
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$tmp/vramplan.zsh" 2>"$tmp/err" && ok "zsh: parses" ||
	    bad "zsh: parses" "$tmp/err"
	mkdir "$tmp/fpath"
	cp "$tmp/vramplan.zsh" "$tmp/fpath/_vramplan"
	zsh -f -c 'fpath=("$1" $fpath); autoload -U compinit;
	    compinit -u -d "$2"; print -r -- $_comps[vramplan]' zsh \
	    "$tmp/fpath" "$tmp/zcompdump" >"$tmp/got" 2>&1
	[ "$(cat "$tmp/got")" = _vramplan ] &&
	    ok "zsh: compinit binds _vramplan to vramplan" ||
	    bad "zsh: compinit binds _vramplan to vramplan" "$tmp/got"
	# Completing in zsh itself, through a pseudo-terminal
	# (tests/data/completion/zpty.zsh): the edit buffer after TAB.
	if zsh -f -c 'zmodload zsh/zpty' 2>/dev/null; then
		mkdir -p "$tmp/bin" "$tmp/zhome"
		ln -sf "$prog" "$tmp/bin/vramplan"
		(cd "$tmp/cwd" && timeout 60 zsh -f "$top/tests/data/completion/zpty.zsh" \
		    "$tmp/fpath" "$tmp/bin" "$tmp/zhome" \
		    'vramplan gpt2 --recompute f' 'vramplan gpt2 --recompute full ' \
		    'vramplan gpt2 --gpus 4xH2' 'vramplan gpt2 --gpus 4xH200-141G-SXM ' \
		    'vramplan gpt2 --gpus=4xB2' 'vramplan gpt2 --gpus=4xB200-180G-SXM ' \
		    'vramplan gpt2 --gpus 4' 'vramplan gpt2 --gpus 4x' \
		    'vramplan gpt2 --recompute=fu' 'vramplan gpt2 --recompute=full ' \
		    'vramplan gpus --i' 'vramplan gpus --ids ' \
		    'vramplan models --c' 'vramplan models --cached ' \
		    'vramplan tui gpt2-x' 'vramplan tui gpt2-xl ' \
		    'vramplan compare gpt2 --so' 'vramplan compare gpt2 --sort=' \
		    'vramplan calibrate --device cu' 'vramplan calibrate --device cuda ' \
		    'vramplan calibrate --model qwen3-8' 'vramplan calibrate --model qwen3-8b ' \
		    'vramplan llama-3.1-4' 'vramplan llama-3.1-405b ' \
		    'vramplan meta-' 'vramplan meta-llama/Meta-Llama-3-8B ' \
		    'vramplan completions f' 'vramplan completions fish ') \
		    >"$tmp/zpty.out" 2>&1
		st=$?
		n=$(grep -c '^ok ' "$tmp/zpty.out")
		if [ "$st" = 0 ] && [ "$n" = 14 ] && ! grep -q '^FAIL' "$tmp/zpty.out"; then
			ok "zsh: 14 command lines completed in zsh (zpty)"
		else
			echo "exit status $st" >>"$tmp/zpty.out"
			bad "zsh: 14 command lines completed in zsh (zpty)" "$tmp/zpty.out"
		fi
	else
		echo "skip zsh completing: no zsh/zpty module"
	fi
else
	echo "skip zsh: not installed"
fi
if command -v fish >/dev/null 2>&1; then
	fish -n "$tmp/vramplan.fish" 2>"$tmp/err" && ok "fish: parses" ||
	    bad "fish: parses" "$tmp/err"
	mkdir -p "$tmp/bin"
	ln -sf "$prog" "$tmp/bin/vramplan"
	# $1 name, $2 expected replies, $3 the command line.
	fcase() {
		(cd "$tmp/cwd" && PATH="$tmp/bin:$PATH" HOME="$tmp" \
		    XDG_CONFIG_HOME="$tmp/xdg" fish --no-config -c \
		    'source $argv[1]; complete -C $argv[2]' "$tmp/vramplan.fish" \
		    "$3") 2>&1 | cut -f1 | sort >"$tmp/got"
		printf '%s\n' "$2" | sort >"$tmp/want"
		if cmp -s "$tmp/got" "$tmp/want"; then
			ok "fish: $1"
		else
			diff "$tmp/want" "$tmp/got" >"$tmp/diff"
			bad "fish: $1" "$tmp/diff"
		fi
	}
	fcase "--recompute f" "full" "vramplan gpt2 --recompute f"
	fcase "--gpus 2xA1" "$("$prog" gpus --ids | grep '^A1' |
	    sed 's/^/2x/')" "vramplan gpt2 --gpus 2xA1"
	fcase "--gpus=2xA1" "$("$prog" gpus --ids | grep '^A1' |
	    sed 's/^/--gpus=2x/')" "vramplan gpt2 --gpus=2xA1"
	fcase "tui MODEL" "gpt2-xl" "vramplan tui gpt2-x"
	fcase "MODEL from the cache" "meta-llama/Meta-Llama-3-8B" "vramplan meta-"
	fcase "compare --sort" "cost
gpus
time" "vramplan compare gpt2 --sort "
	fcase "MODEL" "llama-3.1-405b
llama-3.1-70b
llama-3.1-8b" "vramplan llama-3.1-"
else
	echo "skip fish: not installed"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
