#!/bin/sh
# Published LoRA/QLoRA measurements against vramplan (see published_lora.py).
# It needs a Python 3 (TORCH_PYTHON, default /usr/bin/python3), not torch:
# skipped without one, a failure when CI is set (tests/need.sh).
py=${TORCH_PYTHON:-/usr/bin/python3}
top=${TOP_SRCDIR:-.}
. "$top/tests/need.sh"
"$py" -c 'import sys; sys.exit(sys.version_info[0] != 3)' >/dev/null 2>&1 ||
	missing published_lora "$py is not a working Python 3"
exec "$py" "$top/tests/published_lora.py"
