#!/usr/bin/python3
"""Drives the inspector's page in headless Chromium (Selenium + chromedriver) and prints what it saw.

Usage: inspect-browser-check.py URL FIRST_VERSION LIVE_VERSION ACTION_SEQ TRAVEL_VERSION SCREENSHOT

1. opens URL and waits (bounded) until the page shows FIRST_VERSION, then prints {"ready": ...}
   (the test then sends more actions) and waits until the live state reaches LIVE_VERSION through
   the page's server-sent events, without reloading;
2. opens action ACTION_SEQ in the action log and reads its mutations, jobs and diff;
3. moves time travel to TRAVEL_VERSION and reads the state shown;
4. waits until both charts are drawn, and saves a screenshot at SCREENSHOT.

Each wait is bounded (30 s); on a timeout it prints what the page showed and exits 1. The last
stdout line is one JSON object with everything read, for the test to check exactly.
"""
import json
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

url, first_version, live_version, action_seq, travel_version, screenshot = sys.argv[1:7]

options = webdriver.ChromeOptions()
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,1100",
                 "--no-first-run", "--disable-extensions", "--proxy-server=direct://", "--proxy-bypass-list=*"]:
    options.add_argument(argument)
options.binary_location = "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
driver.set_page_load_timeout(30)


def text(selector):
    # Read in the page's own JavaScript, in one go: the page redraws on every update, so an
    # element found by one call may be gone by the next.
    return driver.execute_script("const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", selector)


def attribute(selector, name):
    return driver.execute_script("const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;", selector, name)


def leaves(container):
    return driver.execute_script(
        "const out = {}; for (const leaf of document.querySelectorAll(arguments[0] + ' .leaf')) out[leaf.dataset.path] = leaf.textContent; return out;",
        container)


def wait(what, condition):
    try:
        WebDriverWait(driver, 30, poll_frequency=0.1).until(lambda _: condition())
    except TimeoutException:
        print(json.dumps({"timeout": what, "live_version": text("#live-version"), "detail": text("#action-detail"),
                          "travel": text("#tt-info")}), flush=True)
        driver.save_screenshot(screenshot)
        driver.quit()
        sys.exit(1)


try:
    driver.get(url)
    wait("the first live version", lambda: text("#live-version") == first_version and attribute("#live-state", "data-version") == first_version)
    print(json.dumps({"ready": first_version}), flush=True)
    wait("the live version after more actions", lambda: text("#live-version") == live_version
         and attribute("#live-state", "data-version") == live_version)
    live = {"version": text("#live-version"), "action_seq": text("#live-action-seq"), "leaves": leaves("#live-state"),
            "workers": text("#workers")}

    row = '#actions tr.action[data-seq="%s"]' % action_seq
    wait("action %s in the log" % action_seq, lambda: text(row) is not None)
    driver.execute_script("document.querySelector(arguments[0]).click();", row)
    wait("the action's detail", lambda: (text("#action-detail .title") or "").startswith("action #%s" % action_seq))
    detail = driver.execute_script("""
        const all = (root, selector) => [...root.querySelectorAll(selector)];
        return {
          title: document.querySelector("#action-detail .title").textContent,
          sync: all(document, "#detail-sync .mutation").map((e) => e.textContent),
          jobs: all(document, "#detail-jobs .job").map((job) => ({job: job.dataset.job, summary: job.querySelector("div").textContent,
                                                             mutations: all(job, ".mutation").map((e) => e.textContent)})),
          diff: all(document, "#detail-diff .diff-row").map((row) => ({path: row.dataset.path, before: row.querySelector(".before").textContent,
                                                                    after: row.querySelector(".after").textContent})),
        };""")

    box = driver.find_element(By.ID, "tt-version")
    box.clear()
    box.send_keys(travel_version)
    driver.find_element(By.ID, "tt-go").click()
    wait("time travel to %s" % travel_version, lambda: attribute("#tt-state", "data-version") == travel_version)
    travel = {"info": text("#tt-info"), "leaves": leaves("#tt-state")}

    def charts():
        return {name: driver.execute_script("return document.querySelectorAll(arguments[0]).length;", "#%s path" % name)
                for name in ["chart-applied", "chart-latency"]}

    # The charts follow the stats polls, which may come a moment after the state.
    wait("both charts drawn", lambda: all(count > 0 for count in charts().values()))
    driver.save_screenshot(screenshot)
    print(json.dumps({"live": live, "detail": detail, "travel": travel, "charts": charts(), "screenshot": screenshot}), flush=True)
finally:
    driver.quit()
