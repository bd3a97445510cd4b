"""`sampcert` on PATH after `pip install`: runs the executable this package installs
(sampcert/bin/sampcert, or $SAMPCERT_EXECUTABLE) with the same arguments; `python -m sampcert`
does the same."""

import os
import sys


def main() -> None:
    from .api import CertifyError, executable
    try:
        exe = executable()
    except CertifyError as e:
        sys.stderr.write(f"sampcert: {e}\n")
        sys.exit(4)
    # argv[0] is the command the user typed, not the package's internal path: `--help` shows
    # it, and the tool names itself so in the reproduction lines it prints.
    # The reproduction lines name the tool as typed where `sampcert` on PATH is this script.
    import shutil
    found = shutil.which("sampcert")
    if found and os.path.realpath(found) == os.path.realpath(sys.argv[0]):
        os.environ.setdefault("SAMPCERT_TOOL_COMMAND", "sampcert")
    os.execv(exe, ["sampcert"] + sys.argv[1:])


if __name__ == "__main__":
    main()
