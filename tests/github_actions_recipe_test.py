#!/usr/bin/env python3
"""Runs the `run:` steps of examples/ci/github-actions.yml here, as GitHub would run them.

  github_actions_recipe_test.py WORKFLOW --workspace DIR --checkout SRC [--env NAME=VALUE]...

DIR is made afresh and gets a copy of SRC, standing in for the checkout of the sampler's
repository. Each step of the one job runs in order, from DIR, with the job's env (each --env
overriding one of its names), under GitHub's `shell: bash` (bash --noprofile --norc -eo
pipefail); a failed step fails the test and, as on GitHub, only `if: always()` steps run after
it. The steps in SKIPPED are not run, each for the reason written there; every other step must
be a `run:` step. At the end the files the skipped upload and publish steps would take must be
in DIR.

The workflow is read by the small parser below (Debian's python3-yaml is not always installed),
for the subset of YAML the workflow keeps to; where PyYAML imports, the test also checks that
both read the job alike.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# name -> why the step does not run here. A name that no step has fails the test.
SKIPPED = {
    "Install git": "apt-get as root: changes the machine",
    "Check out the sampler": "GitHub: --checkout stands in for it",
    "Check out sampcert": "GitHub: the ctest's source tree stands in for it",
    "Install sampcert's build dependencies": "apt-get as root: changes the machine",
    "Build sampcert": "a whole release build: the ctest's build tree (SAMPCERT_BUILD) stands in",
    "Upload the report set": "GitHub: the files it takes are checked instead",
    "Publish the JUnit results": "GitHub: the files it takes are checked instead",
}
# The inputs of the skipped steps that must exist after the run: (step, `with:` key).
SKIPPED_INPUTS = [("Upload the report set", "path"), ("Publish the JUnit results", "report_paths")]


class YamlError(Exception):
    pass


class SubsetYaml:
    """Block mappings and sequences, plain / 'single' / "double" scalars and `|` / `|-` blocks.

    Every scalar is a string (an empty value is ""); anything else (flow collections, anchors,
    tags, folded blocks, several documents) is an error, never a guess.
    """

    def __init__(self, text):
        self.lines = text.split("\n")

    def parse(self):
        i = self._significant(0)
        if i == len(self.lines):
            raise YamlError("empty document")
        value, i = self._block(i, self._indent(i))
        i = self._significant(i)
        if i != len(self.lines):
            raise YamlError(f"line {i + 1}: unexpected indentation")
        return value

    @staticmethod
    def _is_blank(line):
        stripped = line.strip()
        return not stripped or stripped.startswith("#")

    def _significant(self, i):
        while i < len(self.lines) and self._is_blank(self.lines[i]):
            i += 1
        return i

    def _indent(self, i):
        line = self.lines[i]
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise YamlError(f"line {i + 1}: tab in indentation")
        return len(line) - len(line.lstrip(" "))

    def _block(self, i, indent):
        text = self.lines[i].strip()
        if text == "-" or text.startswith("- "):
            return self._sequence(i, indent)
        return self._mapping(i, indent)

    def _sequence(self, i, indent):
        items = []
        while i < len(self.lines) and self._indent(i) == indent:
            text = self.lines[i].strip()
            if not (text == "-" or text.startswith("- ")):
                raise YamlError(f"line {i + 1}: a mapping key among sequence items")
            rest = text[1:].strip()
            if not rest or rest.startswith("#"):
                j = self._significant(i + 1)
                if j == len(self.lines) or self._indent(j) <= indent:
                    raise YamlError(f"line {i + 1}: empty sequence item")
                value, i = self._block(j, self._indent(j))
            elif self._key_value(rest) is not None:
                # "- key: value": a mapping whose keys sit where "key" starts.
                self.lines[i] = " " * (indent + 2) + rest
                value, i = self._mapping(i, indent + 2)
            else:
                value, i = self._scalar(rest, i), i + 1
            items.append(value)
            i = self._significant(i)
        if i < len(self.lines) and self._indent(i) > indent:
            raise YamlError(f"line {i + 1}: unexpected indentation")
        return items, i

    @staticmethod
    def _key_value(text):
        match = re.match(r"([A-Za-z0-9_][A-Za-z0-9_.-]*):(?: +(.*))?$", text)
        return None if match is None else (match.group(1), match.group(2) or "")

    def _mapping(self, i, indent):
        mapping = {}
        while i < len(self.lines) and self._indent(i) == indent:
            text = self.lines[i].strip()
            kv = self._key_value(text)
            if kv is None:
                raise YamlError(f"line {i + 1}: not `key: value` ({text!r})")
            key, rest = kv
            if key in mapping:
                raise YamlError(f"line {i + 1}: duplicate key {key!r}")
            if rest in ("|", "|-"):
                mapping[key], i = self._literal(i, indent, keep_newline=rest == "|")
            elif not rest or rest.startswith("#"):
                j = self._significant(i + 1)
                if j < len(self.lines) and self._indent(j) > indent:
                    mapping[key], i = self._block(j, self._indent(j))
                else:
                    mapping[key], i = "", i + 1
            else:
                mapping[key], i = self._scalar(rest, i), i + 1
            i = self._significant(i)
        if i < len(self.lines) and self._indent(i) > indent:
            raise YamlError(f"line {i + 1}: unexpected indentation")
        return mapping, i

    def _literal(self, i, indent, keep_newline):
        body = []
        j = i + 1
        block_indent = None
        while j < len(self.lines):
            line = self.lines[j]
            if line.strip():
                line_indent = len(line) - len(line.lstrip(" "))
                if line_indent <= indent:
                    break
                if block_indent is None:
                    block_indent = line_indent
                elif line_indent < block_indent:
                    raise YamlError(f"line {j + 1}: less indented than its block")
                body.append(line[block_indent:])
            else:
                body.append("")
            j += 1
        while body and not body[-1]:
            body.pop()
        if not body:
            raise YamlError(f"line {i + 1}: empty block scalar")
        return "\n".join(body) + ("\n" if keep_newline else ""), j

    def _scalar(self, text, i):
        if text[0] in "\"'":
            quote = text[0]
            pattern = r'"((?:[^"\\]|\\.)*)"' if quote == '"' else r"'((?:[^']|'')*)'"
            match = re.match(pattern + r"\s*(#.*)?$", text)
            if match is None:
                raise YamlError(f"line {i + 1}: malformed quoted scalar {text!r}")
            value = match.group(1)
            if quote == "'":
                return value.replace("''", "'")
            escapes = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "/": "/"}

            def unescape(m):
                if m.group(1) not in escapes:
                    raise YamlError(f"line {i + 1}: unsupported escape \\{m.group(1)}")
                return escapes[m.group(1)]

            return re.sub(r"\\(.)", unescape, value)
        if text[0] in "[]{}&*!|>%@`" or text.startswith("- "):
            raise YamlError(f"line {i + 1}: outside the YAML subset: {text!r}")
        value = re.split(r"\s+#", text, maxsplit=1)[0].strip()
        if ": " in value:
            raise YamlError(f"line {i + 1}: ': ' in a plain scalar ({value!r}): quote it")
        return value


def as_strings(node):
    """PyYAML's reading with every scalar as the subset parser gives it."""
    if isinstance(node, dict):
        return {str(k): as_strings(v) for k, v in node.items()}
    if isinstance(node, list):
        return [as_strings(v) for v in node]
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def the_job(document):
    jobs = document.get("jobs")
    if not isinstance(jobs, dict) or len(jobs) != 1:
        raise YamlError("the workflow must have exactly one job")
    return next(iter(jobs.values()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workflow")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--checkout", required=True)
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()

    with open(args.workflow, encoding="utf-8") as f:
        text = f.read()
    job = the_job(SubsetYaml(text).parse())
    try:
        import yaml  # optional: the cross-check
    except ImportError:
        print("PyYAML not importable: the subset parser is not cross-checked")
    else:
        if as_strings(the_job(yaml.safe_load(text))) != job:
            print("FAIL: the subset parser and PyYAML read the job differently")
            return 1
        print("the subset parser reads the job as PyYAML does")

    shell = job.get("defaults", {}).get("run", {}).get("shell")
    if shell != "bash":
        print(f"FAIL: the job's defaults.run.shell is {shell!r}; this test runs bash")
        return 1
    env = dict(job.get("env", {}))
    for override in args.env:
        name, _, value = override.partition("=")
        if name not in env:
            print(f"FAIL: --env {name}: the job's env has no {name}")
            return 1
        env[name] = value
    steps = job["steps"]
    names = [step.get("name") for step in steps]
    stale = sorted(set(SKIPPED) - set(names))
    if stale:
        print(f"FAIL: SKIPPED names steps the workflow does not have: {stale}")
        return 1

    workspace = os.path.abspath(args.workspace)
    shutil.rmtree(workspace, ignore_errors=True)
    shutil.copytree(args.checkout, workspace)
    run_env = dict(os.environ, **env, GITHUB_WORKSPACE=workspace, CI="true")
    failed = []
    for step in steps:
        name = step.get("name")
        if not name:
            print(f"FAIL: a step without a name: {step}")
            return 1
        if name in SKIPPED:
            print(f"skip: {name} ({SKIPPED[name]})")
            continue
        if set(step) - {"name", "run", "if", "env", "working-directory"} or "run" not in step:
            print(f"FAIL: step {name!r} is not a plain run step: {sorted(step)}")
            return 1
        condition = step.get("if", "")
        if condition not in ("", "always()"):
            print(f"FAIL: step {name!r}: `if: {condition}` is not understood here")
            return 1
        if failed and condition != "always()":
            print(f"not run: {name} (an earlier step failed)")
            continue
        texts = [step["run"], step.get("working-directory", "")] + list(
            step.get("env", {}).values())
        if any("${{" in t for t in texts):
            print(f"FAIL: step {name!r} uses a ${{{{ }}}} expression, which only GitHub evaluates")
            return 1
        cwd = os.path.join(workspace, step.get("working-directory", ""))
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as script:
            script.write(step["run"])
        print(f"run: {name}\n{step['run']}", end="" if step["run"].endswith("\n") else "\n",
              flush=True)
        start = time.monotonic()
        rc = subprocess.call(["bash", "--noprofile", "--norc", "-eo", "pipefail", script.name],
                             cwd=cwd, env=dict(run_env, **step.get("env", {})))
        os.unlink(script.name)
        print(f"step {name!r}: exit status {rc} in {time.monotonic() - start:.1f} s", flush=True)
        if rc != 0:
            print(f"FAIL: step {name!r} failed with exit status {rc}")
            failed.append(name)
    if failed:
        return 1

    # The report set the upload takes and the JUnit file the publisher reads.
    for name, key in SKIPPED_INPUTS:
        step = steps[names.index(name)]
        path = re.sub(r"\$\{\{ *env\.([A-Za-z_][A-Za-z0-9_]*) *\}\}",
                      lambda m: env[m.group(1)], step["with"][key])
        if not os.path.exists(os.path.join(workspace, path)):
            print(f"FAIL: {path}, the {key} of {name!r}, is not in the workspace")
            return 1
        print(f"{name!r} would take {path}")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
