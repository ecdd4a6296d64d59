#!/bin/sh
# libapi.sh — the public C library (vramplan(3)): the example program
# examples/estimate, linked with libvramplan, gives the program's numbers,
# plan, diagnostics and status on every case of tests/libapi.cases (models
# x plans, and errors); the shared library exports only vramplan_*
# symbols; vramplan(3) is mandoc -Tlint clean.
# Env: VRAMPLAN, VRAMPLAN_DATA, TOP_SRCDIR, TOP_BUILDDIR.
top=${TOP_SRCDIR:-.}
bld=${TOP_BUILDDIR:-.}
exe=${VRAMPLAN:-$bld/src/vramplan}
example=$bld/examples/estimate
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top/tests/need.sh"
passed=0 failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
# The user's stored profiles and catalog are not the test's.
XDG_DATA_HOME=$tmp/data XDG_CONFIG_HOME=$tmp/config
export XDG_DATA_HOME XDG_CONFIG_HOME

command -v python3 >/dev/null 2>&1 || missing libapi "python3 not found"

# 1. Every case: the example's numbers are the --json document's.
n=0
grep -v '^#' "$top/tests/libapi.cases" | sed "s|TESTS_DATA|$top/tests/data|" |
while read -r line; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$exe" $line --json >"$tmp/cli.json" 2>"$tmp/cli.err"
	crc=$?
	# The example's arguments: MODEL, then name=value and flags.
	set -- $line
	model=$1
	shift
	args=""
	for a in "$@"; do args="$args ${a#--}"; done
	# shellcheck disable=SC2086
	"$example" "$model" $args >"$tmp/lib.out" 2>"$tmp/lib.err"
	lrc=$?
	name="case-$n ($line)"
	if [ "$crc" != "$lrc" ]; then
		bad "$name" "status $lrc, the program's $crc"
	elif ! cmp -s "$tmp/cli.err" "$tmp/lib.err"; then
		bad "$name" "diagnostics differ: $(diff "$tmp/cli.err" "$tmp/lib.err" | head -5)"
	elif [ "$crc" -gt 1 ]; then
		ok "$name: status $crc and the same diagnostics"
	elif why=$(python3 - "$tmp/cli.json" "$tmp/lib.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lib = dict(l.split(' ', 1) for l in open(sys.argv[2]).read().splitlines())
want = {k: d['per_gpu'][k] for k in
        ('allocated_peak_bytes', 'reserved_peak_bytes', 'device_peak_bytes')}
want['capacity_bytes'] = d['per_gpu'].get('capacity_bytes') or 0
want['fits'] = -1 if d.get('fits') is None else int(d['fits'])
want['verdict'] = d.get('verdict') or 'null'
knobs = 0
for k, v in d['plan'].items():
    name = k.replace('_', '-')
    if name in lib and name not in want:
        want[name] = str(v).lower() if isinstance(v, bool) else v
        knobs += 1
bad = [f'{k}: library {lib.get(k)}, program {v}' for k, v in want.items()
       if str(lib.get(k)) != str(v)]
if knobs < 8:
    bad.append(f'only {knobs} plan knobs compared')
print('; '.join(bad) if bad else f'{len(want)} numbers and knobs')
sys.exit(1 if bad else 0)
PY
	); then
		ok "$name: $why"
	else
		bad "$name" "$why"
	fi
	echo "$passed $failed" >"$tmp/count"
done
read -r passed failed <"$tmp/count"
[ "$passed" -ge 10 ] || bad cases "only $passed cases passed (at least 10)"

# 2. Only the public symbols leave the shared library.
so=$(ls "$bld"/src/.libs/libvramplan.so.* 2>/dev/null | head -1)
if [ -z "$so" ]; then
	bad exports "no src/.libs/libvramplan.so.* (shared library not built)"
elif command -v nm >/dev/null 2>&1; then
	others=$(nm -D --defined-only "$so" | awk '{ print $3 }' |
	    grep -v '^vramplan_' | head -5)
	count=$(nm -D --defined-only "$so" | grep -c ' vramplan_')
	if [ -z "$others" ] && [ "$count" -ge 20 ]; then
		ok "exports: $count vramplan_* functions, nothing else"
	else
		bad exports "exported besides vramplan_*: $others (count $count)"
	fi
fi

# 2b. The header, the exports and vramplan(3)'s NAME list agree: every
# function declared is exported and documented, and nothing else is.
sed -n 's/^[a-z].*[ *]\(vramplan_[a-z_]*\)(.*/\1/p' "$top/src/vramplan.h" |
    sort >"$tmp/header"
sed -n 's/^\.Nm \(vramplan_[a-z_]*\).*/\1/p' "$top/man/vramplan.3" |
    sort >"$tmp/man"
if [ -n "$so" ] && command -v nm >/dev/null 2>&1; then
	nm -D --defined-only "$so" | awk '$3 ~ /^vramplan_/ { print $3 }' |
	    sort >"$tmp/exports"
else
	cp "$tmp/header" "$tmp/exports"
fi
if [ -s "$tmp/header" ] && cmp -s "$tmp/header" "$tmp/man" &&
    cmp -s "$tmp/header" "$tmp/exports"; then
	ok "vramplan.h, the exports and vramplan(3) name the same $(wc -l <"$tmp/header") functions"
else
	bad "header-exports-manual" "$(diff "$tmp/header" "$tmp/man" | head -3) $(diff "$tmp/header" "$tmp/exports" | head -3)"
fi

# 3. The manual of the library lints clean.
if command -v mandoc >/dev/null 2>&1; then
	if mandoc -Tlint -Wwarning "$top/man/vramplan.3" >"$tmp/lint" 2>&1; then
		ok "vramplan.3 lints clean"
	else
		bad "vramplan.3-lint" "$(head -5 "$tmp/lint")"
	fi
else
	missing libapi "mandoc not found (vramplan.3 lint)"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
