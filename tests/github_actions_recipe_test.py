#!/usr/bin/env python3
"""Runs the `run:` steps of examples/ci/github-actions.yml here, as GitHub would run them.

  github_actions_recipe_test.py WORKFLOW --workspace DIR --checkout SRC [--env NAME=VALUE]...
                                [--var NAME=VALUE]...

DIR is made afresh and gets a copy of SRC, standing in for the checkout of the sampler's
repository. The jobs run in order, each after the jobs it `needs` (one that needs a failed job
runs only with `if: always()`), a job with a matrix once per value of its one key, all in DIR:
that one workspace stands in for the checkouts and for the artifacts that carry the shards'
reports to the merge job. Each step runs from DIR with its job's env, where ${{ vars.NAME }} is
the --var given (an unset variable is empty, as on GitHub) and ${{ matrix.KEY }} the run's
value, each --env overriding a name, under GitHub's `shell: bash` (bash --noprofile --norc -eo
pipefail); a failed step fails the test and, as on GitHub, only `if: always()` steps run after
it; a cache is never hit here. The steps in SKIPPED are not run, each for the reason written
there; every other step must be a `run:` step. At the end the files the skipped upload and
publish steps would take must be in DIR.

The workflow is read by the small parser below (Debian's python3-yaml is not always installed),
for the subset of YAML the workflow keeps to; where PyYAML imports, the test also checks that
both read the jobs alike.
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
    "Install the runtime libraries": "apt-get as root: changes the machine",
    "Check out the sampler": "GitHub: --checkout stands in for it",
    "Check out sampcert": "GitHub: the ctest's source tree stands in for it",
    "Install sampcert's build dependencies": "apt-get as root: changes the machine",
    "Restore sampcert from the cache": "GitHub's cache: a miss is what runs here",
    "Build sampcert": "a whole release build: the ctest's build tree (SAMPCERT_BUILD) stands in",
    "Upload the shard's report set": "GitHub: the shards share this one workspace instead",
    "Download the shards' report sets": "GitHub: the shards share this one workspace instead",
    "Upload the report set": "GitHub: the files it takes are checked instead",
    "Publish the JUnit results": "GitHub: the files it takes are checked instead",
}
# The inputs of the skipped steps that must exist after the run: (step, `with:` key).
SKIPPED_INPUTS = [("Upload the report set", "path"), ("Publish the JUnit results", "report_paths")]
# The `if:` conditions understood here: always(), and a cache miss (nothing is cached here).
CONDITIONS = ("", "always()", "steps.sampcert-cache.outputs.cache-hit != 'true'")


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


def the_jobs(document):
    jobs = document.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        raise YamlError("the workflow has no jobs")
    return jobs


EXPRESSION = re.compile(r"\$\{\{ *([a-z]+)\.([A-Za-z_][A-Za-z0-9_-]*) *\}\}")


def evaluate(value, variables, matrix):
    """A job env value with GitHub's ${{ vars.NAME }} (an unset variable is "") and
    ${{ matrix.KEY }} evaluated; any other expression is an error."""
    def one(m):
        kind, name = m.group(1), m.group(2)
        if kind == "vars":
            return variables.get(name, "")
        if kind == "matrix" and name in matrix:
            return matrix[name]
        raise YamlError(f"{m.group(0)} is not evaluated here")
    return EXPRESSION.sub(one, value)


def expand(name, job):
    """The job's runs: one per value of its matrix's one key, else one."""
    matrix = job.get("strategy", {}).get("matrix")
    if not matrix:
        return [(name, {})]
    if len(matrix) != 1 or not isinstance(next(iter(matrix.values())), list):
        raise YamlError(f"job {name}: a matrix of one key and a list is understood here")
    key, values = next(iter(matrix.items()))
    return [(f"{name} ({key} {v})", {key: v}) for v in values]


def run_job(title, job, env, workspace):
    """Runs the job's steps; returns the names of the steps that failed (None: a setup error)."""
    shell = job.get("defaults", {}).get("run", {}).get("shell")
    if shell != "bash":
        print(f"FAIL: {title}: defaults.run.shell is {shell!r}; this test runs bash")
        return None
    run_env = dict(os.environ, **env, GITHUB_WORKSPACE=workspace, CI="true")
    failed = []
    for step in job["steps"]:
        name = step.get("name")
        if not name:
            print(f"FAIL: a step without a name: {step}")
            return None
        if name in SKIPPED:
            print(f"skip: {name} ({SKIPPED[name]})")
            continue
        if set(step) - {"name", "run", "if", "env", "working-directory", "id"} or "run" not in step:
            print(f"FAIL: step {name!r} is not a plain run step: {sorted(step)}")
            return None
        condition = step.get("if", "")
        if condition not in CONDITIONS:
            print(f"FAIL: step {name!r}: `if: {condition}` is not understood here")
            return None
        if failed and condition != "always()":
            print(f"not run: {name} (an earlier step failed)")
            continue
        texts = [step["run"], step.get("working-directory", "")] + list(
            step.get("env", {}).values())
        if any("${{" in t for t in texts):
            print(f"FAIL: step {name!r} uses a ${{{{ }}}} expression, which only GitHub evaluates")
            return None
        cwd = os.path.join(workspace, step.get("working-directory", ""))
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as script:
            script.write(step["run"])
        print(f"run: {title}: {name}\n{step['run']}",
              end="" if step["run"].endswith("\n") else "\n", flush=True)
        start = time.monotonic()
        rc = subprocess.call(["bash", "--noprofile", "--norc", "-eo", "pipefail", script.name],
                             cwd=cwd, env=dict(run_env, **step.get("env", {})))
        os.unlink(script.name)
        print(f"step {name!r}: exit status {rc} in {time.monotonic() - start:.1f} s", flush=True)
        if rc != 0:
            print(f"FAIL: step {name!r} failed with exit status {rc}")
            failed.append(name)
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workflow")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--checkout", required=True)
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                        help="a repository variable (vars.NAME); an unset one is empty")
    args = parser.parse_args()

    with open(args.workflow, encoding="utf-8") as f:
        text = f.read()
    jobs = the_jobs(SubsetYaml(text).parse())
    try:
        import yaml  # optional: the cross-check
    except ImportError:
        print("PyYAML not importable: the subset parser is not cross-checked")
    else:
        if as_strings(the_jobs(yaml.safe_load(text))) != jobs:
            print("FAIL: the subset parser and PyYAML read the jobs differently")
            return 1
        print("the subset parser reads the jobs as PyYAML does")

    variables = dict(v.partition("=")[::2] for v in args.var)
    overrides = dict(o.partition("=")[::2] for o in args.env)
    unknown = set(overrides) - {k for job in jobs.values() for k in job.get("env", {})}
    if unknown:
        print(f"FAIL: --env {sorted(unknown)}: no job's env has it")
        return 1
    names = [step.get("name") for job in jobs.values() for step in job["steps"]]
    stale = sorted(set(SKIPPED) - set(names))
    if stale:
        print(f"FAIL: SKIPPED names steps the workflow does not have: {stale}")
        return 1

    workspace = os.path.abspath(args.workspace)
    shutil.rmtree(workspace, ignore_errors=True)
    shutil.copytree(args.checkout, workspace)
    # The jobs in order, each after the ones it needs; one workspace stands in for the
    # checkouts and the artifacts that carry files between jobs.
    done, any_failed, last_env = set(), False, {}
    for job_name, job in jobs.items():
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        if set(needs) - done:
            print(f"FAIL: job {job_name} needs {needs}, not all of them before it")
            return 1
        if any_failed and job.get("if", "") != "always()":
            print(f"not run: job {job_name} (a job it needs failed)")
            continue
        for title, matrix in expand(job_name, job):
            env = {k: evaluate(v, variables, matrix) for k, v in job.get("env", {}).items()}
            env.update({k: v for k, v in overrides.items() if k in env})
            failed = run_job(title, job, env, workspace)
            if failed is None:
                return 1
            any_failed = any_failed or bool(failed)
            last_env = env
        done.add(job_name)
    if any_failed:
        return 1

    # The report set the upload takes and the JUnit file the publisher reads.
    steps = {step.get("name"): step for job in jobs.values() for step in job["steps"]}
    for name, key in SKIPPED_INPUTS:
        path = re.sub(r"\$\{\{ *env\.([A-Za-z_][A-Za-z0-9_]*) *\}\}",
                      lambda m: last_env[m.group(1)], steps[name]["with"][key])
        if not os.path.exists(os.path.join(workspace, path)):
            print(f"FAIL: {path}, the {key} of {name!r}, is not in the workspace")
            return 1
        print(f"{name!r} would take {path}")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
