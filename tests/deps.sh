#!/bin/sh
# deps.sh — the modules of src/ depend on each other without cycles.
#
# A module is name.c + name.h (a name_topic.c without a header of its own
# is a module too).  A -> B when
#   - A.c or A.h includes "B.h" (the source), or
#   - A's object file uses a symbol that B's object file defines (the link:
#     this sees what a header declares for another file, as cli.h does for
#     cli_calib.c), read with nm from the objects under $TOP_BUILDDIR/src
#     when they are there.
# main.c (the root: nothing can depend on it) and config.h (configure's)
# are left out.  Each strongly connected component of more than one
# module is a cycle: it is printed with one path around it and, for each
# of its edges, why the edge is there.  Exit status 1 when any exists.
#
# Env: TOP_SRCDIR (default: this script's parent), TOP_BUILDDIR, NM.
top=${TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
src=$top/src
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# Source edges: "A B why".
for p in "$src"/*.c "$src"/*.h; do
	f=${p##*/}
	a=${f%.*}
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)\.h".*/\1/p' "$p" |
	while read -r b; do
		[ "$b" = "$a" ] || [ "$b" = config ] || [ "$a" = main ] && continue
		[ -f "$src/$b.h" ] && echo "$a $b $f-includes-$b.h"
	done
done >"$tmp/edges"

# Link edges, from the objects: automake names them target-name.o, and
# the module is the part after the last '-'; libtool keeps libvpcore's
# (position-independent) ones in src/.libs.
nobj=0
if [ -n "${TOP_BUILDDIR-}" ] && [ -d "$TOP_BUILDDIR/src" ]; then
	for o in "$TOP_BUILDDIR"/src/*.o "$TOP_BUILDDIR"/src/.libs/*.o; do
		[ -f "$o" ] || continue
		m=${o##*/}; m=${m%.o}; m=${m##*-}
		[ "$m" = main ] && continue
		[ -f "$src/$m.c" ] || continue
		${NM:-nm} -P "$o" 2>/dev/null | awk -v m="$m" '
		    $2 ~ /^[TDRBCGSVW]$/ { print "D", m, $1 }
		    $2 == "U" { print "U", m, $1 }'
	done | sort -u >"$tmp/syms"
	nobj=$(ls "$TOP_BUILDDIR"/src/*.o "$TOP_BUILDDIR"/src/.libs/*.o \
	    2>/dev/null | wc -l)
	awk 'NR == FNR { if ($1 == "D") def[$3] = $2; next }
	    $1 == "U" && ($3 in def) && def[$3] != $2 { print $2, def[$3], "uses-" $3 }' \
	    "$tmp/syms" "$tmp/syms" >>"$tmp/edges"
fi
[ "$nobj" -gt 0 ] && echo "read $nobj object files for link edges" ||
    echo "no object files under \$TOP_BUILDDIR/src: source edges only"

# Tarjan's strongly connected components, then one cycle through each.
awk '
function visit(v,   i, w) {
	idx[v] = low[v] = ++counter; stack[++sp] = v; on[v] = 1
	for (i = 1; i <= nout[v]; i++) {
		w = out[v, i]
		if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
		else if (on[w] && idx[w] < low[v]) low[v] = idx[w]
	}
	if (low[v] == idx[v]) {
		ncomp++; size = 0
		do { w = stack[sp--]; on[w] = 0; comp[w] = ncomp; size++ } while (w != v)
		csize[ncomp] = size
	}
}
# A shortest path from s back to s inside component c (breadth first).
function cycle(s, c,   q, h, t, u, i, w, prev, seen, path) {
	h = 1; t = 0; q[++t] = s; seen[s] = 1
	while (h <= t) {
		u = q[h++]
		for (i = 1; i <= nout[u]; i++) {
			w = out[u, i]
			if (comp[w] != c) continue
			if (w == s) {
				path = s
				while (u != s) { path = u " -> " path; u = prev[u] }
				return s " -> " path
			}
			if (!(w in seen)) { seen[w] = 1; prev[w] = u; q[++t] = w }
		}
	}
	return s
}
{
	key = $1 SUBSEP $2
	if (!(key in has)) { has[key] = 1; out[$1, ++nout[$1]] = $2 }
	if (!((key, $3) in said)) {
		said[key, $3] = 1
		if (key in why) why[key] = why[key] ", " $3
		else why[key] = $3
	}
	node[$1] = node[$2] = 1
}
END {
	n = 0
	for (v in node) names[++n] = v
	# Sorted, so that the report does not depend on awk hash order.
	for (i = 2; i <= n; i++) for (j = i; j > 1 && names[j-1] > names[j]; j--) {
		t = names[j]; names[j] = names[j-1]; names[j-1] = t
	}
	for (i = 1; i <= n; i++) if (!(names[i] in idx)) visit(names[i])
	bad = 0
	for (i = 1; i <= n; i++) {
		v = names[i]; c = comp[v]
		if (csize[c] < 2 || (c in done)) continue
		done[c] = 1; bad++
		print "FAIL cycle: " cycle(v, c)
		for (j = 1; j <= n; j++) {
			a = names[j]
			if (comp[a] != c) continue
			for (k = 1; k <= nout[a]; k++) {
				b = out[a, k]
				if (comp[b] == c) {
					w = why[a, b]; gsub(/-/, " ", w)
					print "     " a " -> " b ": " w
				}
			}
		}
	}
	printf "%d modules, %d cycles\n", n, bad
	exit bad > 0
}' "$tmp/edges"
