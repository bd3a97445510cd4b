"""The process-protocol helper under its source-tree name: this is `sampcert.protocol`
(python/sampcert/protocol.py), the module `pip install .` installs.

A sampler script in a source tree (or one that copies this folder) keeps writing
`import sampcert_protocol as sp`; this file puts the tree's python/ folder first on sys.path and
makes the name an alias of the one module, so there is one helper, not two.
"""

import importlib
import os
import sys

_PYTHON = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                        "python"))
if os.path.isfile(os.path.join(_PYTHON, "sampcert", "protocol.py")) and _PYTHON not in sys.path:
    sys.path.insert(0, _PYTHON)
sys.modules[__name__] = importlib.import_module("sampcert.protocol")
