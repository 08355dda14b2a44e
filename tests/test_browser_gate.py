"""The browser tests' gate: skip without Chromium, fail instead under TAMMI_REQUIRE_BROWSER=1."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.browser_gate import INSTALL_COMMAND, REQUIRE_ENV, browser_gate, missing_parts

ROOT = Path(__file__).resolve().parents[1]
BROWSER_TESTS = "tests/integration/test_web_browser.py"
N_BROWSER_TESTS = len(re.findall(r"^def test_", (ROOT / BROWSER_TESTS).read_text(), re.MULTILINE))


def test_runs_when_browser_and_driver_are_there():
    assert browser_gate([], {}).action == "run"
    assert browser_gate([], {REQUIRE_ENV: "1"}).action == "run"


@pytest.mark.parametrize("missing", [["chromium"], ["chromedriver"], ["chromium", "chromedriver"]])
def test_skips_without_them_naming_the_install_command(missing):
    for env in ({}, {REQUIRE_ENV: "0"}, {REQUIRE_ENV: ""}):
        gate = browser_gate(missing, env)
        assert gate.action == "skip"
        assert INSTALL_COMMAND in gate.message and " and ".join(missing) in gate.message


def test_fails_without_them_when_required_with_the_same_message():
    skip = browser_gate(["chromium"], {})
    fail = browser_gate(["chromium"], {REQUIRE_ENV: "1"})
    assert fail.action == "fail" and fail.message == skip.message


def test_missing_parts_names_what_is_absent():
    assert missing_parts("/usr/bin/chromium", "/usr/bin/chromedriver") == []
    assert missing_parts(None, "/usr/bin/chromedriver") == ["chromium"]
    assert missing_parts(None, None) == ["chromium", "chromedriver"]


@pytest.mark.slow
@pytest.mark.parametrize(("require", "outcome"), [("", "skipped"), ("1", "errors")])
def test_browser_file_skips_or_fails_without_a_browser(tmp_path, require, outcome):
    """The browser test file itself, with nothing on PATH: skipped, or failed when required."""
    env = {**os.environ, "PATH": str(tmp_path), REQUIRE_ENV: require}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", BROWSER_TESTS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert f"{N_BROWSER_TESTS} {outcome}" in proc.stdout, proc.stdout[-3000:]
    assert INSTALL_COMMAND in proc.stdout
    assert proc.returncode == (1 if require else 0)
