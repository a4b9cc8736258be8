# SPDX-License-Identifier: MIT
"""Headless Chromium for the HTML report (tests/e2e/report-html.py, bench/report-html.py).

python3-selenium is Debian's, for /usr/bin/python3: a script run by another interpreter is run
again by that one (need_selenium). The browser gets no network: a page that asks for anything
gets an error in its console.
"""
import os
import shutil
import sys

SYSTEM_PYTHON = "/usr/bin/python3"


def need_selenium():
    """Return None when selenium imports here; re-run the script under /usr/bin/python3 when
    that one may have it; else the reason it cannot run."""
    try:
        import selenium  # noqa: F401
        return None
    except ImportError:
        pass
    if os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) and \
            os.access(SYSTEM_PYTHON, os.X_OK):
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)
    return "python3-selenium is not installed for %s (apt-get install python3-selenium)" % \
        SYSTEM_PYTHON


def require_selenium():
    """need_selenium(), and skip the test (exit 77) saying why when it cannot run; returns
    selenium's By, Select and WebDriverWait."""
    reason = need_selenium()
    if reason:
        import e2elib
        e2elib.skip(reason, needs="python3-selenium")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    return By, Select, WebDriverWait


def missing():
    """What headless Chromium lacks here, or None."""
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not os.access(driver, os.X_OK) or not (shutil.which("chromium") or
                                              shutil.which("chromium-browser")):
        return "headless Chromium needs chromium and chromium-driver (apt-get install " \
            "chromium chromium-driver)"
    return None


def chrome(width=1400, height=1000, console=False):
    """A headless Chromium with the network cut; console=True keeps its console messages."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    o = Options()
    o.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu",
              "--window-size=%d,%d" % (width, height), "--proxy-server=127.0.0.1:9",
              "--host-resolver-rules=MAP * ~NOTFOUND"]:
        o.add_argument(a)
    if console:
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or
                                            "/usr/bin/chromedriver"), options=o)


def click_frame(d, rect):
    """A real click at the middle of a flame graph frame (rect from pcollectReport)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    canvas = d.find_element(By.ID, "flame")
    size = canvas.size
    # Selenium 4 offsets are from the element's centre.
    ActionChains(d).move_to_element_with_offset(
        canvas, int(rect["x"] + rect["w"] / 2 - size["width"] / 2),
        int(rect["y"] + rect["h"] / 2 - size["height"] / 2)).click().perform()
