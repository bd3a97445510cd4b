"""pytest plugin (entry point pytest11 "sampcert"): the `sampcert` fixture.

    def test_my_sampler(sampcert):
        sampcert.certify(my_sampler).assert_conformant()

The fixture's certify() is sampcert.certify with the profile from `--sampcert-profile`
(default quick) and the seed from `--sampcert-seed` (default 1), and its report folder kept
per test: `--sampcert-reports DIR` puts it in DIR/<test id>-<hash of the id> (emptied first),
else it is under the test's
tmp_path (pytest keeps the last three sessions' tmp_path folders). A failing assert_conformant()
fails the test with the verdict, each root cause with its input and one-line reproduction, and
the report's path, and for each of the first root causes a Python snippet that replays the
sampler on its row in-process (sampcert.replay); each report folder is also recorded as the
test's `sampcert_report` property (pytest's JUnit XML carries it).
"""

import hashlib
import re
import shutil
from pathlib import Path

import pytest

from .api import certify as _certify


def pytest_addoption(parser):
    group = parser.getgroup("sampcert", "sampler certification (sampcert)")
    group.addoption("--sampcert-profile", default="quick", choices=("quick", "standard", "full"),
                    help="profile for the sampcert fixture's certify() (default: quick)")
    group.addoption("--sampcert-seed", type=int, default=1,
                    help="seed for the sampcert fixture's certify() (default: 1)")
    group.addoption("--sampcert-reports", default=None, metavar="DIR",
                    help="keep each test's report folder in DIR/<test id> (default: under the "
                         "test's tmp_path)")
    group.addoption("--sampcert-jobs", type=int, default=None,
                    help="worker processes per certification (default: the cores available)")
    group.addoption("--sampcert-no-fork-server", action="store_true", default=False,
                    help="start every sampler process afresh instead of forking it from one "
                         "that imported the sampler (certify(fork_server=False))")


class SampcertFixture:
    """What the `sampcert` fixture gives a test: certify() with the session's options."""

    def __init__(self, request, base: Path):
        self._request = request
        self._base = base
        self._count = 0
        self.profile = request.config.getoption("--sampcert-profile")
        self.seed = request.config.getoption("--sampcert-seed")
        self.jobs = request.config.getoption("--sampcert-jobs")
        self.fork_server = not request.config.getoption("--sampcert-no-fork-server")
        self.reports = []

    def certify(self, sampler, **kwargs):
        """sampcert.certify(sampler, **kwargs), with the session's profile, seed and jobs
        unless given, writing to this test's report folder."""
        kwargs.setdefault("profile", self.profile)
        kwargs.setdefault("seed", self.seed)
        kwargs.setdefault("jobs", self.jobs)
        kwargs.setdefault("fork_server", self.fork_server)
        if "out" not in kwargs:
            self._count += 1
            out = self._base / (f"report-{self._count}" if self._count > 1 else "report")
            out.parent.mkdir(parents=True, exist_ok=True)
            kwargs["out"] = out
        report = _certify(sampler, **kwargs)
        self.reports.append(report)
        self._request.node.user_properties.append(("sampcert_report", str(report.directory)))
        return report


@pytest.fixture
def sampcert(request, tmp_path):
    """Certify samplers from a test: `sampcert.certify(fn).assert_conformant()`."""
    root = request.config.getoption("--sampcert-reports")
    if root:
        # A readable prefix of the test id and a hash of all of it: distinct ids never share a
        # folder ("[a/b]" and "[a b]"), and a long parametrized id stays a valid file name.
        nodeid = request.node.nodeid
        readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid)[-80:].lstrip("._-")
        digest = hashlib.sha256(nodeid.encode("utf-8", "surrogateescape")).hexdigest()[:10]
        base = Path(root).resolve() / f"{readable}-{digest}"
        shutil.rmtree(base, ignore_errors=True)  # this test's reports of an earlier session
    else:
        base = tmp_path / "sampcert"
    return SampcertFixture(request, base)
