#!/usr/bin/python3
"""The web UI in a real browser (headless chromium + chromedriver) against a
real cairnd: log in with a token, open a study, check the charts drew the
right number of points on non-blank canvases, the table has every trial, a
new trial appears without a reload, no browser console errors, and a viewer
token cannot reach write endpoints. One browser session for every check.

Usage: web_ui_browser_test.py --bin BUILD/bin [--screenshots DIR]
Exits 77 (skipped) without chromium, chromium-driver or python3-selenium."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webui  # noqa: E402

COMPLETED = 20
ACTIVE = 3

NONBLANK_JS = """
const c = arguments[0];
const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
let n = 0;
for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
return n;"""

FETCH_JS = """
const [method, path, token, done] = arguments;
const headers = token ? {'Authorization': 'Bearer ' + token} : {};
fetch(path, {method, headers, body: method === 'GET' ? undefined : '{}'})
  .then((r) => done(r.status), (e) => done(String(e)));"""


def wait(driver, what, predicate, timeout=15):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = predicate(driver)
            if last:
                return last
        except Exception as e:  # element not there yet
            last = e
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print("ok:", message)


def rows(driver):
    return driver.execute_script(
        "const t = document.getElementById('trials');"
        "return t ? t.tBodies[0].rows.length : -1;")


def points(driver, element_id):
    return int(driver.execute_script(
        "const c = document.getElementById(arguments[0]);"
        "return c && c.dataset.points ? c.dataset.points : '-1';", element_id))


def make_study(server):
    server.ok("POST", "studies", webui.study_spec("browser-test"))
    trials = server.ok("POST", "studies/1/trials:suggest",
                       {"suggestionCount": COMPLETED + ACTIVE})["trials"]
    for t in trials[:COMPLETED]:
        webui.complete(server, t)
    for step in range(1, 6):  # A learning curve on trial 21 (still active).
        server.ok("POST", trials[COMPLETED]["name"] + ":addMeasurement",
                  {"measurement": {"stepCount": step, "metrics": [
                      {"metricId": "loss", "value": 5.0 / step}]}})
    return trials





def check_study_page(driver, server, shots):
    driver.get(server.base + "/studies/1")
    wait(driver, "every trial in the table",
         lambda d: rows(d) == COMPLETED + ACTIVE)
    check(rows(driver) == COMPLETED + ACTIVE,
          "the trials table has one <tbody> row per trial (%d)" % rows(driver))
    wait(driver, "the history chart", lambda d: points(d, "history") >= 0)
    check(points(driver, "history") == COMPLETED,
          "the optimization history drew %d points" % COMPLETED)
    check(points(driver, "parallel") == COMPLETED,
          "parallel coordinates drew %d lines" % COMPLETED)
    slices = driver.execute_script(
        "return [...document.querySelectorAll('canvas.slice')]"
        ".map((c) => +c.dataset.points);")
    check(slices == [COMPLETED] * 3, "three slice plots of %d points" % COMPLETED)
    front = int(driver.execute_script(
        "return document.getElementById('pareto').dataset.front;"))
    check(points(driver, "pareto") == COMPLETED + front and front >= 1,
          "the Pareto front of two objectives drew (%d on the front)" % front)
    for cid in ["history", "parallel", "pareto"]:
        canvas = driver.find_element("id", cid)
        check(driver.execute_script(NONBLANK_JS, canvas) > 500,
              "canvas #%s is not blank" % cid)
    if shots:  # The whole page, table included.
        driver.set_window_size(1280, 1900)
        time.sleep(0.5)
        driver.save_screenshot(os.path.join(shots, "webui-study.png"))
        driver.set_window_size(1280, 1000)
    # Sorting by loss puts the smallest first.
    driver.execute_script(
        "document.querySelector('#trials th[data-key=\"m:loss\"]').click();")
    first = float(driver.execute_script(
        "return document.getElementById('trials').tBodies[0].rows[0]"
        ".cells[2].textContent;"))
    best = min(complete_loss for complete_loss in LOSSES)
    check(abs(first - best) < 1e-3 * max(1, abs(best)),
          "sorting by loss puts the best trial (%.4g) first" % best)
    # A new trial appears without a reload.
    driver.execute_script("window.cairnNoReload = 1;")
    server.ok("POST", "studies/1/trials:suggest", {"suggestionCount": 1})
    wait(driver, "the new trial's row",
         lambda d: rows(d) == COMPLETED + ACTIVE + 1)
    check(driver.execute_script("return window.cairnNoReload;") == 1,
          "a new trial appeared in the table without a reload")


def check_trial_page(driver, server, shots):
    driver.get(server.base + "/studies/1/trials/%d" % (COMPLETED + 1))
    wait(driver, "the learning curve", lambda d: points(d, "curves") >= 0)
    check(points(driver, "curves") == 5, "the learning curve drew 5 points")
    check(driver.execute_script(NONBLANK_JS,
                                driver.find_element("id", "curves")) > 500,
          "the learning-curve canvas is not blank")
    params = driver.execute_script(
        "return document.getElementById('params').tBodies[0].rows.length;")
    check(params == 3, "the trial page lists its 3 parameters")
    if shots:
        driver.save_screenshot(os.path.join(shots, "webui-trial.png"))


def check_console(driver):
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    check(not errors, "no errors in the browser console %s" % errors)


def check_viewer(driver, server, viewer):
    driver.get(server.base + "/login?token=" + viewer)
    wait(driver, "the studies list as viewer",
         lambda d: d.execute_script(
             "return document.querySelectorAll('#studies tbody tr').length;") == 1)
    check(driver.execute_script("return location.search;") == "",
          "/login?token= logs in and drops the token from the address bar")
    for method, path in [("POST", "/v1/studies"),
                         ("DELETE", "/v1/studies/1"),
                         ("POST", "/v1/studies/1/trials/1:stop"),
                         ("POST", "/v1/studies/1/trials:suggest")]:
        status = driver.execute_async_script(FETCH_JS, method, path, viewer)
        check(status == 403, "viewer: %s %s -> 403 (got %s)" % (method, path, status))
    status = driver.execute_async_script(FETCH_JS, "GET", "/v1/studies/1", "")
    check(status == 401, "no token: GET /v1/studies/1 -> 401 (got %s)" % status)
    status = driver.execute_async_script(FETCH_JS, "GET", "/v1/studies/1", viewer)
    check(status == 200, "viewer: GET /v1/studies/1 -> 200")


HOSTILE = '<img src=x onerror="window.__xss=1">'


def check_hostile_text(driver, server):
    """What users typed (names, values, reasons) shows as text, never runs."""
    spec = webui.study_spec(HOSTILE)
    spec["study"]["spec"]["parameters"][2]["categoricalValues"] = [
        "<b>sgd</b>", "<img src=y onerror=window.__xss=2>"]
    study = server.ok("POST", "studies", spec)
    trials = server.ok("POST", study["name"] + "/trials:suggest",
                       {"suggestionCount": 2})["trials"]
    server.ok("POST", trials[0]["name"] + ":complete", {
        "trialInfeasible": True,
        "infeasibleReason": "<img src=z onerror=window.__xss=3>"})
    driver.get(server.base + "/login?token=" + server.token)
    pages = [("/", "the studies list", lambda d: d.execute_script(
                  "return document.querySelectorAll('#studies tbody tr')"
                  ".length;") == 2),
             ("/" + study["name"], "the study's trials",
              lambda d: rows(d) == 2),
             ("/" + trials[0]["name"], "the infeasible trial",
              lambda d: "INFEASIBLE" in d.find_element("tag name", "h1").text),
             ("/" + trials[1]["name"], "the active trial",
              lambda d: d.execute_script(
                  "const t = document.getElementById('params');"
                  "return t ? t.tBodies[0].rows.length : 0;") == 3)]
    for path, what, ready in pages:
        driver.get(server.base + path)
        wait(driver, what, ready)
        time.sleep(0.5)  # A broken image's onerror would have run by now.
        ran = driver.execute_script("return window.__xss;")
        check(ran is None, "%s: no markup from the data ran (got %r)" % (path, ran))
        injected = driver.execute_script(
            "return document.querySelectorAll('#main img, #main b').length;")
        check(injected == 0, "%s: no element made from the data" % path)
    text = driver.execute_script("return document.body.textContent;")
    check("<img src=y onerror=window.__xss=2>" in text or "<b>sgd</b>" in text,
          "the trial page shows the categorical value as text")


LOSSES = []
LOSSES = []


def check_csv(server, trials):
    """?format=csv: the same CSV as `cairn trial list --csv`, every trial."""
    status, body = server.rest("GET", "studies/1/trials?format=csv")
    check(status == 200, "GET studies/1/trials?format=csv -> 200 (got %s)" % status)
    lines = body.split("\r\n")[:-1]
    check(lines[0] == "id,state,x,y,opt,loss,acc,infeasible_reason",
          "CSV header names the parameters and metrics: %r" % lines[0])
    check(len(lines) == len(trials) + 1,
          "CSV has one row per trial (%d rows)" % (len(lines) - 1))
    first = lines[1].split(",")
    loss, _ = webui.values(trials[0])
    check(first[:2] == ["1", "SUCCEEDED"] and abs(float(first[5]) - loss) < 1e-9,
          "CSV row 1 carries its state and final loss: %r" % lines[1])
    # text=True reads the CLI's "\r\n" line ends as "\n".
    cli = server.cli("trial", "list", "studies/1", "--csv").split("\n")
    check(cli == lines, "the CLI's --csv is the same CSV")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="directory of cairnd and cairn")
    parser.add_argument("--screenshots", help="save PNGs of the pages here")
    args = parser.parse_args()
    why = webui.browser_missing()
    if why:
        print("SKIPPED: %s (apt-get install chromium chromium-driver "
              "python3-selenium)" % why)
        return webui.SKIP
    server = webui.Cairnd(args.bin)
    driver = None
    try:
        trials = make_study(server)
        LOSSES.extend(webui.values(t)[0] for t in trials[:COMPLETED])
        check_csv(server, trials)
        viewer = server.cli("token", "create", "--name", "viewer", "--role", "viewer")
        driver = webui.new_browser()
        driver.get(server.base + "/login")
        driver.find_element("id", "token").send_keys(server.token)
        driver.find_element("css selector", "form.login button").click()
        wait(driver, "the studies list",
             lambda d: d.find_element("css selector", "#studies a").text == "studies/1")
        check(True, "logged in with a token; the studies list shows studies/1")
        wait(driver, "the best value",
             lambda d: d.find_element("id", "best-1").text.startswith("loss"))
        if args.screenshots:
            driver.save_screenshot(os.path.join(args.screenshots, "webui-studies.png"))
        check_study_page(driver, server, args.screenshots)
        check_trial_page(driver, server, args.screenshots)
        check_console(driver)
        check_viewer(driver, server, viewer)
        check_hostile_text(driver, server)
        print("PASS")
        return 0
    except Exception:
        print("cairnd log tail:\n" + server.log())
        raise
    finally:
        if driver is not None:
            driver.quit()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
