"""The third-party tests' shared precondition: the venv's python imports the modules, else the
test skips (77, with what is missing and how to install it), except under CI=true, where it
fails (a third-party test must run there)."""
import os
import subprocess
import sys


def skip(why):
    ci = os.environ.get("CI") == "true"
    print(f"{'FAIL (CI=true: a third-party test must run)' if ci else 'SKIP'}: {why}; "
          "install with: sudo .ci/install-deps")
    sys.exit(1 if ci else 77)


def require(python, modules):
    if not os.access(python, os.X_OK):
        skip(f"no python at {python} (the third-party virtual environment)")
    probe = subprocess.run([python, "-c", f"import {modules}"], capture_output=True, text=True,
                           env=dict(os.environ, HF_HUB_OFFLINE="1"))
    if probe.returncode != 0:
        skip(f"{python} cannot import {modules}: {probe.stderr.strip().splitlines()[-1:]}")
