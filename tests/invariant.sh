#!/bin/sh
# The invariant test over random plans (issue 17; see invariant.py): a
# seeded sample of command lines over the library and generated models,
# each answer held to what every answer must satisfy.  Needs only a
# Python 3 (TORCH_PYTHON, default /usr/bin/python3, standard library):
# skipped without one, a failure when CI is set (tests/need.sh).
py=${TORCH_PYTHON:-/usr/bin/python3}
top=${TOP_SRCDIR:-.}
. "$top/tests/need.sh"
"$py" -c 'import sys; sys.exit(sys.version_info[0] != 3)' >/dev/null 2>&1 ||
	missing invariant "$py is not a working Python 3"
exec "$py" "$top/tests/invariant.py"
