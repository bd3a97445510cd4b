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

The pytest plugin (`sampcert.pytest_plugin`, registered through the `pytest11` entry point) gives
tests a `sampcert` fixture and the `--sampcert-profile` option.
"""

from ._version import __version__
from .api import (CertifyError, Failure, Report, RootCause, certify, executable,
                  sampler_command)

__all__ = ["__version__", "certify", "executable", "sampler_command", "Report", "Failure",
           "RootCause", "CertifyError"]
