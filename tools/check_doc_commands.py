#!/usr/bin/env python3
"""Every command of README.md and docs/*.md is tested, and docs/commands.json says how.

A command is a line of a ```sh, ```bash or ```shell block (a trailing `\\` joins the next line,
a `#` outside quotes starts a comment), or a `$ ` line of a ```console block, whose following
lines are its expected output. Each command, as that text, has one entry in docs/commands.json:

  run         this tool runs it with bash in a scratch folder of its page (one per page, the
              page's commands in order), checking its exit code ("exit", default 0) and, for a
              console block, its output exactly, else the regular expression "output" if given.
              The folder holds a symlink to each top-level entry of the source tree and
              libmy_sampler.so (a copy of the minimal plug-in, --plugin); `sampcert` on PATH is
              the built tool (--sampcert). "before" is shell run first there (a file the text
              assumes the reader has, e.g. an older expectations file).
  covered_by  the ctest that runs it: the test must exist (ctest --show-only in --build) and
              the command's text must appear in the test's definition or in a file it names.
  not_run     a reason (root, network, a GPU, hours of CPU).

A command without an entry, an entry whose command is in no page, a run command that fails, or
a covered_by claim that does not hold fails the check.

    check_doc_commands.py ROOT --build DIR --ctest CTEST --sampcert EXE --plugin SO [--list]
                                (ctest docs.commands)
    check_doc_commands.py --self-test   (ctest docs.commands_self_test)
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SHELL_FENCES = ("sh", "bash", "shell")
WRITTEN = ("build", "sampcert-report", "sampcert-reports", "dist", "wheelhouse", "results",
           "old.json", "new.json", "new_record.json")


def strip_comment(line):
    """LINE without a `#` comment that starts outside quotes after a blank (or at the start)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def extract(path, rel):
    """[(page, line, command, expected_output or None)] of one Markdown page."""
    out, fence, pending, start = [], None, None, 0
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"\s*```(\S*)", line)
        if m:
            fence = None if fence is not None else m.group(1)
            i += 1
            continue
        if fence in SHELL_FENCES:
            text = strip_comment(line)
            if pending is not None:
                text = pending + " " + text.strip()
            else:
                start = i + 1
            if text.endswith("\\"):
                pending = text[:-1].rstrip()
            else:
                pending = None
                if text.strip():
                    out.append((rel, start, text.strip(), None))
        elif fence == "console" and line.startswith("$ "):
            command, start = line[2:].strip(), i + 1
            expected = []
            while i + 1 < len(lines) and not lines[i + 1].startswith("$ ") and \
                    not re.match(r"\s*```", lines[i + 1]):
                i += 1
                expected.append(lines[i].rstrip())
            out.append((rel, start, command, "\n".join(expected).strip("\n")))
        i += 1
    return out


def pages(root):
    return [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))


def ctest_tests(build, ctest):
    """{test name: text of its definition and of every file its command names}."""
    proc = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, capture_output=True,
                          text=True, check=True)
    tests = {}
    for t in json.loads(proc.stdout)["tests"]:
        words = t.get("command", [])
        texts = [" ".join(words)]
        for w in words:
            if w.endswith((".py", ".sh", ".cmake")) and os.path.isfile(w):
                with open(w, encoding="utf-8", errors="replace") as f:
                    texts.append(f.read())
        tests[t["name"]] = "\n".join(texts)
    return tests


def scratch(root, base, page, sampcert, plugin):
    folder = os.path.join(base, re.sub(r"[^\w.]", "_", page))
    os.makedirs(folder)
    for entry in os.listdir(root):
        # Not the entries a page's commands write (a venv, report sets, wheels): a link would
        # let the command write into the source tree.
        if entry == ".ci" or not entry.startswith(".") and entry not in WRITTEN:
            os.symlink(os.path.join(root, entry), os.path.join(folder, entry))
    if plugin:
        shutil.copyfile(plugin, os.path.join(folder, "libmy_sampler.so"))
    bindir = os.path.join(base, "bin")
    os.makedirs(bindir, exist_ok=True)
    if sampcert and not os.path.exists(os.path.join(bindir, "sampcert")):
        os.symlink(os.path.abspath(sampcert), os.path.join(bindir, "sampcert"))
    return folder, bindir


def run_one(command, spec, expected, folder, bindir):
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("SAMPCERT_EXECUTABLE", None)
    if spec.get("before"):
        subprocess.run(["bash", "-c", spec["before"]], cwd=folder, env=env, check=True)
    try:
        p = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True,
                           text=True, timeout=spec.get("timeout", 60))
    except subprocess.TimeoutExpired:
        return f"ran past {spec.get('timeout', 60)} s"
    output = (p.stdout + p.stderr).rstrip()
    if p.returncode != spec.get("exit", 0):
        return f"exited {p.returncode}, want {spec.get('exit', 0)}:\n{output[-2000:]}"
    if expected is not None and "\n".join(l.rstrip() for l in p.stdout.rstrip().split("\n")) \
            != expected:
        return f"printed\n{p.stdout.rstrip()}\nthe page shows\n{expected}"
    if spec.get("output") and not re.search(spec["output"], output, re.M):
        return f"output lacks /{spec['output']}/:\n{output[-2000:]}"
    return None


def check(root, manifest, tests, sampcert, plugin, base, log=print):
    """The list of problems (empty: every command is tested as its entry says)."""
    entries = {e["command"]: e for e in manifest["commands"]}
    listed = [e["command"] for e in manifest["commands"]]
    if len(entries) != len(listed):
        return [f"docs/commands.json: `{c}` has more than one entry" for c in entries
                if listed.count(c) > 1]
    problems, found, counts = [], [], {"run": 0, "covered_by": 0, "not_run": 0}
    for path in pages(root):
        found += extract(path, os.path.relpath(path, root))
    texts = {c for _, _, c, _ in found}
    for command in entries:
        if command not in texts:
            problems.append(f"docs/commands.json: `{command}` is in no page: remove its entry")
    for e in entries.values():
        kinds = [k for k in counts if k in e]
        if len(kinds) != 1:
            problems.append(f"docs/commands.json: `{e['command']}` needs one of {list(counts)}")
        elif kinds == ["not_run"] and len(e["not_run"].strip()) < 10:
            problems.append(f"docs/commands.json: `{e['command']}`: not_run needs a reason")
    folders, done = {}, set()
    for page, line, command, expected in found:
        where = f"{page}:{line}: `{command}`"
        e = entries.get(command)
        if e is None:
            problems.append(f"{where}: no entry in docs/commands.json (run, covered_by or "
                            "not_run)")
            continue
        if "covered_by" in e and command not in done:
            name = e["covered_by"]
            if name not in tests:
                problems.append(f"{where}: covered_by {name}: no such ctest")
            elif command not in tests[name]:
                problems.append(f"{where}: covered_by {name}: the test's definition and scripts "
                                "do not contain this text")
            else:
                log(f"ok   {where}: covered by {name}")
        elif "run" in e:
            if page not in folders:
                folders[page] = scratch(root, base, page, sampcert, plugin)
            problem = run_one(command, e["run"], expected, *folders[page])
            if problem:
                problems.append(f"{where}: {problem}")
            else:
                log(f"ok   {where}: ran")
        elif "not_run" in e and command not in done:
            log(f"skip {where}: {e['not_run']}")
        done.add(command)
    for e in entries.values():
        for k in counts:
            counts[k] += k in e
    log(f"doc commands: {len(texts)} distinct in {len(found)} lines; manifest "
        + ", ".join(f"{n} {k}" for k, n in counts.items()))
    return problems


def self_test():
    ok = True
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        readme = ("# T\n\n```sh\ntrue   # a comment\necho 'a # b' \\\n    two\nmake-coffee\n```\n\n"
                  "```console\n$ echo hi\nhi\n```\n")
        open(os.path.join(root, "README.md"), "w").write(readme)
        open(os.path.join(root, "docs", "a.md"), "w").write("```sh\nfalse\n```\n")
        open(os.path.join(root, "test.sh"), "w").write("echo 'a # b' two\n")
        good = {"commands": [
            {"command": "true", "run": {}},
            {"command": "echo 'a # b' two", "covered_by": "t.echo"},
            {"command": "make-coffee", "not_run": "needs a coffee machine"},
            {"command": "echo hi", "run": {}},
            {"command": "false", "run": {"exit": 1}}]}
        tests = {"t.echo": f"bash {root}/test.sh\necho 'a # b' two\n", "t.other": "x"}

        def problems(manifest, tests=tests):
            with tempfile.TemporaryDirectory() as base:
                return check(root, manifest, tests, None, None, base, log=lambda s: None)

        def edited(command, **entry):
            m = json.loads(json.dumps(good))
            m["commands"] = [dict({"command": command}, **entry) if e["command"] == command
                             else e for e in m["commands"]]
            return m
        cases = [
            ("the good manifest passes", good, None),
            ("a command without an entry fails",
             {"commands": good["commands"][1:]}, "README.md:4: `true`: no entry"),
            ("a run command that exits nonzero fails",
             edited("false", run={}), "docs/a.md:2: `false`: exited 1, want 0"),
            ("covered_by a missing test fails",
             edited("echo 'a # b' two", covered_by="t.gone"), "covered_by t.gone: no such ctest"),
            ("covered_by a test without the text fails",
             edited("echo 'a # b' two", covered_by="t.other"), "do not contain this text"),
            ("an entry whose command left the pages fails",
             {"commands": good["commands"] + [{"command": "gone", "run": {}}]},
             "`gone` is in no page"),
            ("a console block's output must match",
             edited("echo hi", run={"before": "true"}), None),
            ("not_run needs a reason", edited("make-coffee", not_run=""), "needs a reason"),
        ]
        open(os.path.join(root, "README.md"), "w").write(readme)
        for what, manifest, want in cases:
            got = problems(manifest)
            passed = (not got) if want is None else any(want in p for p in got)
            print(f"{'ok  ' if passed else 'FAIL'} {what}: {got}")
            ok &= passed
        open(os.path.join(root, "README.md"), "w").write(readme.replace("$ echo hi\nhi",
                                                                        "$ echo hi\nho"))
        got = problems(good)
        passed = any("printed\nhi\nthe page shows\nho" in p for p in got)
        print(f"{'ok  ' if passed else 'FAIL'} console output that differs fails: {got}")
        ok &= passed
    print("self-test: " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--build", required=True)
    parser.add_argument("--ctest", default="ctest")
    parser.add_argument("--sampcert", required=True)
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--manifest", default=None)
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    with open(args.manifest or os.path.join(root, "docs", "commands.json")) as f:
        manifest = json.load(f)
    tests = ctest_tests(args.build, args.ctest)
    with tempfile.TemporaryDirectory(prefix="doc-commands-") as base:
        problems = check(root, manifest, tests, args.sampcert, args.plugin, base)
    for p in problems:
        print(f"FAIL {p}")
    print("doc commands: " + (f"{len(problems)} problem(s)" if problems else "every one tested "
                              "as docs/commands.json says"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
