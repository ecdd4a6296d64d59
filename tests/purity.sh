#!/bin/sh
# purity.sh — the pure core does no I/O and pulls in no system libraries.
#
# The core (the files of VP_CORE in Makefile.am, read from there so the
# two lists cannot drift) must not include <yaml.h>, curses or
# CUDA/NCCL headers, and must not call stdio file or console I/O, exit(),
# getenv() or read the clock.  The one exception: util.c's oom() writes one
# line to stderr with fputs and calls abort() (the x* allocators' contract).
# Across all of src/, only ydoc.c includes <yaml.h>.
#
# Calls are looked for in the code with comments and string literals
# blanked out, so a message such as "exit(1)" or a comment mentioning
# printf( does not count, and snprintf / vp_buf_printf are not printf.
#
# Env: TOP_SRCDIR, the source root (default: this script's parent).
# Prints one line per check and "N passed, M failed"; exit 0 or 1.

top=${TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
src=$top/src
pass=0
fail=0
tmp=${TMPDIR:-/tmp}/vp-purity.$$
trap 'rm -f "$tmp".*' EXIT INT TERM

ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# Blank out comments and the contents of string and character literals,
# keeping line structure, so that grep line numbers stay right.
strip() {
	awk '
	BEGIN { st = 0 }	# 0 code, 1 block comment, 2 string, 3 char
	{
		out = ""; n = length($0); i = 1
		while (i <= n) {
			c = substr($0, i, 1); d = substr($0, i, 2)
			if (st == 1) {
				if (d == "*/") { st = 0; out = out "  "; i += 2; continue }
				out = out " "; i++; continue
			}
			if (st == 2 || st == 3) {
				if (c == "\\") { out = out "  "; i += 2; continue }
				if ((st == 2 && c == "\"") || (st == 3 && c == "\047")) {
					st = 0; out = out c; i++; continue
				}
				out = out " "; i++; continue
			}
			if (d == "/*") { st = 1; out = out "  "; i += 2; continue }
			if (d == "//") { break }
			if (c == "\"") { st = 2 }
			else if (c == "\047") { st = 3 }
			out = out c; i++
		}
		# An unterminated string or char literal ends with its line.
		if (st >= 2) st = 0
		print out
	}' "$1"
}

# The core's files: the words of Makefile.am's "VP_CORE = \" block, up
# to its first line without a continuation backslash.
core=$(awk '
    /^VP_CORE[[:space:]]*=/ { on = 1 }
    on {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^src\/[A-Za-z0-9_]+\.[ch]$/) print substr($i, 5)
	if ($0 !~ /\\[[:space:]]*$/) exit
    }' "$top/Makefile.am")
if [ -z "$core" ]; then
	bad "Makefile.am: no VP_CORE list found in $top/Makefile.am"
	echo "$pass passed, $fail failed"
	exit 1
fi

# Forbidden headers (matched on the #include line itself).
inc_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]((n?curses|ncursesw/curses|ncurses/curses|yaml|cuda|cuda_runtime|cuda_runtime_api|cudnn|cublas|cublasLt|cublas_v2|nccl|nvml)\.h|cuda[^>"]*)[>"]'

# Forbidden calls and identifiers (matched on the stripped code).
call_re='(^|[^A-Za-z0-9_])(fopen|freopen|fdopen|fclose|fread|fwrite|fgets|fgetc|getc|getchar|fputc|putc|putchar|fputs|puts|printf|vprintf|fprintf|vfprintf|perror|fflush|popen|system|exit|_Exit|_exit|quick_exit|abort|getenv|secure_getenv|setenv|time|clock|clock_gettime|gettimeofday)[[:space:]]*\(|(^|[^A-Za-z0-9_])(stdin|stdout|stderr)([^A-Za-z0-9_]|$)'

# util.c: the lines of oom()'s body, from "oom(void)" to the closing "}".
oom_lo=0
oom_hi=0
if [ -f "$src/util.c" ]; then
	set -- $(strip "$src/util.c" | awk '
	    /^oom[[:space:]]*\(/ { lo = NR }
	    lo && !hi && NR > lo && /^}/ { hi = NR }
	    END { print lo + 0, hi + 0 }')
	oom_lo=$1
	oom_hi=$2
fi

for f in $core; do
	p=$src/$f
	if [ ! -f "$p" ]; then
		bad "$f: missing"
		continue
	fi

	if grep -nE "$inc_re" "$p" >"$tmp.inc"; then
		bad "$f: includes a forbidden header:"
		sed 's/^/       /' "$tmp.inc"
	else
		ok "$f: no yaml, curses or CUDA headers"
	fi

	strip "$p" | grep -nE "$call_re" >"$tmp.calls"
	if [ "$f" = util.c ] && [ "$oom_lo" -gt 0 ]; then
		# Allow exactly one `fputs("...", stderr);` line and one
		# `abort();` line, and only inside oom().
		awk -v lo="$oom_lo" -v hi="$oom_hi" '
		    {
			line = $0; sub(/:.*/, "", line)
			text = substr($0, length(line) + 2)
			inside = line + 0 > lo + 0 && line + 0 < hi + 0
			if (inside && nf == 0 && text ~ /^[ \t]*fputs[ \t]*\("[^"]*",[ \t]*stderr[ \t]*\);[ \t]*$/) {
				nf++; next
			}
			if (inside && na == 0 && text ~ /^[ \t]*abort[ \t]*\([ \t]*\);[ \t]*$/) {
				na++; next
			}
			print
		    }' "$tmp.calls" >"$tmp.left"
		mv "$tmp.left" "$tmp.calls"
	fi
	if [ -s "$tmp.calls" ]; then
		bad "$f: does I/O, exits, reads the environment or the clock:"
		sed 's/^/       /' "$tmp.calls"
	else
		ok "$f: no I/O, exit, getenv or clock calls"
	fi
done

# util.c's oom() must be there, report on stderr and abort: the contract
# of the x* allocators (and the only I/O the core may do).
if [ "$oom_lo" -gt 0 ] && [ "$oom_hi" -gt "$oom_lo" ] &&
    strip "$src/util.c" | sed -n "${oom_lo},${oom_hi}p" |
    grep -qE 'fputs[[:space:]]*\(.*stderr' &&
    strip "$src/util.c" | sed -n "${oom_lo},${oom_hi}p" |
    grep -qE '(^|[^A-Za-z0-9_])abort[[:space:]]*\('; then
	ok "util.c: oom() reports on stderr and aborts"
else
	bad "util.c: no oom() that writes to stderr and aborts"
fi

# Only ydoc.c includes <yaml.h>, across all of src/.
yaml_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]yaml\.h[>"]'
others=""
found_ydoc=no
for p in "$src"/*.c "$src"/*.h; do
	[ -f "$p" ] || continue
	if grep -qE "$yaml_re" "$p"; then
		case $(basename "$p") in
		ydoc.c) found_ydoc=yes ;;
		*) others="$others $(basename "$p")" ;;
		esac
	fi
done
if [ -n "$others" ]; then
	bad "src/: <yaml.h> included outside ydoc.c:$others"
else
	ok "src/: only ydoc.c may include <yaml.h>"
fi
if [ "$found_ydoc" = yes ]; then
	ok "src/ydoc.c: includes <yaml.h> (the one reader of libyaml)"
else
	bad "src/ydoc.c: does not include <yaml.h>; is the scan looking at the right tree ($src)?"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
