"""Sample pytest cases for ci_summary_test (not collected by any ctest test
directly): one passes, one skips, one fails when CAIRN_SAMPLE_FAIL is set,
one skips without a reason when CAIRN_SAMPLE_BARE_SKIP is set."""
import os

import pytest


def test_passes():
    assert 1 + 1 == 2


def test_skips():
    pytest.skip("a sample pytest reason")


def test_fails_on_request():
    assert "CAIRN_SAMPLE_FAIL" not in os.environ, "asked to fail"


def test_skips_without_reason_on_request():
    if "CAIRN_SAMPLE_BARE_SKIP" in os.environ:
        pytest.skip()
