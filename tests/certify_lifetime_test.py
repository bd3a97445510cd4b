"""SPEC LIFE-1: the tool that sampcert.certify() starts never outlives it.

A stand-in tool (SAMPCERT_EXECUTABLE, this file run with --fake-tool) records its pid and the pid
of a child it starts, then sleeps. A Python process calls certify() with it, and is then
  - sent SIGTERM (no `finally` runs): the tool must die with it (a parent-death signal);
  - sent SIGINT alone (as a terminal's ^C reaches it when the tool leads its own group): the
    KeyboardInterrupt path must end the tool's whole process group, its child included.
The old package ran the tool with subprocess.run: after SIGTERM the tool ran on (a real one wrote
a CONFORMANT report 30 s later), and after SIGINT the tool's children did.

Run: python3 tests/certify_lifetime_test.py PYTHON_PACKAGE_DIR   (a few seconds, no numpy)
"""

import os
import signal
import subprocess
import sys
import tempfile
import time


def fake_tool(pid_file):
    child = subprocess.Popen(["sleep", "300"])
    with open(pid_file + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    os.rename(pid_file + ".tmp", pid_file)
    time.sleep(300)


def alive(pid):
    """True while pid exists and is no zombie (the test is the subreaper that reaps orphans)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def run_case(package_dir, work, sig):
    pid_file = os.path.join(work, f"pids.{sig}")
    tool = os.path.join(work, "sampcert")
    with open(tool, "w") as f:
        f.write(f"#!/bin/sh\nexec {sys.executable} {os.path.abspath(__file__)} --fake-tool "
                f"{pid_file}\n")
    os.chmod(tool, 0o755)
    env = dict(os.environ, SAMPCERT_EXECUTABLE=tool, PYTHONPATH=package_dir)
    caller = subprocess.Popen(
        [sys.executable, "-c",
         f"import sampcert; sampcert.certify('stable_cpu', out={os.path.join(work, 'out')!r})"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not os.path.exists(pid_file):
        if time.monotonic() > deadline or caller.poll() is not None:
            caller.kill()
            return [f"{sig.name}: the stand-in tool never started (caller exit {caller.poll()})"]
        time.sleep(0.05)
    with open(pid_file) as f:
        tool_pid, child_pid = (int(x) for x in f.read().split())
    os.kill(caller.pid, sig)
    caller.wait(timeout=60)
    # SIGINT: the caller's finally ends the group before it exits. SIGTERM: the parent-death
    # signal is sent as the caller dies; the tool's child is the real tool's business (its
    # workers have their own parent-death signal), so only the tool is required to go.
    must_end = {"tool": tool_pid} if sig == signal.SIGTERM else {"tool": tool_pid,
                                                                  "tool's child": child_pid}
    deadline = time.monotonic() + 10
    while any(alive(p) for p in must_end.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    problems = [f"{sig.name} to the caller: the {what} (pid {p}) is still running"
                for what, p in must_end.items() if alive(p)]
    for p in (tool_pid, child_pid):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return problems


def main():
    if sys.argv[1] == "--fake-tool":
        fake_tool(sys.argv[2])
        return 0
    import ctypes
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come to us
    problems = []
    with tempfile.TemporaryDirectory(prefix="sampcert-lifetime-") as work:
        for sig in (signal.SIGTERM, signal.SIGINT):
            problems += run_case(os.path.abspath(sys.argv[1]), work, sig)
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print("ok: the tool ended with its caller after SIGTERM and after SIGINT")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
