#!/bin/zsh -f
# zpty.zsh FPATH BINDIR TMPDIR [LINE BUFFER]... — tests/completion.sh drives
# zsh completion through a pseudo-terminal: zsh -f -i with compinit over
# FPATH (holding _vramplan) and BINDIR first in PATH.  For each pair: LINE
# typed, then TAB and ^X; ^X is bound to show the edit buffer as BUF<...>,
# which must equal BUFFER.  Prints "ok LINE" or "FAIL LINE -> [buffer]".
zmodload zsh/zpty || exit 77
fp=$1 bin=$2 zcd=$3
shift 3
zpty z "env PS1='%% ' TERM=dumb HOME=$zcd zsh -f -i"
zpty -w z "fpath=($fp \$fpath); autoload -U compinit; compinit -u -d $zcd/zcd; PATH=$bin:\$PATH; show-buf() { zle -M \"BUF<\$BUFFER>\" }; zle -N show-buf; bindkey '^X' show-buf; print READY"
zpty -r -m z out '*READY*' || exit 1
while (( $# >= 2 )); do
	zpty -w -n z "$1"$'\t\x18'
	zpty -r -m z out "*BUF<*>*"
	got=${${out##*BUF<}%%>*}
	if [[ $got == "$2" ]]; then print -r -- "ok $1"; else print -r -- "FAIL $1 -> [$got]"; fi
	zpty -w -n z $'\x15'
	shift 2
done
zpty -d z
