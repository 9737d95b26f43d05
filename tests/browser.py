"""Open a page in the real headless Chromium (Debian's chromium + chromium-driver) and read what
it drew: element counts and on-screen sizes as the browser laid them out, and a screenshot."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@contextmanager
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    if not (Path(CHROMIUM).exists() and Path(DRIVER).exists()):
        raise AssertionError("chromium and chromium-driver are needed: `make test` installs them")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def drawn_boxes(driver: Any, selector: str) -> list[dict[str, float]]:
    """The layout boxes the browser gave every element matching `selector`."""
    return list(
        driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0])).map(e => {"
            "const r = e.getBoundingClientRect();"
            "return {width: r.width, height: r.height, top: r.top, left: r.left}; });",
            selector,
        )
    )
