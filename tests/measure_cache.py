"""Measurements of real PyTorch kept for the other passes of one CI run.

.ci/run runs the test suite three times on the same sources: the README's
`make check`, the same under ASan + UBSan, and `make distcheck`.  What the
sanitizers and the tarball check is vramplan, not PyTorch: the PyTorch
side of a validation (a training step replayed through the exact
allocator accounting, FSDP ranks on gloo, Inductor compiles) gives the
same bytes every time for the same sources, and it is most of the time of
a pass.  With VRAMPLAN_MEASURE_CACHE set to a directory, a measurement is
stored there under a key made of its case, the PyTorch, Python and
package versions, and the text of every file it depends on (the
validation script and the harness); a later pass with the same key reads
it back instead of measuring again.  Every estimate is still computed by
the binary under test and compared in every pass.  Unset (the default,
and the README's test command run by hand), every case is measured.

Only JSON values are kept: keys starting with "_" (in-process objects
such as the allocator replay) are dropped, so a caller that needs them
must measure directly.
"""

import hashlib
import json
import os
import sys
import tempfile


def _digest(parts, files):
    h = hashlib.sha256()
    h.update(json.dumps(parts, sort_keys=True, default=str).encode())
    h.update(sys.version.encode())
    for f in files:
        with open(f, "rb") as fh:
            h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:32]


def _jsonable(v):
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items() if not str(k).startswith("_")}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def cached(kind, key, files, measure):
    """measure(), or what it returned for the same kind, key and files in
    an earlier pass of this run.  key: the case and versions (anything
    json.dumps takes); files: paths whose text the measurement depends on."""
    d = os.environ.get("VRAMPLAN_MEASURE_CACHE")
    if not d:
        return measure()
    path = os.path.join(d, "%s-%s.json" % (kind, _digest([kind, key], files)))
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        pass
    text = json.dumps(_jsonable(measure()))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    # The value a later pass reads, so that every pass sees the same.
    return json.loads(text)
