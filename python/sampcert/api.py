"""sampcert.certify and the Report it returns.

certify() builds a `sampcert run` command line, runs the sampcert executable and reads the
report.json it writes; it never decides a verdict itself. A Python sampler (a module-level
function or class) is served through the process protocol: the --sampler argument becomes
`exec:'PYTHON .../sampcert/_serve.py TARGET'`, with PYTHON this interpreter (sys.executable).
"""

import dataclasses
import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

_PACKAGE_DIR = Path(__file__).resolve().parent
DTYPES = ("f32", "f16", "bf16")
# Statuses that make a result a failure of the sampler (SPEC section 11); KnownFailure is kept
# apart (a failure an expectations file pins), Warning and NotSupported are not failures.
FAILING = ("Fail", "Inconclusive", "Crash", "Timeout")
# `sampcert run` exit codes after which no report was written (docs/cli.md: exit codes).
_NO_REPORT = {2: "usage error", 3: "the sampler cannot be loaded, described or created",
              4: "host error"}

# Set by _serve.py in the sampler's own process: a certify() call met while it loads the
# sampler's file (a script that calls certify at its top level) stops the load there.
_IN_SAMPLER_PROCESS = False


class _StopLoading(BaseException):
    """Raised by certify() inside the sampler's process: the file has defined the sampler."""


class CertifyError(RuntimeError):
    """The run could not produce a report: bad arguments, a sampler that cannot be loaded or
    described, a host error. `exit_code` is sampcert's, `output` what it printed."""

    def __init__(self, message: str, exit_code: Optional[int] = None, output: str = ""):
        super().__init__(message)
        self.exit_code = exit_code
        self.output = output


def executable() -> str:
    """The sampcert executable: $SAMPCERT_EXECUTABLE, else the one this package installs."""
    env = os.environ.get("SAMPCERT_EXECUTABLE")
    if env:
        if not os.access(env, os.X_OK):
            raise CertifyError(f"SAMPCERT_EXECUTABLE={env} is not an executable file")
        return env
    bundled = _PACKAGE_DIR / "bin" / "sampcert"
    if os.access(bundled, os.X_OK):
        return str(bundled)
    raise CertifyError(
        f"no sampcert executable: {bundled} is missing (this is a source tree, not an installed "
        "package). Install the package (pip install .) or set SAMPCERT_EXECUTABLE to a built "
        "one (build/dev/cli/sampcert)")


# ---- The sampler argument ----------------------------------------------------------------

def _capability_names(capabilities) -> List[str]:
    from . import protocol
    if isinstance(capabilities, int):
        return [n for n, bit in protocol.CAPABILITIES.items() if capabilities & bit]
    return list(capabilities)


def _python_info(sampler, info, dtypes) -> Dict[str, Any]:
    from . import protocol
    if info is None:
        info = getattr(sampler, "info", None)
    if info is None:
        info = protocol.Info(name=getattr(sampler, "__qualname__", "python_sampler"))
    if not _is_info(info):
        raise TypeError(f"info must be a sampcert.protocol.Info, not {type(info).__name__}")
    fields = dataclasses.asdict(info)
    if dtypes is not None:
        kept = [c for c in _capability_names(info.capabilities) if c not in DTYPES]
        fields["capabilities"] = kept + list(dtypes)
    else:
        fields["capabilities"] = _capability_names(info.capabilities)
    # Only what differs from Info's defaults (the name always), so the reproduction lines that
    # carry this declaration stay short.
    defaults = dataclasses.asdict(protocol.Info(name=info.name))
    defaults["capabilities"] = _capability_names(defaults["capabilities"])
    out = {}
    for key, value in fields.items():
        if isinstance(value, tuple):
            value = list(value)
        default = defaults[key]
        if key == "name" or value != (list(default) if isinstance(default, tuple) else default):
            out[key] = value
    return out


def _is_info(value) -> bool:
    from . import protocol
    return isinstance(value, protocol.Info)


def _own_paths() -> List[str]:
    """This process's sys.path entries that the sampler's process (this interpreter, this
    environment) would not have by itself: the script's folder, pytest's rootdir and
    `pythonpath` entries, conftest additions. Asked of the interpreter itself, in order."""
    probe = subprocess.run([sys.executable, "-c", "import json, sys; print(json.dumps(sys.path))"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    default = set()
    if probe.returncode == 0:
        default = {os.path.realpath(p) for p in json.loads(probe.stdout) if p}
    out: List[str] = []
    for entry in sys.path:
        real = os.path.realpath(entry or os.getcwd())
        if real not in default and real not in out and os.path.isdir(real):
            out.append(real)
    return out


def _module_name(module) -> Optional[str]:
    """The name under which the sampler's process can import `module` itself (with this
    process's sys.path): its __name__, or for `python -m pkg.mod` its spec's name; None when
    that name finds another file or nothing (then the file is run by its path)."""
    name = getattr(module, "__name__", None)
    if name == "__main__":
        spec = getattr(module, "__spec__", None)
        name = getattr(spec, "name", None)
    file = getattr(module, "__file__", None)
    # __sampcert_main__: a file the sampler's process (or load_sampler) ran by its path.
    if not name or not file or name in ("__main__", "__sampcert_main__"):
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None)
    if not origin or os.path.realpath(origin) != os.path.realpath(file):
        return None
    return name


def _python_target(sampler) -> Tuple[str, List[str]]:
    """TARGET for _serve.py ('module:qualname' or '/abs/file.py:qualname') and its --path's."""
    qualname = getattr(sampler, "__qualname__", None)
    module_name = getattr(sampler, "__module__", None)
    if qualname is None or module_name is None:
        raise TypeError(
            "sampcert.certify serves a Python sampler in a child process, which finds it by "
            f"name: pass a module-level function or class, not a {type(sampler).__name__} "
            "instance")
    if "<locals>" in qualname or "<lambda>" in qualname:
        raise TypeError(
            f"sampcert.certify: {qualname} is not reachable by name from its module (a local "
            "function or a lambda); the sampler's process imports it, so define it at the top "
            "level of its file")
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if module is None or not file:
        raise TypeError(
            f"sampcert.certify: {qualname} is defined in {module_name}, which has no file (an "
            "interactive session, python -c or runpy); the sampler's process imports it, so "
            "define it in a file")
    paths = _own_paths()
    name = _module_name(module)
    if name is not None:
        return f"{name}:{qualname}", paths
    path = os.path.realpath(file)
    folder = os.path.dirname(path)
    return f"{path}:{qualname}", [folder] + [p for p in paths if p != folder]


def sampler_command(sampler, info=None, dtypes: Optional[Sequence[str]] = None,
                    arrays: str = "numpy") -> str:
    """The --sampler argument for `sampler`: a built-in name or plug-in path as given, an exec:
    command as given, and for a Python function or class the exec: command that serves it with
    this interpreter."""
    return _sampler_argv(sampler, info, dtypes, arrays)[0]


def _sampler_argv(sampler, info=None, dtypes: Optional[Sequence[str]] = None,
                  arrays: str = "numpy") -> Tuple[str, Optional[Dict[str, Any]]]:
    """(the --sampler argument, and for a Python sampler what replay() needs to load it: its
    target, paths, declaration and arrays)."""
    if isinstance(sampler, os.PathLike):
        sampler = os.fspath(sampler)
    if isinstance(sampler, str):
        if info is not None or arrays != "numpy":
            raise TypeError("info= and arrays= are for a Python sampler; a plug-in, built-in "
                            "or exec: sampler declares itself")
        if sampler.startswith("exec:") or ("/" not in sampler and not sampler.endswith(".so")):
            return sampler, None
        return str(Path(sampler).resolve()), None
    if not callable(sampler):
        raise TypeError(f"sampcert.certify: a sampler is a built-in name, a plug-in path, an "
                        f"exec: command, or a Python function or class; not "
                        f"{type(sampler).__name__}")
    own = getattr(sampler, "info", None)
    if own is not None and not _is_info(own):
        raise TypeError(f"{getattr(sampler, '__qualname__', sampler)}.info must be a "
                        f"sampcert.protocol.Info, not {type(own).__name__}")
    target, paths = _python_target(sampler)
    argv = [sys.executable, str(_PACKAGE_DIR / "_serve.py")]
    for p in paths:
        argv += ["--path", p]
    info_json = None
    if info is not None or dtypes is not None:
        # Otherwise the sampler's process declares it: its `info` (the function's or class's
        # attribute, or one its instance sets), else f32 only under its name.
        info_json = json.dumps(_python_info(sampler, info, dtypes), sort_keys=True,
                               separators=(",", ":"))
        argv += ["--info", info_json]
    if arrays != "numpy":
        argv += ["--arrays", arrays]
    argv.append(target)
    python = {"target": target, "paths": paths, "info": info_json, "arrays": arrays,
              "argv": argv}
    return "exec:" + " ".join(shlex.quote(a) for a in argv), python


# ---- The report --------------------------------------------------------------------------

@dataclasses.dataclass
class Failure:
    """One failing result of report.json: a property x dtype x input family."""
    property: str
    dtype: str
    family: str
    status: str
    message: str
    input: str
    minimal_input: str
    reproduction: str
    row_file: Optional[Path]
    note: str

    def __str__(self) -> str:
        return f"{self.property}/{self.dtype} on {self.family}: {self.status}: {self.message}"


@dataclasses.dataclass
class RootCause:
    """One root cause as report.json's verdict.root_causes gives it (the tool groups the
    failures no expectation pins by property, status and message class: the message's first
    clause with numbers written #), with its lead failure's message, input and reproduction."""
    property: str
    status: str
    message_class: str
    count: int
    dtypes: List[str]
    families: List[str]
    message: str
    minimal_input: str
    reproduction: str
    row_file: Optional[Path]

    def summary(self) -> str:
        families = ", ".join(self.families[:4]) + (
            f" and {len(self.families) - 4} more" if len(self.families) > 4 else "")
        lines = [f"{self.property} {self.status} x{self.count} ({'/'.join(self.dtypes)}; "
                 f"{families}): {self.message_class}",
                 f"    {_clip(self.message, 300)}"]
        if self.minimal_input:
            lines.append(f"    input: {_clip(self.minimal_input, 300)}")
        if self.reproduction:
            lines.append(f"    reproduce: {self.reproduction}")
        if self.row_file is not None:
            lines.append(f"    row file: {self.row_file}")
        return "\n".join(lines)


@dataclasses.dataclass
class SpeedShape:
    """One timed shape of report.json's speed: `rows` rows per call, `calls` timed calls, the
    median time per row."""
    rows: int
    calls: int
    ns_per_row: float
    rows_per_s: float


@dataclasses.dataclass
class Speed:
    """report.json's speed (SPEC REPORT-3): the sampler's speed, measured by sampcert after the
    plan on the machine named. Informational: never part of the verdict. `status` is "measured",
    or "crash", "timeout" or "error" (then `message` says what happened and `shapes` is empty).
    `line` is the line the terminal and the HTML show."""
    status: str
    cpu: str
    cores: int
    dtype: str
    vocab: int
    shapes: List[SpeedShape]
    seconds: float
    message: str
    line: str


def _number(x: Any) -> float:
    # report.json writes a non-finite number as a string ("inf", "nan").
    return float(x)


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 3] + "..."


class Report:
    """A certification's report set (report.json, .html, .junit.xml, .manifest.json) as read back
    from its folder. `verdict` is report.json's verdict.outcome: Conformant, NotConformant,
    MatchesExpectations (NOT CONFORMANT, with exactly its known failures), Partial or
    Incomplete."""

    def __init__(self, directory: Union[str, Path], output: str = ""):
        self.directory = Path(directory).resolve()
        path = self.directory / "report.json"
        try:
            with open(path, encoding="utf-8") as f:
                self.data: Dict[str, Any] = json.load(f)
        except (OSError, ValueError) as e:
            raise CertifyError(f"cannot read {path}: {e}", output=output) from None
        self.output = output
        verdict = self.data["verdict"]
        self.verdict: str = verdict["outcome"]
        self.text: str = verdict["text"]
        self.conformant: bool = bool(verdict["conformant"])
        self.exit_code: int = int(verdict["exit_code"])
        self.sampler: Dict[str, Any] = self.data.get("sampler", {})
        self.files: Dict[str, Path] = {
            kind: self.directory / name
            for kind, name in (("json", "report.json"), ("html", "report.html"),
                               ("junit", "report.junit.xml"), ("manifest", "report.manifest.json"))
            if (self.directory / name).exists()}
        results = self.data.get("results", [])
        self.failures: List[Failure] = [self._failure(r) for r in results
                                        if r["status"] in FAILING]
        self.known_failures: List[Failure] = [self._failure(r) for r in results
                                              if r["status"] == "KnownFailure"]
        self.expectation_differences: List[Any] = list(verdict.get("expectation_differences", []))
        self.speed: Optional[Speed] = self._speed(self.data.get("speed"))
        # For a Python sampler certify() served: its target, paths, declaration, arrays, seed
        # (what the debugging snippet of describe() needs).
        self.python: Optional[Dict[str, Any]] = None

    @staticmethod
    def _speed(sp: Optional[Dict[str, Any]]) -> Optional[Speed]:
        """report.json's speed section, or None where none was measured (a shard, a filtered
        or incomplete run, speed=False / --no-speed, a merged report)."""
        if not sp:
            return None
        shapes = [SpeedShape(rows=int(x["rows"]), calls=int(x["calls"]),
                             ns_per_row=_number(x["ns_per_row"]),
                             rows_per_s=_number(x["rows_per_s"])) for x in sp["shapes"]]
        machine = sp["machine"]
        return Speed(status=sp["status"], cpu=machine["cpu"], cores=int(machine["cores"]),
                     dtype=sp["dtype"], vocab=int(sp["vocab"]), shapes=shapes,
                     seconds=_number(sp["seconds"]), message=sp.get("message", ""),
                     line=sp.get("line", ""))

    def _failure(self, r: Dict[str, Any]) -> Failure:
        f = r.get("failure", {})
        row = f.get("row_file")
        return Failure(property=r["property"], dtype=r["dtype"], family=r["family"],
                       status=r["status"], message=f.get("message", r.get("note", "")),
                       input=f.get("input", ""), minimal_input=f.get("minimal_input", ""),
                       reproduction=f.get("reproduction", ""),
                       row_file=(self.directory / row) if row else None,
                       note=r.get("note", ""))

    @property
    def root_causes(self) -> List[RootCause]:
        """report.json's verdict.root_causes, in its order (most severe status first, then the
        largest group)."""
        out = []
        for c in self.data["verdict"].get("root_causes", []):
            lead = c["lead"]
            out.append(RootCause(
                property=c["property"], status=c["status"], message_class=c["message_class"],
                count=int(c["count"]), dtypes=list(c["dtypes"]), families=list(c["families"]),
                message=lead["message"], minimal_input=lead["minimal_input"],
                reproduction=lead["reproduction"],
                row_file=(self.directory / lead["row_file"]) if lead["row_file"] else None))
        return out

    @property
    def not_reached(self) -> int:
        """Failing results not reached because an earlier check of their case failed."""
        return int(self.data["verdict"].get("not_reached", 0))

    def describe(self, limit: int = 20) -> str:
        """The verdict, each root cause with its input and reproduction, and the report files."""
        name = self.sampler.get("name", "sampler")
        lines = [f"{name}: {self.text}"]
        causes = self.root_causes
        if causes:
            reached = (f"; {self.not_reached} of them not reached because an earlier check "
                       "failed" if self.not_reached else "")
            lines.append(f"{len(causes)} root cause{'s' if len(causes) != 1 else ''} "
                         f"({len(self.failures)} failing results{reached}):")
            for i, c in enumerate(causes[:limit]):
                lines.append("  " + c.summary())
                if i < 3 and c.row_file is not None and self.python is not None:
                    lines.append("    debug it here (paste into Python; a breakpoint in the "
                                 "sampler stops):")
                    lines += ["      " + x for x in self.debug_snippet(c).splitlines()]
            if len(causes) > limit:
                lines.append(f"  ... and {len(causes) - limit} more (see the report)")
        if self.known_failures:
            lines.append(f"{len(self.known_failures)} known failures (pinned by expectations)")
        for d in self.expectation_differences[:limit]:
            lines.append(f"  expectation difference: {_clip(json.dumps(d), 300)}")
        if self.speed is not None:
            lines.append(self.speed.line)
        report = self.files.get("html", self.files.get("json"))
        if report is not None:
            lines.append(f"report: {report}")
        return "\n".join(lines)

    def debug_snippet(self, cause: Union["RootCause", Failure]) -> str:
        """Python that loads `cause`'s row and replays this report's Python sampler on it in
        the calling process (sampcert.load_row, load_sampler, replay)."""
        if self.python is None or cause.row_file is None:
            return ""
        p = self.python
        lines = ["import sampcert"]
        paths = f", path={p['paths']!r}" if p["paths"] else ""
        lines.append(f"fn = sampcert.load_sampler({p['target']!r}{paths})")
        lines.append(f"row = sampcert.load_row({str(cause.row_file)!r})")
        extra = ""
        if p["info"]:
            lines.append(f"info = sampcert.protocol.Info(**{json.loads(p['info'])!r})")
            extra += ", info=info"
        if p["arrays"] != "numpy":
            extra += f", arrays={p['arrays']!r}"
        lines.append(f"print(sampcert.replay(fn, row, draws=1000, seed={p['seed']}{extra}))")
        return "\n".join(lines)

    def assert_conformant(self) -> "Report":
        """Raises AssertionError (with describe()) unless the verdict is Conformant."""
        __tracebackhide__ = True  # pytest shows the message, not this frame
        if self.verdict != "Conformant":
            raise AssertionError(self.describe())
        return self

    def assert_matches_expectations(self) -> "Report":
        """Raises AssertionError unless the run matched its expectations file (what `--expect`
        gates in CI: exit 0, no new failure, no known failure that now passes); a partial run
        (one dtype, shard or filter) passes when its part has no new failure (exit 0)."""
        __tracebackhide__ = True
        if (self.verdict not in ("Conformant", "MatchesExpectations", "Partial")
                or self.exit_code != 0):
            raise AssertionError(self.describe())
        return self

    def __repr__(self) -> str:
        return (f"<sampcert.Report {self.verdict}: {len(self.failures)} failing, "
                f"{len(self.known_failures)} known, {self.directory}>")


# ---- The tool's lifetime (SPEC LIFE-1) ----------------------------------------------------

_PR_SET_PDEATHSIG = 1
# After a ^C, the time the tool has to write its incomplete report before it is terminated.
_INTERRUPT_GRACE_S = 30.0


def _die_with_this_process():
    """A preexec_fn: the tool gets SIGTERM when this process dies, however it dies (a SIGTERM or
    SIGKILL runs no `finally`), and leads a process group of its own, which the exit paths below
    terminate as a whole. prctl is looked up here, before the fork: the child only calls it."""
    import ctypes
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: the exit paths below still end the group
        prctl = None
    parent = os.getpid()

    def setup():
        os.setpgid(0, 0)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
            if os.getppid() != parent:  # the parent died before prctl: no signal will come
                os._exit(128 + int(signal.SIGTERM))
    return setup


def _end_group(proc: subprocess.Popen, first: int, grace_s: float) -> None:
    """Sends `first` to the tool's process group, waits up to grace_s for the tool, then kills
    whatever of the group is left."""
    try:
        os.killpg(proc.pid, first)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _run_tool(argv: List[str], echo: bool, env: Dict[str, str]) -> Tuple[str, int]:
    """Runs the tool and returns its output (stdout and stderr) and exit code. The tool never
    outlives this call: it dies with this process (a parent-death signal) and, on every way out
    of here (an exception, a ^C), its process group is terminated."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", env=env, preexec_fn=_die_with_this_process())
    lines: List[str] = []
    try:
        if echo:
            # The output goes to this process's stdout as it comes, and is kept too.
            for line in proc.stdout:
                sys.stdout.write(line)
                lines.append(line)
        else:
            lines.append(proc.stdout.read())
        proc.wait()
    except KeyboardInterrupt:
        # The tool leads its own group, so a terminal's ^C reached this process only: passed on,
        # it makes the tool write its incomplete report (exit 130), as a ^C to the tool does.
        _end_group(proc, signal.SIGINT, _INTERRUPT_GRACE_S)
        raise
    finally:
        if proc.returncode is None:
            _end_group(proc, signal.SIGTERM, 5.0)
        else:  # whatever the tool left in its group (it ends its own workers)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        proc.stdout.close()
    return "".join(lines), proc.returncode


# ---- certify -----------------------------------------------------------------------------

def certify(sampler, profile: str = "quick", dtypes: Optional[Sequence[str]] = None,
            expect: Optional[Union[str, Path]] = None, config: Optional[str] = None, *,
            info=None, seed: int = 1, out: Optional[Union[str, Path]] = None,
            jobs: Optional[int] = None,
            max_draws: Optional[int] = None, item_timeout: Optional[float] = None,
            draw_time: Optional[float] = None, expect_non_strict: bool = False, arrays: str = "numpy",
            echo: bool = False, fork_server: bool = True, speed: bool = True) -> Report:
    """Certify `sampler` with `sampcert run` and return its Report.

    sampler: a Python function `f(batch, seed, first_draw, draws_per_row) -> tokens` or a class
      whose instances have `sample` (and optionally `probabilities`, `create`, `info`), defined
      at the top level of a file; a built-in name ("stable_cpu"); a plug-in path; or an exec:
      command.
    dtypes: for a Python sampler, the dtypes it declares (default: its info's, else f32); for
      any other sampler at most one dtype, run as `--dtype` (a partial run: verdict Partial).
    expect: an expectations file (`--expect`); config: `--sampler-config`; info: a
      sampcert.protocol.Info declaring a Python sampler (default: its `info` attribute, else an
      f32-only declaration named after it).
    arrays: "torch" hands a Python sampler torch tensors (row.logits, row.native in the row's
      dtype, row.mask; no copies) instead of numpy arrays, "jax" JAX arrays (the same fields;
      bf16's native is one copy); it may return tensors or arrays either way.
    out: the report folder (default: a new temporary folder, kept). echo: pass sampcert's output
      through to this process's stdout as it runs. jobs: worker processes (default: the cores
      this process may use).
    draw_time: seconds of declared draw time per statistical test (`--draw-time`; default the
      profile's 20) for a sampler that declares a draw cost: more lets its big-row tests reach
      their power instead of ending Inconclusive (SPEC STAT-4b).
    speed: time the sampler after the verdict is decided (Report.speed; SPEC REPORT-3,
      informational, never part of the verdict); False passes --no-speed.
    fork_server: for a Python sampler, import it once in a server process and fork each
      sampler process from it (a torch sampler then costs its import once, not once per worker
      and restart); such children run outside the tool's system-call filter (SPEC section 14)
      with the worker's resource limits. False starts every sampler process afresh.
    Raises CertifyError when no report could be written (exit codes 2, 3, 4).
    """
    if _IN_SAMPLER_PROCESS:
        raise _StopLoading()
    if isinstance(dtypes, str):
        dtypes = (dtypes,)
    for d in dtypes or ():
        if d not in DTYPES:
            raise ValueError(f"unknown dtype {d!r}: one of {', '.join(DTYPES)}")
    python_sampler = callable(sampler) and not isinstance(sampler, (str, os.PathLike))
    if arrays not in ("numpy", "torch", "jax"):
        raise ValueError(f"arrays must be 'numpy', 'torch' or 'jax', not {arrays!r}")
    command, python = _sampler_argv(sampler, info=info,
                                    dtypes=dtypes if python_sampler else None, arrays=arrays)
    if jobs is None:
        jobs = default_jobs()
    argv = [executable(), "run", "--sampler", command, "--profile", profile, "--seed", str(seed),
            "--jobs", str(jobs)]
    if not python_sampler and dtypes:
        if len(dtypes) != 1:
            raise ValueError("a plug-in, built-in or exec: sampler certifies every dtype it "
                             "declares, or one (dtypes=('f16',)); sampcert merges no reports "
                             "filtered by dtype")
        argv += ["--dtype", dtypes[0]]
    if out is None:
        out = tempfile.mkdtemp(prefix="sampcert-report-")
    argv += ["--out", str(out)]
    if config is not None:
        argv += ["--sampler-config", config]
    if expect is not None:
        argv += ["--expect", str(Path(expect).resolve())]
        if expect_non_strict:
            argv.append("--expect-non-strict")
    if max_draws is not None:
        argv += ["--max-draws", str(max_draws)]
    if item_timeout is not None:
        argv += ["--item-timeout", str(item_timeout)]
    if draw_time is not None:
        argv += ["--draw-time", repr(float(draw_time))]
    if not speed:
        argv.append("--no-speed")
    # A report left in `out` by an earlier run must never answer for this one.
    Path(out, "report.json").unlink(missing_ok=True)
    with _ForkServer(python["argv"] if python and fork_server else None) as env:
        env = dict(env if env is not None else os.environ)
        tool = _tool_command()
        if tool is not None:
            env["SAMPCERT_TOOL_COMMAND"] = tool
        output, code = _run_tool(argv, echo, env)
    if code in _NO_REPORT:
        raise CertifyError(f"sampcert run exited {code} ({_NO_REPORT[code]}), no report:\n"
                           f"{output[-4000:]}", code, output)
    if not Path(out, "report.json").exists():
        raise CertifyError(f"sampcert run exited {code} and wrote no report:\n{output[-4000:]}",
                           code, output)
    report = Report(out, output)
    if report.exit_code != code:
        raise CertifyError(f"sampcert run exited {code}, but its report says {report.exit_code} "
                           f"({report.text}): not this run's report\n{output[-4000:]}", code,
                           output)
    report.python = dict(python, seed=seed) if python else None
    return report


def _tool_command() -> Optional[str]:
    """How the reproduction lines name the tool ($SAMPCERT_TOOL_COMMAND): `sampcert` where that
    name on PATH is this environment's console script, else this interpreter's `-m sampcert`;
    None (the tool names its own path) for $SAMPCERT_EXECUTABLE."""
    if os.environ.get("SAMPCERT_EXECUTABLE"):
        return None
    found = shutil.which("sampcert")
    mine = Path(sys.executable).parent / "sampcert"
    if found and os.path.realpath(found) == os.path.realpath(mine):
        return "sampcert"
    return f"{shlex.quote(sys.executable)} -m sampcert"


def default_jobs() -> int:
    """The cores this process may use (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class _ForkServer:
    """certify()'s fork server (_fork_server.py) for the sampler command `argv` (None: none):
    started and ready (the sampler imported) on entry, the environment for `sampcert run` as
    the value, stopped with its children on exit. A server that fails to start is no error:
    every sampler process then loads the sampler itself, and reports what fails.

    script=True: `argv` is a protocol script's command (`python server.py ARG...`, a script
    that calls protocol.delegate_to_fork_server() before its heavy imports and then
    protocol.serve()); it becomes the server through SAMPCERT_FORK_SERVER_LISTEN, its command
    unchanged (the tests of adapters/thirdparty/ run their servers so)."""

    def __init__(self, argv: Optional[List[str]], script: bool = False):
        self.argv = argv
        self.script = script
        self.proc = None
        self.folder = None

    def __enter__(self) -> Optional[Dict[str, str]]:
        if self.argv is None:
            return None
        self.folder = tempfile.mkdtemp(prefix="sampcert-fork-")
        path = os.path.join(self.folder, "socket")
        if self.script:
            argv, env = self.argv, dict(os.environ, SAMPCERT_FORK_SERVER_LISTEN=path)
        else:
            argv, env = self.argv[:2] + ["--fork-server", path] + self.argv[2:], None
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=env,
                                     preexec_fn=_die_with_this_process())
        while True:  # what the sampler's module prints while it loads comes first
            line = self.proc.stdout.readline()
            if not line:  # it could not load: every sampler process loads it and says why
                self.proc.wait()
                return None
            if line == "ready\n":
                break
        return dict(os.environ, SAMPCERT_FORK_SERVER=path)

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc.stdout.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
