"""Runs pytest for ctest without letting a skip hide anything.

    /usr/bin/python3 tests/testing/run_pytest.py [pytest args...]

ctest sees one exit status per pytest run. Matching a skip in the output
(SKIP_REGULAR_EXPRESSION) would report the whole run as Skipped even when
another case failed; exiting 0 would report skips as Passed. This runner
exits with pytest's own status when anything failed or errored, 77 (ctest's
SKIP_RETURN_CODE) when nothing failed but a case or module was skipped (or
xfailed), 1 when a case skipped without a reason (CI cannot judge such a
skip), 5 when nothing ran at all, and 0 when every case ran and passed.
Each skip is printed after pytest's report, one line each:

    SKIPPED [pytest] NODEID: reason

which scripts/ci_summary.py reads and checks against .ci/allowed_skips.
"""
import sys

import pytest

SKIP = 77  # ctest's SKIP_RETURN_CODE on the tests that use this runner.
MAX_REASON = 1000


def one_line(text):
    """`text` on one line of at most MAX_REASON characters."""
    text = " | ".join(part.strip() for part in str(text).splitlines()
                      if part.strip())
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 3] + "..."


def reason_of(report):
    """Why `report` (a skipped test or collection report) skipped; "" when
    it gave no reason."""
    if hasattr(report, "wasxfail"):
        reason = one_line(report.wasxfail or "")
        return "xfail: " + reason if reason else ""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        message = str(longrepr[2])
        if message.startswith("Skipped: "):
            message = message[len("Skipped: "):]
        elif message == "Skipped":  # pytest.skip() with no reason.
            message = ""
        return one_line(message)
    return one_line(longrepr)


class SkipCollector:
    """Collects the skips of a run: [(node id, reason)]."""

    def __init__(self):
        self.skips = []

    def pytest_runtest_logreport(self, report):
        if report.skipped:
            self.skips.append((report.nodeid, reason_of(report)))

    def pytest_collectreport(self, report):
        if report.skipped:
            self.skips.append((report.nodeid or "(collection)",
                               reason_of(report)))


def main(argv):
    collector = SkipCollector()
    rc = int(pytest.main(argv, plugins=[collector]))
    bare = 0
    for nodeid, reason in collector.skips:
        if reason:
            print("SKIPPED [pytest] %s: %s" % (nodeid, reason))
        else:
            print("FAILED [pytest] %s: skipped without a reason "
                  "(pytest.skip(\"why\") is required)" % nodeid)
            bare += 1
    sys.stdout.flush()
    if bare:
        print("%d skipped without a reason: exit 1" % bare)
        return 1
    if rc not in (int(pytest.ExitCode.OK),
                  int(pytest.ExitCode.NO_TESTS_COLLECTED)):
        return rc  # A failure wins over any skip.
    if collector.skips:
        print("%d skipped: exit %d (ctest: Skipped)"
              % (len(collector.skips), SKIP))
        return SKIP
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
