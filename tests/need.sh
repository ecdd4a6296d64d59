# need.sh — sourced by the tests that need an optional tool (PyTorch, a
# Python, rsvg-convert).  `missing TEST WHY` ends the test: skipped (exit
# status 77, which make check reports as SKIP) with one line saying why,
# (the words after TEST), except when the environment variable CI is set: CI must have every tool,
# so there a missing one fails the test (exit status 1).
missing() {
	_test=$1
	shift
	if [ -n "${CI-}" ]; then
		echo "FAIL $_test: $* (CI is set: CI must have it)"
		exit 1
	fi
	echo "SKIP $_test: $*"
	exit 77
}
