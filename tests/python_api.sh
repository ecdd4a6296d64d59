#!/bin/sh
# python_api.sh — runs tests/python_api.py (the Python module against the
# program) with the system python3 on the build tree's libvramplan.so.
# An ASan build's library needs the ASan runtime first in the process:
# it is preloaded then (leak checks off: the interpreter's own).
# Env: VRAMPLAN, VRAMPLAN_DATA, TOP_SRCDIR, TOP_BUILDDIR.
top=${TOP_SRCDIR:-.}
bld=${TOP_BUILDDIR:-.}
. "$top/tests/need.sh"
command -v python3 >/dev/null 2>&1 || missing python_api "python3 not found"
VRAMPLAN_LIB=$bld/src/.libs/libvramplan.so
[ -f "$VRAMPLAN_LIB" ] || { echo "FAIL: $VRAMPLAN_LIB not built"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
XDG_DATA_HOME=$tmp/data XDG_CONFIG_HOME=$tmp/config
PYTHONPATH=$top/python${PYTHONPATH:+:$PYTHONPATH}
PYTHONDONTWRITEBYTECODE=1
export VRAMPLAN_LIB XDG_DATA_HOME XDG_CONFIG_HOME PYTHONPATH \
    PYTHONDONTWRITEBYTECODE
if command -v ldd >/dev/null 2>&1 &&
    asan=$(ldd "$VRAMPLAN_LIB" | awk '/libasan/ { print $3 }') &&
    [ -n "$asan" ]; then
	LD_PRELOAD=$asan${LD_PRELOAD:+:$LD_PRELOAD}
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	export LD_PRELOAD ASAN_OPTIONS
fi
exec python3 "$top/tests/python_api.py"
