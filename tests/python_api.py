"""python_api.py: the Python module (python/vramplan) against the
program, on every case of tests/libapi.cases: estimate() returns
json.loads of the program's --json on the same inputs (equal dicts),
errors raise the Error subclass of the program's exit status with its
diagnostics (text equal to its stderr); plan() is the planner's answer
and refuses without gpus.  Run by tests/python_api.sh (system python3;
no torch needed).  Env: VRAMPLAN, VRAMPLAN_LIB, TOP_SRCDIR, PYTHONPATH.
"""
import json
import os
import subprocess
import sys
import warnings

import vramplan

top = os.environ.get("TOP_SRCDIR", ".")
exe = os.environ["VRAMPLAN"]
passed = failed = 0


def ok(name, why):
    global passed
    passed += 1
    print("ok %s: %s" % (name, why))


def bad(name, why):
    global failed
    failed += 1
    print("FAIL %s: %s" % (name, why))


def kwargs(opts):
    """--name=value and --flag as keyword arguments."""
    kw = {}
    for o in opts:
        name, eq, value = o[2:].partition("=")
        kw[name.replace("-", "_")] = value if eq else True
    return kw


cases = [l.replace("TESTS_DATA", os.path.join(top, "tests", "data")).split()
         for l in open(os.path.join(top, "tests", "libapi.cases"))
         if l.strip() and not l.startswith("#")]
for n, (model, *opts) in enumerate(cases, 1):
    name = "case-%d (%s)" % (n, " ".join([model] + opts))
    cli = subprocess.run([exe, model] + opts + ["--json"],
                         capture_output=True, text=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = vramplan.estimate(model, **kwargs(opts))
    except vramplan.Error as e:
        want = {2: vramplan.UsageError, 3: vramplan.InputError}.get(
            cli.returncode)
        if want is None or type(e) is not want:
            bad(name, "raised %s (status %d), program exit %d"
                % (type(e).__name__, e.status, cli.returncode))
        elif e.status != cli.returncode or e.text != cli.stderr:
            bad(name, "status %d / %r, program %d / %r"
                % (e.status, e.text, cli.returncode, cli.stderr))
        elif not e.diagnostics or e.diagnostics[0].severity != "error":
            bad(name, "no error diagnostic: %r" % (e.diagnostics,))
        else:
            d = e.diagnostics[0]
            ok(name, "%s, status %d, %s:%s:%s %s" % (
                type(e).__name__, e.status, d.file and os.path.basename(
                    d.file), d.line, d.column, d.message[:50]))
        continue
    if cli.returncode > 1:
        bad(name, "returned a report; the program exits %d: %s"
            % (cli.returncode, cli.stderr.strip()))
    elif got != json.loads(cli.stdout):
        w = json.loads(cli.stdout)
        diff = [k for k in set(got) | set(w) if got.get(k) != w.get(k)]
        bad(name, "differs from --json in %s" % diff)
    elif [str(c.message) for c in caught] != [
            l.split(": ", 1)[1].split("warning: ", 1)[-1].split(
                "note: ", 1)[-1] for l in cli.stderr.splitlines()
            if l.startswith("vramplan: ")]:
        bad(name, "warnings %r, program's stderr %r"
            % ([str(c.message) for c in caught], cli.stderr))
    else:
        ok(name, "the same document as --json (%d members, fits %s)%s"
           % (len(got), got.get("fits"), ", %d warnings/notes as on "
              "stderr" % len(caught) if caught else ""))

# ORG/NAME from a Hugging Face cache layout (hfcache.h): the library
# resolves models as the program does, --revision included.
import shutil
import tempfile
cache = tempfile.mkdtemp()
try:
    repo = os.path.join(cache, "models--meta-llama--Meta-Llama-3-8B")
    for c, f in (("c1", "llama-3-8b"), ("c2", "llama-3.2-1b")):
        os.makedirs(os.path.join(repo, "snapshots", c))
        shutil.copy(os.path.join(top, "tests", "data", "hf",
                                 f + ".config.json"),
                    os.path.join(repo, "snapshots", c, "config.json"))
    os.makedirs(os.path.join(repo, "refs"))
    for ref, c in (("main", "c1"), ("v2", "c2")):
        with open(os.path.join(repo, "refs", ref), "w") as f:
            f.write(c)
    os.environ["HF_HUB_CACHE"] = cache
    for model, kw in (("meta-llama/Meta-Llama-3-8B", {}),
                      ("meta-llama/Meta-Llama-3-8B", {"revision": "v2"}),
                      ("meta-llama/Not-Cached", {})):
        opts = ["--%s=%s" % (k, v) for k, v in kw.items()]
        name = "hf-cache %s %s" % (model, " ".join(opts))
        cli = subprocess.run([exe, model, "--gpus", "1xH100", "--json"] +
                             opts, capture_output=True, text=True)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = vramplan.estimate(model, gpus="1xH100", **kw)
            if cli.returncode <= 1 and got == json.loads(cli.stdout):
                ok(name, "the same document as --json (%s, %d notes)"
                   % (got["model"]["name"], len(caught)))
            else:
                bad(name, "differs from the program (exit %d)"
                    % cli.returncode)
        except vramplan.Error as e:
            if e.status == cli.returncode and e.text == cli.stderr:
                ok(name, "%s, status %d, the program's stderr"
                   % (type(e).__name__, e.status))
            else:
                bad(name, "%r / %r, program %d / %r"
                    % (e.status, e.text, cli.returncode, cli.stderr))
    del os.environ["HF_HUB_CACHE"]
finally:
    shutil.rmtree(cache)

# plan(): the planner's answer, the same document as the estimate with
# the same options; refused without gpus.
p = vramplan.plan("llama-3-8b", gpus="8xH100")
cli = subprocess.run([exe, "llama-3-8b", "--gpus", "8xH100", "--json"],
                     capture_output=True, text=True)
if p == json.loads(cli.stdout) and p["search"]["alternatives"]:
    ok("plan", "tp %s zero %s recompute %s, %d alternatives"
       % (p["plan"]["tp"], p["plan"]["zero"], p["plan"]["recompute"],
          len(p["search"]["alternatives"])))
else:
    bad("plan", "differs from the program's --json, or no alternatives")
for kw in ({}, {"gpus": "8xH100", "no_search": True}):
    try:
        vramplan.plan("llama-3-8b", **kw)
        bad("plan-refused %s" % kw, "no error")
    except vramplan.UsageError as e:
        ok("plan-refused %s" % kw, str(e))
try:
    vramplan.estimate("gpt2", frobnicate=1)
    bad("unknown-option", "no error")
except vramplan.UsageError as e:
    ok("unknown-option", str(e))

print("%d passed, %d failed" % (passed, failed))
if passed < 10:
    print("FAIL: fewer than 10 cases passed")
    sys.exit(1)
sys.exit(1 if failed else 0)
