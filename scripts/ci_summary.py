#!/usr/bin/python3
"""Counts ctest's results honestly: passed, failed and skipped, each skip
with its reason, checked against the skips the repository accepts.

    scripts/ci_summary.py [--allowed FILE] [--label ci] [--failed TEXT]...
                          [PHASE=]JUNIT.xml...

Each JUNIT.xml is what `ctest --output-junit` wrote for one run (PHASE, by
default the file's name without .xml, names the run in the report). Per
ctest test:
  passed   ctest ran it and it passed, with no gtest skip in its output (a
           gtest binary that exits 0 after a GTEST_SKIP, bypassing
           tests/testing/run_all_tests.h, counts as skipped);
  skipped  SKIP_RETURN_CODE (77) or a skip expression matched, or DISABLED;
           its reasons are its output's lines
             SKIPPED [gtest] Suite.Name: reason   (tests/testing/run_all_tests.h)
             SKIPPED [pytest] NODEID: reason      (tests/testing/run_pytest.py)
             SKIPPED: reason                      (the scripts' own skips)
  failed   anything else, a test ctest could not run included.
A missing JUNIT.xml (the phase's build failed before ctest) counts as one
failure; each --failed TEXT (e.g. a fuzz target that crashed) as another.

A skip is allowed when FILE (default .ci/allowed_skips) has an entry for the
test whose REASON expression every one of its reasons matches (re.search);
a skip that printed no reason, or hid behind exit 0, never is.
Prints each skip with its reason and verdict, each failure, then
  LABEL: N passed, N failed, N skipped (N not allowed)
and exits 0 only when nothing failed and every skip is allowed; 2 on a
malformed FILE or argument.
"""
import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REASON_LINE = re.compile(r"^SKIPPED(?: \[(?:gtest|pytest)\] |: ?)(.+)$")
HIDDEN_GTEST_SKIP = re.compile(r"^\[  SKIPPED \] (?!\d+ tests?,)(\S+)", re.M)
CTEST_SKIPS = ("SKIP_RETURN_CODE", "SKIP_REGULAR_EXPRESSION")


class Allowed:
    """The entries of .ci/allowed_skips: TEST | REASON | WHY per line."""

    def __init__(self, path):
        self.entries = {}  # test -> [(compiled REASON, WHY)]
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                parts = [p.strip() for p in line.split(" | ", 2)]
                if len(parts) != 3 or not all(parts):
                    raise ValueError("%s:%d: want `TEST | REASON | WHY`, got %r"
                                     % (path, n, line.strip()[:200]))
                try:
                    expr = re.compile(parts[1])
                except re.error as e:
                    raise ValueError("%s:%d: REASON %r: %s"
                                     % (path, n, parts[1][:200], e))
                self.entries.setdefault(parts[0], []).append((expr, parts[2]))

    def why(self, test, reasons):
        """WHY of the entry of `test` that every reason matches, or None."""
        for expr, why in self.entries.get(test, []):
            if reasons and all(expr.search(r) for r in reasons):
                return why
        return None


def reasons_of(output):
    """The skip reasons printed in a test's output, in order."""
    out = []
    for line in output.splitlines():
        m = REASON_LINE.match(line.strip())
        if m:
            out.append(m.group(1))
    return out


def classify(case):
    """(kind, reasons, allowable) of one <testcase>: kind 'passed', 'failed'
    or 'skipped'; a skip without a printed reason, or hidden behind exit 0,
    is never allowable."""
    status = case.get("status", "")
    output = case.findtext("system-out") or ""
    if status == "disabled":
        return "skipped", ["DISABLED (the test's ctest property)"], True
    if status == "notrun":
        message = case.find("skipped").get("message", "") \
            if case.find("skipped") is not None else ""
        if not message.startswith(CTEST_SKIPS):
            return "failed", ["not run: " + (message or output)[:300]], False
        reasons = reasons_of(output)
        if not reasons:
            return "skipped", ["no reason printed (ctest: %s)" % message], False
        return "skipped", reasons, True
    if status == "run" and case.find("failure") is None:
        hidden = list(dict.fromkeys(HIDDEN_GTEST_SKIP.findall(output)))
        if hidden:
            return "skipped", [
                "%s: GTEST_SKIP in a binary that exited 0 (its main must "
                "return cairn::testing::RunAllTests())" % name
                for name in hidden], False
        return "passed", [], True
    return "failed", [], False


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--allowed", default=os.path.join(ROOT, ".ci",
                                                     "allowed_skips"))
    p.add_argument("--label", default="ci")
    p.add_argument("--failed", action="append", default=[],
                   help="a failure from outside ctest, counted and named")
    p.add_argument("junit", nargs="+", help="[PHASE=]ctest JUnit XML")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    try:
        allowed = Allowed(args.allowed)
    except (OSError, ValueError) as e:
        print("ci_summary.py: %s" % e, file=sys.stderr)
        return 2
    passed, failures, skips = 0, list(args.failed), []
    for spec in args.junit:
        phase, _, path = spec.rpartition("=")
        phase = phase or os.path.basename(path).rsplit(".xml", 1)[0]
        try:
            cases = list(ET.parse(path).getroot().iter("testcase"))
        except (OSError, ET.ParseError) as e:
            failures.append("[%s] no ctest results (%s)" % (phase, e))
            continue
        for case in cases:
            kind, reasons, allowable = classify(case)
            name = case.get("name", "?")
            if kind == "passed":
                passed += 1
            elif kind == "skipped":
                skips.append((phase, name, reasons, allowable and
                              allowed.why(name, reasons)))
            else:
                failures.append("[%s] %s%s" % (phase, name, "".join(
                    ": " + r for r in reasons)))
    not_allowed = sum(1 for s in skips if not s[3])
    shown = os.path.relpath(args.allowed, ROOT) \
        if args.allowed.startswith(ROOT + os.sep) else args.allowed
    for phase, name, reasons, why in skips:
        print("%s: skipped [%s] %s (%s)" % (
            args.label, phase, name,
            "allowed: " + why if why else "NOT ALLOWED: not in " + shown))
        for r in reasons:
            print("    " + r)
    for f in failures:
        print("%s: failed %s" % (args.label, f))
    print("%s: %d passed, %d failed, %d skipped (%d not allowed)"
          % (args.label, passed, len(failures), len(skips), not_allowed))
    return 0 if not failures and not not_allowed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
