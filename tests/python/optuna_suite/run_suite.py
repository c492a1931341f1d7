"""Runs Optuna's own sampler tests (tests/samplers_tests/test_samplers.py of
the installed Optuna, taken by fetch_suite.sh, with cairn_sampler.patch)
for CairnSampler and, as a control in the same run, Optuna's RandomSampler;
prints passed/failed/skipped counts for each and exits non-zero unless
pytest passed and CairnSampler cases ran: 77 (ctest's skip, each case's
reason printed by tests/testing/run_pytest.py) when a case skipped.

    /usr/bin/python3 tests/python/optuna_suite/run_suite.py build/optuna_suite

The file comes from this machine's cache, Debian's source package of
python3-optuna, or the Optuna clone $CAIRN_OPTUNA_GIT names (fetch_suite.sh),
and is kept in DIR; with none of them the run is skipped (exit 77), loudly. The SDK is installed from the checkout into a temp dir
(cairn_testenv); cairnd comes from $CAIRN_BIN_DIR (default build/bin).
Extra arguments go to pytest (e.g. -x, or -k to narrow the run further).
"""
import collections
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/python: cairn_testenv.
import cairn_testenv  # noqa: E402

SAMPLERS = ("CairnSampler", "RandomSampler")
SKIP = 77  # fetch_suite.sh's and ctest's (SKIP_RETURN_CODE) skip.
# pytest, but a skipped case (with none failed) exits SKIP and says why.
RUN_PYTEST = os.path.join(os.path.dirname(os.path.dirname(HERE)), "testing",
                          "run_pytest.py")


def counts(junit_xml):
    """{sampler: Counter(passed=, failed=, skipped=)} from pytest's JUnit
    XML; a case is a sampler's when its test id names the sampler."""
    out = {name: collections.Counter(passed=0, failed=0, skipped=0)
           for name in SAMPLERS}
    for case in ET.parse(junit_xml).iter("testcase"):
        sampler = next((s for s in SAMPLERS if s in case.get("name", "")), None)
        if sampler is None:
            continue
        kinds = {child.tag for child in case}
        if kinds & {"failure", "error"}:
            out[sampler]["failed"] += 1
        elif "skipped" in kinds:
            out[sampler]["skipped"] += 1
        else:
            out[sampler]["passed"] += 1
    return out


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: run_suite.py DIR [pytest args...]")
    work = os.path.abspath(argv[1])
    fetched = subprocess.call([os.path.join(HERE, "fetch_suite.sh"), work])
    if fetched == SKIP:
        print("SKIPPED: Optuna's sampler tests could not be had here "
              "(fetch_suite.sh says why above): put upstream's file in the "
              "cache it names, allow deb-src from Debian's mirror, or give an "
              "Optuna clone as $CAIRN_OPTUNA_GIT (.ci/allowed_skips)")
        return SKIP
    if fetched != 0:
        print("Optuna's sampler tests could not be prepared: nothing ran")
        return 1
    sdk = cairn_testenv.install_sdk()
    try:
        junit = os.path.join(work, "junit.xml")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                   CAIRN_BIN_DIR=os.path.abspath(cairn_testenv.BIN),
                   PYTHONPATH=os.pathsep.join(
                       [sdk, HERE, os.path.dirname(HERE)] +
                       [p for p in [os.environ.get("PYTHONPATH")] if p]))
        for name in ("CAIRN_SERVER", "CAIRN_TOKEN", "CAIRN_TOKEN_FILE"):
            env.pop(name, None)
        rc = subprocess.call(
            [sys.executable, RUN_PYTEST, "-q", "-p", "no:cacheprovider",
             "-c", os.devnull, "--rootdir", work, "--junitxml", junit,
             "-W", "ignore::pytest.PytestUnknownMarkWarning",
             "-k", " or ".join(SAMPLERS),
             os.path.join(work, "test_samplers.py")] + argv[2:],
            env=env, cwd=work)
    finally:
        shutil.rmtree(sdk, ignore_errors=True)
    by_sampler = counts(junit)
    for name in SAMPLERS:
        c = by_sampler[name]
        print("%s: %d passed, %d failed, %d skipped"
              % (name, c["passed"], c["failed"], c["skipped"]))
    if sum(by_sampler["CairnSampler"].values()) == 0:
        print("no CairnSampler case ran: is cairn_sampler.patch applied?")
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
