#!/bin/sh
# make install as a distribution runs it: DESTDIR=<tmp>, then
#   1. the installed vramplan (and vramplan-probe, when built) holds no path
#      of the source or build tree, debug information included (configure
#      maps both to "." with -ffile-prefix-map where the compiler has it);
#   2. the probe is in $(pkglibexecdir), not in $(bindir); the library and
#      catalog in $(pkgdatadir)/models;
#   3. run from /, with VRAMPLAN_DATA unset, the installed program finds
#      the library relative to itself in the DESTDIR tree: `vramplan models`
#      lists it (a model added there only shows it is that tree), and
#      `vramplan llama-3-8b --gpus 2xA100` answers (exit status 0 or 1).
# Env (make check sets them): TOP_SRCDIR, TOP_BUILDDIR, VP_PREFIX,
# VP_EXEC_PREFIX, VP_BINDIR, VP_PKGDATADIR, VP_PKGLIBEXECDIR; MAKE.
top=${TOP_SRCDIR:?} build=${TOP_BUILDDIR:?}
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -z "$2" ] || sed 's/^/     | /' "$2"; }
tmp=$(mktemp -d) || exit 1
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT INT TERM
root=$tmp/root

# A make of our own: not the jobserver or command-line variables of the
# make check that runs this test.
if (unset MAKEFLAGS MFLAGS MAKELEVEL
    ${MAKE:-make} -C "$build" install DESTDIR="$root") >"$tmp/log" 2>&1
then ok "make install DESTDIR=..."
else bad "make install DESTDIR=..." "$tmp/log"; echo "$pass passed, $fail failed"; exit 1
fi

bin=$root$VP_BINDIR/vramplan
probe=$root$VP_PKGLIBEXECDIR/vramplan-probe
data=$root$VP_PKGDATADIR/models

# 1. No source or build directory in the programs.  The configured prefix
# is taken out of each string first: distcheck installs under the
# unpacked tarball, so there $(prefix) lies inside the source directory.
notree() {
	tr -c '[:print:]' '\n' <"$1" | awk -v p="$VP_PREFIX" \
	    -v e="$VP_EXEC_PREFIX" -v s="$(cd "$top" && pwd)" -v b="$build" '
	    function cut(str, x,   i) {
		while (x != "" && (i = index(str, x)) > 0)
			str = substr(str, 1, i - 1) substr(str, i + length(x))
		return str
	    }
	    { t = cut(cut($0, p), e) }
	    index(t, s) || index(t, b) { print; n++ }
	    END { exit n > 0 }' >"$tmp/hits"
}
for f in "$bin" "$probe"; do
	[ -f "$f" ] || continue
	if notree "$f"; then ok "${f#$root}: no source or build tree path"
	else bad "${f#$root}: names the source or build tree" "$tmp/hits"
	fi
done

# 2. Where things went.
[ -x "$bin" ] && ok "vramplan in bindir" || bad "vramplan in bindir"
if [ -f "$build/calib/vramplan-probe" ]; then
	[ -x "$probe" ] && ok "vramplan-probe in pkglibexecdir" ||
	    bad "vramplan-probe in pkglibexecdir"
fi
[ ! -e "$root$VP_BINDIR/vramplan-probe" ] && ok "no vramplan-probe in bindir" ||
    bad "no vramplan-probe in bindir"
[ -f "$data/gpus.yaml" ] && [ -f "$data/llama-3-8b.yaml" ] &&
    ok "library and catalog in pkgdatadir/models" ||
    bad "library and catalog in pkgdatadir/models"
[ -f "$root$VP_PKGDATADIR/calib/calibrate.py" ] && ok "calib scripts in pkgdatadir/calib" ||
    bad "calib scripts in pkgdatadir/calib"

# 3. Relative to the program: only in the GNU layout (paths.h).
if [ "$VP_BINDIR" != "$VP_EXEC_PREFIX/bin" ] ||
    [ "$VP_PKGDATADIR" != "$VP_PREFIX/share/vramplan" ] ||
    [ "$VP_EXEC_PREFIX" != "$VP_PREFIX" ]; then
	echo "note: not the GNU layout; the program-relative lookup is not tested"
else
	sed 's/^name: .*/name: install-check-model/' "$data/gpt2.yaml" \
	    >"$data/zz-install-check.yaml"
	(cd / && env -u VRAMPLAN_DATA -u VRAMPLAN_CALIB_DIR -u VRAMPLAN_PROBE \
	    "$bin" models) >"$tmp/out" 2>&1
	st=$?
	if [ $st -eq 0 ] && grep -q '^llama-3-8b ' "$tmp/out" &&
	    grep -q '^zz-install-check ' "$tmp/out"; then
		ok "vramplan models from /: the DESTDIR library"
	else
		echo "     exit status $st"; bad "vramplan models from /: the DESTDIR library" "$tmp/out"
	fi
	rm -f "$data/zz-install-check.yaml"
	(cd / && env -u VRAMPLAN_DATA "$bin" llama-3-8b --gpus 2xA100) \
	    >"$tmp/out" 2>&1
	st=$?
	if [ $st -le 1 ] && [ -s "$tmp/out" ]; then
		ok "vramplan llama-3-8b --gpus 2xA100 from / (exit status $st)"
	else
		echo "     exit status $st"; bad "vramplan llama-3-8b --gpus 2xA100 from /" "$tmp/out"
	fi
fi

# 4. The shell completions (configure's --with-*-completion-dir: under the
# prefix unless told otherwise), each the script the program prints.
for f in vramplan _vramplan vramplan.fish; do
	[ -f "$build/completions/$f" ] || continue
	hit=$(find "$root" -name "$f" -path '*complet*' -o -name "$f" \
	    -path '*site-functions*' | head -n 1)
	if [ -n "$hit" ] && cmp -s "$hit" "$build/completions/$f"; then
		ok "completion ${hit#$root}"
	else
		bad "completion $f installed"
	fi
done

# 5. The public library (vramplan(3)): header, shared library, pkg-config
# file, manual and Python module in their places; the shared library names
# no tree; examples/estimate.c builds from the installed header and
# library through the installed vramplan.pc and answers; the installed
# Python module imports and answers.  VP_LIBDIR, VP_INCLUDEDIR,
# VP_MANDIR, VP_PYTHONDIR, VP_CC, VP_CFLAGS, VP_LDFLAGS (make check).
lib=$root$VP_LIBDIR
so=$(ls "$lib"/libvramplan.so.* 2>/dev/null | head -1)
[ -f "$root$VP_INCLUDEDIR/vramplan.h" ] && [ -n "$so" ] &&
    [ -f "$lib/libvramplan.a" ] && [ -f "$lib/pkgconfig/vramplan.pc" ] &&
    [ -f "$root$VP_MANDIR/man3/vramplan.3" ] &&
    [ -h "$root$VP_MANDIR/man3/vramplan_set.3" ] &&
    ok "vramplan.h, libvramplan.so and .a, vramplan.pc, vramplan.3 (and its links)" ||
    bad "vramplan.h, libvramplan.so and .a, vramplan.pc, vramplan.3 (and its links)"
if [ -n "$so" ]; then
	if notree "$so"; then ok "${so#$root}: no source or build tree path"
	else bad "${so#$root}: names the source or build tree" "$tmp/hits"
	fi
fi
if [ -n "$so" ] && command -v pkg-config >/dev/null 2>&1; then
	flags=$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config \
	    --define-variable=prefix="$root$VP_PREFIX" --cflags --libs vramplan)
	# shellcheck disable=SC2086
	# In the GNU layout the library finds the DESTDIR tree beside
	# itself (vramplan(3)); elsewhere it is told.
	if [ "$VP_LIBDIR" = "$VP_EXEC_PREFIX/lib" ] &&
	    [ "$VP_PKGDATADIR" = "$VP_PREFIX/share/vramplan" ]; then
		where=beside
	else
		where=$data
	fi
	if ${VP_CC:-cc} $VP_CFLAGS -o "$tmp/estimate" "$top/examples/estimate.c" \
	    $flags $VP_LDFLAGS >"$tmp/out" 2>&1 &&
	    (cd / && if [ "$where" = beside ]; then unset VRAMPLAN_DATA
	    else VRAMPLAN_DATA=$where; export VRAMPLAN_DATA; fi
	    LD_LIBRARY_PATH=$lib "$tmp/estimate" llama-3-8b gpus=2xA100) \
	    >"$tmp/out" 2>&1 &&
	    grep -q '^device_peak_bytes [1-9]' "$tmp/out"; then
		ok "examples/estimate.c built with pkg-config vramplan answers (models: $where)"
	else
		bad "examples/estimate.c built with pkg-config vramplan" "$tmp/out"
	fi
fi
if [ -n "$VP_PYTHONDIR" ] && [ -d "$root$VP_PYTHONDIR/vramplan" ] &&
    command -v python3 >/dev/null 2>&1; then
	# An ASan build's library needs its runtime first in the
	# interpreter (as tests/python_api.sh does).
	asan=$(ldd "$so" 2>/dev/null | awk '/libasan/ { print $3 }')
	if (cd / && if [ -n "$asan" ]; then
	    LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0
	    export LD_PRELOAD ASAN_OPTIONS; fi
	    PYTHONPATH=$root$VP_PYTHONDIR VRAMPLAN_LIB=$so \
	    VRAMPLAN_DATA=$data python3 -c '
import vramplan, vramplan._libdir as d
r = vramplan.estimate("gpt2", micro_batch=2)
print(d.LIBDIR, r["per_gpu"]["device_peak_bytes"])') >"$tmp/out" 2>&1 &&
	    grep -q "^$VP_LIBDIR [1-9]" "$tmp/out"; then
		ok "the installed Python module answers (_libdir: $VP_LIBDIR)"
	else
		bad "the installed Python module" "$tmp/out"
	fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
