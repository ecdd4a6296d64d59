#!/bin/sh
# Published GPU training-memory measurements against vramplan (see
# published_gpu.py).  It needs a Python 3 with PyYAML (TORCH_PYTHON, default
# /usr/bin/python3), not torch: skipped without them, a failure when CI is
# set (tests/need.sh).
py=${TORCH_PYTHON:-/usr/bin/python3}
top=${TOP_SRCDIR:-.}
. "$top/tests/need.sh"
"$py" -c 'import sys; sys.exit(sys.version_info[0] != 3)' >/dev/null 2>&1 ||
	missing published_gpu "$py is not a working Python 3"
"$py" -c 'import yaml' >/dev/null 2>&1 ||
	missing published_gpu "$py cannot import yaml (PyYAML)"
exec "$py" "$top/tests/published_gpu.py"
