"""The package's version: the CMake project's (project(sampcert VERSION ...) in CMakeLists.txt).

An installed package carries `_build_info.py`, written by CMake when the wheel is built; a source
tree (python/ on sys.path) reads CMakeLists.txt two folders up. `sampcert --version` prints the
same number (test python.version_agrees).
"""

import os
import re


def _read() -> str:
    try:
        from ._build_info import VERSION  # type: ignore[import-not-found]
        return VERSION
    except ImportError:
        pass
    cmake = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "CMakeLists.txt")
    try:
        with open(cmake, encoding="utf-8") as f:
            m = re.search(r"project\(sampcert VERSION ([0-9][0-9.]*)", f.read())
    except OSError:
        m = None
    if m is None:
        raise ImportError("sampcert: no version: this package is neither installed (no "
                          "_build_info.py) nor in a source tree (no ../../CMakeLists.txt)")
    return m.group(1)


__version__ = _read()
