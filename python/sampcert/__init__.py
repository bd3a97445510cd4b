"""sampcert from Python: certify a token sampler and read its verdict.

    import sampcert

    def my_sampler(batch, seed, first_draw, draws_per_row):
        ...  # numpy: return tokens, shape (len(batch.rows), draws_per_row)

    report = sampcert.certify(my_sampler, profile="quick")
    print(report.verdict)          # "Conformant", "NotConformant", ...
    report.assert_conformant()     # AssertionError naming each root cause and its reproduction

`certify` runs the `sampcert` executable (the one this package installs), which runs the same
certification as `sampcert run` on the command line. A Python sampler is served to it through
the process protocol (`exec:`) by a child process started with this interpreter
(`sys.executable`), so the sampler runs in the caller's environment. `sampcert.protocol` is the
protocol helper a sampler script uses directly (`sampcert.protocol.serve`).

Debugging a failure in this process (sampcert.debug): `load_row(path)` reads a report's row
file as the batch the sampler received, `reference(row)` gives its exact distribution and
classes, `replay(fn, row, draws=...)` calls the sampler here on it and checks the result.

The pytest plugin (`sampcert.pytest_plugin`, registered through the `pytest11` entry point) gives
tests a `sampcert` fixture and the `--sampcert-profile` option.
"""

from ._version import __version__
from .api import (CertifyError, Failure, Report, RootCause, Speed, SpeedShape, certify,
                  default_jobs, executable, sampler_command)

# Imported on first use: `import sampcert` (the console script, a sampler process asking the
# fork server) stays free of numpy.
_LAZY = {"load_row": "debug", "load_sampler": "debug", "reference": "debug", "replay": "debug",
         "Reference": "debug", "Replay": "debug", "InvalidRow": "debug", "protocol": None}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'sampcert' has no attribute {name!r}")
    import importlib
    module = importlib.import_module(f".{_LAZY[name] or name}", __name__)
    return module if _LAZY[name] is None else getattr(module, name)

__all__ = ["__version__", "certify", "executable", "sampler_command", "default_jobs", "Report",
           "Failure", "RootCause", "Speed", "SpeedShape", "CertifyError", "load_row",
           "load_sampler", "reference", "replay", "Reference", "Replay", "InvalidRow", "protocol"]
