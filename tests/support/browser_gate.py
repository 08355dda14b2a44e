"""Whether the browser tests run, skip or fail: a missing Chromium skips them on a developer's
machine (the README's install cannot provide it), but fails them where
``TAMMI_REQUIRE_BROWSER=1`` (``.ci/run`` sets it), so CI can never skip them unseen."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import Literal, NamedTuple

INSTALL_COMMAND = "apt-get install chromium chromium-driver"
REQUIRE_ENV = "TAMMI_REQUIRE_BROWSER"
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome")
DRIVER_NAME = "chromedriver"


class Gate(NamedTuple):
    """What to do with the browser tests, and the message a skip or failure carries."""

    action: Literal["run", "skip", "fail"]
    message: str


def browser_gate(missing: list[str], env: Mapping[str, str]) -> Gate:
    """Run when nothing is ``missing``; otherwise skip, or fail where `REQUIRE_ENV` is ``1``.

    The message names what is missing and the command that installs it."""
    if not missing:
        return Gate("run", "")
    message = f"{' and '.join(missing)} not found on PATH: install with `{INSTALL_COMMAND}` (Debian)"
    return Gate("fail" if env.get(REQUIRE_ENV, "") == "1" else "skip", message)


def find_browser() -> tuple[str | None, str | None]:
    """The paths of a Chromium and of chromedriver on PATH (None where absent)."""
    browser = next((p for p in map(shutil.which, BROWSER_NAMES) if p), None)
    return browser, shutil.which(DRIVER_NAME)


def missing_parts(browser: str | None, driver: str | None) -> list[str]:
    """The names of the absent parts, in the order the message lists them."""
    return [name for name, path in (("chromium", browser), (DRIVER_NAME, driver)) if not path]


def current_gate() -> Gate:
    """The gate for this machine and environment."""
    return browser_gate(missing_parts(*find_browser()), os.environ)
