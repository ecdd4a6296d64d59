#!/bin/sh
# vramplan-probe on a machine without a GPU: one clear line and exit 5,
# nothing on stdout and no file written; also --help (0), usage errors (2)
# and -o into a missing directory (4, nothing created).
# Skipped (77) where a GPU is visible: there the probe would measure it.
# Env: PROBE, the program (default: calib/vramplan-probe, from the build
# directory).
exe=${PROBE:-calib/vramplan-probe}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0 failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
hint='calibrate on a machine with an NVIDIA GPU and driver'

if [ ! -x "$exe" ]; then
	echo "FAIL: no program at '$exe'"
	exit 1
fi
if command -v nvidia-smi >/dev/null 2>&1 &&
    nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	echo "SKIP: nvidia-smi lists a GPU; this test wants a machine without"
	exit 77
fi

# 1. --help: the manual-style text on stdout, exit 0.
"$exe" --help >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^EXIT STATUS' "$tmp/out" &&
    grep -q 'no usable GPU' "$tmp/out" && [ ! -s "$tmp/err" ]
then ok help; else bad help "exit $rc: $(cat "$tmp/err")"; fi

# 2. Usage errors: exit 2, the usage line on stderr, nothing on stdout.
for args in "--bogus" "-d" "extra" "-d x" "-d -1"; do
	# shellcheck disable=SC2086 # the words are separate arguments
	"$exe" $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 2 ] && [ ! -s "$tmp/out" ] &&
	    grep -q '^vramplan-probe: \|^usage: vramplan-probe' "$tmp/err"
	then ok "usage '$args'"
	else bad "usage '$args'" "exit $rc: $(cat "$tmp/err")"; fi
done
"$exe" -d x 2>"$tmp/err"
grep -qx "vramplan-probe: device 'x' is invalid" "$tmp/err" &&
    ok bad-device-message || bad bad-device-message "$(cat "$tmp/err")"

# 3. No GPU: exit 5 and one line that names what is missing (no driver
# library at all, or a driver with no device) and what to do.
nogpu() {
	name=$1
	shift
	"$exe" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "SKIP: the probe measured a GPU; this test wants none"
		exit 77
	fi
	lines=$(wc -l <"$tmp/err")
	if [ $rc -eq 5 ] && [ ! -s "$tmp/out" ] && [ "$lines" -eq 1 ] &&
	    grep -q "^vramplan-probe: .*; $hint\$" "$tmp/err" &&
	    grep -q -e 'no CUDA driver: cannot load libcuda\.so\.1 (.*)' \
	    -e 'cuInit failed: CUDA_ERROR_' "$tmp/err"
	then ok "$name"; else bad "$name" "exit $rc: $(cat "$tmp/err")"; fi
}
nogpu no-gpu
nogpu no-gpu-device-3 -d 3
echo "  $(cat "$tmp/err")"

# 4. -o: nothing written without a measurement, no temporary left.
mkdir "$tmp/o"
nogpu no-gpu-output -o "$tmp/o/probe.yaml"
[ -z "$(ls -A "$tmp/o")" ] && ok no-gpu-no-file ||
    bad no-gpu-no-file "left: $(ls -A "$tmp/o")"

# 5. -o into a directory that does not exist: exit 4 before measuring,
# and nothing created.
"$exe" -o "$tmp/none/probe.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
want="cannot write '$tmp/none/probe.yaml': No such file or directory"
if [ $rc -eq 4 ] && [ ! -e "$tmp/none" ] && [ ! -s "$tmp/out" ] &&
    grep -qx "vramplan-probe: $want" "$tmp/err"
then ok missing-dir; else bad missing-dir "exit $rc: $(cat "$tmp/err")"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
