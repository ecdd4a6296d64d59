#!/bin/sh
# The CLI's JSON against schema/vramplan-estimate.schema.json and
# schema/vramplan-compare.schema.json (tests/json_schema.py says what is
# checked).  Needs the test venv (`make venv`: jsonschema is pinned in
# requirements-test.txt) and tests/json_enums (built by make check).
# Without the venv the test is skipped (exit 77), or fails when CI is set
# (tests/need.sh).  Env: VRAMPLAN, TOP_SRCDIR, TOP_BUILDDIR, TORCH2_PYTHON.
py=${TORCH2_PYTHON:-${TOP_BUILDDIR:-build}/.venv-test/bin/python}
top=${TOP_SRCDIR:-.}
exe=${VRAMPLAN:-./src/vramplan}
enums=${TOP_BUILDDIR:-.}/tests/json_enums
. "$top/tests/need.sh"

# The CSV headers the CLI prints are the columns vramplan(1) documents
# (MACHINE-READABLE OUTPUT, the .It Ql lines between the csv-columns marks).
csv_doc() {
	awk -v kind="$1" '
	    index($0, ".\\\" csv-columns " kind) == 1 { on = 1; next }
	    index($0, ".\\\" end csv-columns") == 1 { on = 0 }
	    on && $1 == ".It" && $2 == "Ql" { printf "%s%s", n++ ? "," : "", $3 }
	' "$top/man/vramplan.1"
}
csv_fail=0
est=$("$exe" gpt2 --csv | head -1)
cmp=$("$exe" compare gpt2 --tokens 1e9 --csv | head -1)
for k in "estimate:$est" "compare:$cmp"; do
	name=${k%%:*} got=${k#*:}
	doc=$(csv_doc "$name")
	if [ -n "$got" ] && [ "$got" = "$doc" ]; then
		echo "ok csv-columns-$name ($got)"
	else
		echo "FAIL csv-columns-$name: the CLI prints '$got', vramplan(1) documents '$doc'"
		csv_fail=1
	fi
done
[ "$csv_fail" = 0 ] || exit 1
[ -x "$py" ] ||
	missing json_schema "no test venv at $py; build it with" "make venv"
"$py" -c 'import jsonschema' >/dev/null 2>&1 ||
	missing json_schema "$py cannot import jsonschema;" \
	    "rebuild the venv with make venv (requirements-test.txt pins it)"
[ -x "$enums" ] || { echo "FAIL json_schema: no $enums (make check builds it)"; exit 1; }
exec "$py" "$top/tests/json_schema.py" "$exe" "$enums" "$top"
