"""How CI counts, over a real ctest run.

    /usr/bin/python3 tests/ci/ci_summary_test.py build/tests/ci_skip_sample

A throwaway CMake project registers sample tests: the gtest binary
skip_sample.cc (its main is tests/testing/gtest_main.cc) under several
filters, the sample pytest file through tests/testing/run_pytest.py, and
scripts that skip, skip silently, or hide a gtest skip behind exit 0. Real
ctest runs them and writes its JUnit XML; then ctest's own verdicts are
checked (a skip is Skipped, a skip next to a failure is Failed) and
scripts/ci_summary.py must count each test as passed, failed or skipped,
print every skip's reason, and fail on each skip .ci/allowed_skips-style
entries do not allow. Also: the repository's .ci/allowed_skips parses and
names only real tests, no test main bypasses RunAllTests(), and no ctest
test uses SKIP_REGULAR_EXPRESSION (it turns a failure into a skip).
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SUMMARY = os.path.join(ROOT, "scripts", "ci_summary.py")
PYTEST = ["/usr/bin/python3", os.path.join(ROOT, "tests", "testing",
                                           "run_pytest.py"),
          "-q", "-p", "no:cacheprovider",
          os.path.join(HERE, "samples", "test_sample.py")]
SAMPLE = None  # The ci_skip_sample binary (argv[1]).

# name -> (command, environment); every test has SKIP_RETURN_CODE 77.
TESTS = {
    "gtest_pass": ([SAMPLE, "--gtest_filter=SkipSample.Passes"], ""),
    "gtest_skip": ([SAMPLE, "--gtest_filter=SkipSample.Passes:SkipSample.Skips"],
                   ""),
    "gtest_setup_skip": ([SAMPLE, "--gtest_filter=SetUpSkipSample.*"], ""),
    "gtest_all": ([SAMPLE], ""),
    "gtest_skip_and_fail": ([SAMPLE], "CAIRN_SAMPLE_FAIL=1"),
    "gtest_bare_skip": ([SAMPLE, "--gtest_filter=SkipSample.Passes:"
                         "SkipSample.SkipsWithoutReasonOnRequest"],
                        "CAIRN_SAMPLE_BARE_SKIP=1"),
    "pytest_pass": (PYTEST + ["-k", "passes"], ""),
    "pytest_skip": (PYTEST, ""),
    "pytest_skip_and_fail": (PYTEST, "CAIRN_SAMPLE_FAIL=1"),
    "pytest_bare_skip": (PYTEST + ["-k", "passes or without_reason"],
                         "CAIRN_SAMPLE_BARE_SKIP=1"),
    "script_skip": (["sh", "-c", "echo 'SKIPPED: no widget here'; exit 77"], ""),
    "script_silent_skip": (["sh", "-c", "exit 77"], ""),
    "hidden_gtest_skip": (["sh", "-c", "printf '%s\\n' "
                           "'[  SKIPPED ] Old.Case (0 ms)' "
                           "'[  SKIPPED ] 1 test, listed below:' "
                           "'[  SKIPPED ] Old.Case'"], ""),
    "missing_executable": (["/nonexistent/cairn-no-such-binary"], ""),
}


def cmake_quote(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def run_ctest(work, regex=None):
    """Configures the sample project in `work` and runs ctest; the path of
    its JUnit XML."""
    src = os.path.join(work, "src")
    if not os.path.isdir(src):
        os.makedirs(src)
        lines = ["cmake_minimum_required(VERSION 3.25)", "project(sample NONE)",
                 "enable_testing()"]
        for name, (cmd, env) in TESTS.items():
            lines.append("add_test(NAME %s COMMAND %s)"
                         % (name, " ".join(cmake_quote(c) for c in cmd)))
            props = "SKIP_RETURN_CODE 77"
            if env:
                props += " ENVIRONMENT " + cmake_quote(env)
            lines.append("set_tests_properties(%s PROPERTIES %s)" % (name, props))
        with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run(["cmake", "-S", src, "-B", os.path.join(work, "b")],
                       check=True, capture_output=True)
    junit = os.path.join(work, "%s.xml" % (regex and "subset" or "all"))
    args = ["ctest", "--test-dir", os.path.join(work, "b"), "-j", "2",
            "--output-junit", junit, "--test-output-truncation", "middle"]
    if regex:
        args += ["-R", regex]
    subprocess.run(args, capture_output=True, text=True)
    return junit


def summary(*args, allowed=None):
    """(exit status, stdout) of ci_summary.py ARGS with `allowed` as its
    allow-list text."""
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "w") as f:
        f.write(allowed or "# nothing allowed\n")
    try:
        r = subprocess.run(["/usr/bin/python3", SUMMARY, "--allowed", path,
                            "--label", "sample"] + list(args),
                           capture_output=True, text=True)
    finally:
        os.unlink(path)
    return r.returncode, r.stdout + r.stderr


class CountingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="cairn-ci-summary-")
        cls.junit = run_ctest(cls.work)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_ctest_reports_skips_as_skipped_and_failures_as_failed(self):
        status = {c.get("name"): c.get("status")
                  for c in ET.parse(self.junit).iter("testcase")}
        want = {"gtest_pass": "run", "gtest_skip": "notrun",
                "gtest_setup_skip": "notrun", "gtest_all": "notrun",
                "gtest_skip_and_fail": "fail", "gtest_bare_skip": "fail",
                "pytest_bare_skip": "fail", "pytest_pass": "run",
                "pytest_skip": "notrun", "pytest_skip_and_fail": "fail",
                "script_skip": "notrun", "script_silent_skip": "notrun",
                "hidden_gtest_skip": "run", "missing_executable": "notrun"}
        self.assertEqual(status, want)

    def test_counts_and_reasons_with_nothing_allowed(self):
        rc, out = summary(self.junit)
        self.assertEqual(rc, 1, out)
        self.assertIn("sample: 2 passed, 5 failed, 7 skipped (7 not allowed)",
                      out)
        for reason in [
                "SkipSample.Skips: sample reason | second line",
                "SkipSample.DISABLED_Off: disabled (DISABLED_ prefix)",
                "SetUpSkipSample.One: the fixture's reason",
                "test_sample.py::test_skips: a sample pytest reason",
                "    no widget here",
                "no reason printed (ctest: SKIP_RETURN_CODE=77)",
                "Old.Case: GTEST_SKIP in a binary that exited 0"]:
            self.assertIn(reason, out)
        self.assertRegex(out, r"sample: failed \[all\] gtest_skip_and_fail\n")
        self.assertRegex(out, r"sample: failed \[all\] pytest_skip_and_fail\n")
        # A skip without a reason fails its test: CI cannot judge it.
        self.assertRegex(out, r"sample: failed \[all\] gtest_bare_skip\n")
        self.assertRegex(out, r"sample: failed \[all\] pytest_bare_skip\n")
        self.assertRegex(out, r"sample: failed \[all\] missing_executable: "
                              r"not run: Unable to find executable")
        self.assertRegex(out, r"sample: skipped \[all\] gtest_skip "
                              r"\(NOT ALLOWED: not in ")

    def test_a_skip_without_a_reason_fails_naming_the_case(self):
        env = dict(os.environ, CAIRN_SAMPLE_BARE_SKIP="1")
        r = subprocess.run(
            [SAMPLE, "--gtest_filter=SkipSample.SkipsWithoutReasonOnRequest"],
            env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("FAILED [gtest] SkipSample.SkipsWithoutReasonOnRequest: "
                      "skipped without a reason", r.stdout)
        r = subprocess.run(PYTEST + ["-k", "without_reason"], env=env,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("FAILED [pytest] ", r.stdout)
        self.assertIn("test_skips_without_reason_on_request: skipped without "
                      "a reason", r.stdout)

    def test_allowed_only_when_every_reason_matches(self):
        allowed = ("gtest_skip | ^SkipSample\\.Skips: sample reason | ok1\n"
                   "gtest_all | ^SkipSample\\.Skips: | partial\n"
                   "pytest_skip | a sample pytest reason$ | ok2\n"
                   "script_skip | ^no widget | ok3\n"
                   "script_silent_skip | .* | a silent skip is never allowed\n"
                   "hidden_gtest_skip | .* | nor a hidden one\n")
        rc, out = summary(self.junit, allowed=allowed)
        self.assertEqual(rc, 1, out)
        self.assertIn("gtest_skip (allowed: ok1)", out)
        self.assertIn("pytest_skip (allowed: ok2)", out)
        self.assertIn("script_skip (allowed: ok3)", out)
        self.assertRegex(out, r"gtest_all \(NOT ALLOWED")
        self.assertIn("7 skipped (4 not allowed)", out)
        self.assertRegex(out, r"script_silent_skip \(NOT ALLOWED")
        self.assertRegex(out, r"hidden_gtest_skip \(NOT ALLOWED")
        # The same entries over a run of the allowed skips alone pass.
        subset = run_ctest(
            self.work, "^(gtest_pass|gtest_skip|pytest_skip|script_skip)$")
        rc, out = summary("run=" + subset, allowed=allowed)
        self.assertEqual(rc, 0, out)
        self.assertIn("sample: 1 passed, 0 failed, 3 skipped (0 not allowed)",
                      out)
        self.assertIn("sample: skipped [run] gtest_skip (allowed: ok1)", out)

    def test_missing_results_and_outside_failures_count(self):
        subset = run_ctest(self.work, "^gtest_pass$")
        rc, out = summary("--failed", "[fuzz] rpc CRASHED", subset,
                          "asan=" + os.path.join(self.work, "none.xml"))
        self.assertEqual(rc, 1, out)
        self.assertIn("sample: failed [fuzz] rpc CRASHED", out)
        self.assertIn("sample: failed [asan] no ctest results", out)
        self.assertIn("sample: 1 passed, 2 failed, 0 skipped", out)

    def test_malformed_allow_list_is_refused_naming_the_line(self):
        rc, out = summary(self.junit, allowed="# c\nno_separator_here\n")
        self.assertEqual(rc, 2, out)
        self.assertIn(":2: want `TEST | REASON | WHY`", out)
        rc, out = summary(self.junit, allowed="t | ([ | why\n")
        self.assertEqual(rc, 2, out)
        self.assertIn(":1: REASON '(['", out)


def sources(suffixes, top=ROOT):
    """(path relative to ROOT, text) of the files under `top` whose names
    end with one of `suffixes`, build trees and .git left out."""
    for d, dirs, files in os.walk(top):
        dirs[:] = [x for x in dirs
                   if not x.startswith(("build", ".git", "_deps"))]
        for name in files:
            if name.endswith(tuple(suffixes)):
                path = os.path.join(d, name)
                with open(path, errors="replace") as f:
                    yield os.path.relpath(path, ROOT), f.read()


class RepositoryTest(unittest.TestCase):
    def test_allowed_skips_parses_and_names_real_tests(self):
        spec = importlib.util.spec_from_file_location("ci_summary", SUMMARY)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        allowed = module.Allowed(os.path.join(ROOT, ".ci", "allowed_skips"))
        self.assertTrue(allowed.entries)
        names = set()
        for _, text in sources(["CMakeLists.txt"]):
            names |= set(re.findall(r"\bNAME\s+(\w+)", text))
        for test in allowed.entries:
            self.assertIn(test, names, "an allowed skip of no test")

    def test_no_test_main_bypasses_run_all_tests(self):
        for path, text in sources([".cc", ".h"], os.path.join(ROOT, "tests")):
            if path != "tests/testing/run_all_tests.cc":
                self.assertNotIn("RUN_ALL_TESTS()", text,
                                 path + ": return cairn::testing::RunAllTests()")

    def test_no_skip_regular_expression(self):
        for path, text in sources(["CMakeLists.txt", ".cmake"]):
            self.assertNotIn("SKIP_REGULAR_EXPRESSION", text,
                             path + ": a matched skip hides a failure; exit 77")



if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: ci_summary_test.py PATH/ci_skip_sample")
    SAMPLE = os.path.abspath(sys.argv.pop(1))
    for name, (cmd, env) in TESTS.items():
        TESTS[name] = ([SAMPLE if c is None else c for c in cmd], env)
    unittest.main(verbosity=2)
