"""vramplan from Python: the GPU memory of a training step, estimated.

A thin ctypes binding of libvramplan (vramplan(3)); no compiled
extension.  Options are vramplan(1)'s long names with '_' for '-', and
their values as the command line spells them (str() of what is given;
True for a flag, None or False leaves an option out)::

    >>> import vramplan
    >>> r = vramplan.estimate("llama-3-8b", gpus="2xA100", recompute="full")
    >>> r["per_gpu"]["device_peak_bytes"], r["fits"]
    (85016576000, True)

estimate() returns json.loads of what ``vramplan MODEL --json`` prints
on the same inputs; plan() asks for the planner (it needs gpus=) and
returns the same document, whose "plan" is the chosen plan and
"search" its alternatives.  A plan that does not fit is an answer
("fits": False), not an error; a bad option, value or input raises an
Error subclass carrying the exit status and the diagnostics.  The
warnings and notes of an estimate that ran (a DeepSpeed key that is not
modelled, an option with no effect) are issued as vramplan.Warning
(the warnings module).

The library is found through the environment variable VRAMPLAN_LIB (its
path), the build tree (src/.libs next to this package's python/
directory, or under build/), the libdir it was installed with, and the
system's library path (ctypes.util.find_library).  The model library is
found as the library finds it: data_dir=, else VRAMPLAN_DATA, else
beside the library (vramplan(3)).
"""

import ctypes
import ctypes.util
import json
import os
import threading
import warnings
from collections import namedtuple

__all__ = ["estimate", "plan", "Error", "UsageError", "InputError",
           "SystemFailure", "Diagnostic", "Warning", "version"]

OK, NOFIT, USAGE, INPUT, SYSTEM = 0, 1, 2, 3, 4
_SEVERITY = {0: "error", 1: "warning", 2: "note"}

Diagnostic = namedtuple("Diagnostic", "severity file line column message")


class Error(Exception):
    """An estimate that could not run: .status is vramplan(1)'s exit
    status, .diagnostics the Diagnostic list, .text the messages as the
    program prints them on stderr."""

    def __init__(self, status, diagnostics, text):
        msg = "; ".join(d.message for d in diagnostics
                        if d.severity == "error") or text.strip()
        super().__init__(msg or "vramplan: status %d" % status)
        self.status = status
        self.diagnostics = diagnostics
        self.text = text


class UsageError(Error):
    """A bad option or value (exit status 2)."""


class InputError(Error):
    """A bad or missing model, plan or catalog file (exit status 3)."""


class SystemFailure(Error):
    """A system failure (exit status 4)."""


class Warning(UserWarning):  # noqa: A001 (vramplan.Warning)
    """A warning or note of an estimate that ran (what the program
    prints on stderr next to its report); .diagnostic is the
    Diagnostic."""

    def __init__(self, diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


_ERRORS = {USAGE: UsageError, INPUT: InputError, SYSTEM: SystemFailure}
_lib = None
_lock = threading.Lock()


def _candidates():
    env = os.environ.get("VRAMPLAN_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    for d in (os.path.join(top, "src", ".libs"),
              os.path.join(top, "build", "src", ".libs")):
        yield os.path.join(d, "libvramplan.so")
    try:
        from . import _libdir
        yield os.path.join(_libdir.LIBDIR, "libvramplan.so")
    except ImportError:
        pass
    found = ctypes.util.find_library("vramplan")
    if found:
        yield found


def _load():
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(path)
                continue
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
        else:
            raise OSError("vramplan: libvramplan not found (set "
                          "VRAMPLAN_LIB to its path); tried: " +
                          ", ".join(tried or ["nothing"]))
        h, c, s, i, z = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                         ctypes.c_int, None)
        for name, res, args in (
                ("vramplan_new", h, []), ("vramplan_free", z, [h]),
                ("vramplan_version", c, []),
                ("vramplan_set_data_dir", i, [h, c]),
                ("vramplan_set_model", i, [h, c]),
                ("vramplan_set", i, [h, c, c]),
                ("vramplan_estimate", i, [h]), ("vramplan_search", i, [h]),
                ("vramplan_json", c, [h]),
                ("vramplan_diag_count", s, [h]),
                ("vramplan_diag_severity", i, [h, s]),
                ("vramplan_diag_file", c, [h, s]),
                ("vramplan_diag_line", i, [h, s]),
                ("vramplan_diag_column", i, [h, s]),
                ("vramplan_diag_message", c, [h, s]),
                ("vramplan_diag_text", c, [h])):
            f = getattr(lib, name)
            f.restype = res
            f.argtypes = args
        _lib = lib
        return lib


def version():
    """The library's version, "0.1.0"."""
    return _load().vramplan_version().decode()


def _b(s):
    return None if s is None else str(s).encode()


def _s(b):
    return None if b is None else b.decode("utf-8", "replace")


def _diagnostics(lib, h):
    return [Diagnostic(_SEVERITY.get(lib.vramplan_diag_severity(h, i)),
                       _s(lib.vramplan_diag_file(h, i)),
                       lib.vramplan_diag_line(h, i),
                       lib.vramplan_diag_column(h, i),
                       _s(lib.vramplan_diag_message(h, i)))
            for i in range(lib.vramplan_diag_count(h))]


def _raise(lib, h, status):
    raise _ERRORS.get(status, Error)(status, _diagnostics(lib, h),
                                     _s(lib.vramplan_diag_text(h)))


def _run(search, model, data_dir, options):
    lib = _load()
    h = lib.vramplan_new()
    try:
        if data_dir is not None:
            lib.vramplan_set_data_dir(h, _b(os.fspath(data_dir)))
        rc = lib.vramplan_set_model(h, _b(os.fspath(model)))
        for key, value in options.items():
            if rc != OK:
                break
            if value is None or value is False:
                continue
            rc = lib.vramplan_set(h, _b(key.replace("_", "-")),
                                  None if value is True else _b(value))
        if rc == OK:
            rc = (lib.vramplan_search if search else
                  lib.vramplan_estimate)(h)
        if rc not in (OK, NOFIT):
            _raise(lib, h, rc)
        for d in _diagnostics(lib, h):
            warnings.warn(Warning(d), stacklevel=3)
        return json.loads(lib.vramplan_json(h).decode())
    finally:
        lib.vramplan_free(h)


def estimate(model, data_dir=None, **options):
    """json.loads of ``vramplan MODEL --json`` with options (see the
    module's help); raises Error on a bad option, value or input."""
    return _run(False, model, data_dir, options)


def plan(model, data_dir=None, **options):
    """The planner's answer for gpus= ("plan": the chosen plan,
    "search": the alternatives); the options given stay fixed, those
    left out are chosen.  UsageError without gpus=, or with no_search
    or dp."""
    return _run(True, model, data_dir, options)
