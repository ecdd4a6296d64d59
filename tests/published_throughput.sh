#!/bin/sh
# Published training throughputs against the time model.
exec "${TORCH_PYTHON:-/usr/bin/python3}" "${TOP_SRCDIR:-.}/tests/published_throughput.py"
