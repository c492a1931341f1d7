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
import webui_compare  # noqa: E402
import webui_jobs  # noqa: E402

COMPLETED = 20
ACTIVE = 3

FETCH_JS = """
const [method, path, token, done] = arguments;
const headers = token ? {'Authorization': 'Bearer ' + token} : {};
fetch(path, {method, headers, body: method === 'GET' ? undefined : '{}'})
  .then((r) => done(r.status), (e) => done(String(e)));"""


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





def check_study_page(driver, server):
    driver.get(server.base + "/studies/1")
    webui.wait(driver, "every trial in the table",
         lambda d: rows(d) == COMPLETED + ACTIVE)
    webui.check(rows(driver) == COMPLETED + ACTIVE,
          "the trials table has one <tbody> row per trial (%d)" % rows(driver))
    webui.wait(driver, "the history chart", lambda d: points(d, "history") >= 0)
    webui.check(points(driver, "history") == COMPLETED,
          "the optimization history drew %d points" % COMPLETED)
    webui.check(points(driver, "parallel") == COMPLETED,
          "parallel coordinates drew %d lines" % COMPLETED)
    slices = driver.execute_script(
        "return [...document.querySelectorAll('canvas.slice')]"
        ".map((c) => +c.dataset.points);")
    webui.check(slices == [COMPLETED] * 3, "three slice plots of %d points" % COMPLETED)
    front = int(driver.execute_script(
        "return document.getElementById('pareto').dataset.front;"))
    webui.check(points(driver, "pareto") == COMPLETED + front and front >= 1,
          "the Pareto front of two objectives drew (%d on the front)" % front)
    for cid in ["history", "parallel", "pareto"]:
        canvas = driver.find_element("id", cid)
        webui.check(driver.execute_script(webui.NONBLANK_JS, canvas) > 500,
              "canvas #%s is not blank" % cid)
    # Sorting by loss puts the smallest first.
    driver.execute_script(
        "document.querySelector('#trials th[data-key=\"m:loss\"]').click();")
    first = float(driver.execute_script(
        "return document.getElementById('trials').tBodies[0].rows[0]"
        ".cells[2].textContent;"))
    best = min(complete_loss for complete_loss in LOSSES)
    webui.check(abs(first - best) < 1e-3 * max(1, abs(best)),
          "sorting by loss puts the best trial (%.4g) first" % best)
    # A new trial appears without a reload.
    driver.execute_script("window.cairnNoReload = 1;")
    server.ok("POST", "studies/1/trials:suggest", {"suggestionCount": 1})
    webui.wait(driver, "the new trial's row",
         lambda d: rows(d) == COMPLETED + ACTIVE + 1)
    webui.check(driver.execute_script("return window.cairnNoReload;") == 1,
          "a new trial appeared in the table without a reload")


def check_trial_page(driver, server):
    driver.get(server.base + "/studies/1/trials/%d" % (COMPLETED + 1))
    webui.wait(driver, "the learning curve", lambda d: points(d, "curves") >= 0)
    webui.check(points(driver, "curves") == 5, "the learning curve drew 5 points")
    webui.check(driver.execute_script(webui.NONBLANK_JS,
                                driver.find_element("id", "curves")) > 500,
          "the learning-curve canvas is not blank")
    params = driver.execute_script(
        "return document.getElementById('params').tBodies[0].rows.length;")
    webui.check(params == 3, "the trial page lists its 3 parameters")


def check_console(driver):
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    webui.check(not errors, "no errors in the browser console %s" % errors)


def check_viewer(driver, server, viewer):
    driver.get(server.base + "/login?token=" + viewer)
    webui.wait(driver, "the studies list as viewer",
         lambda d: d.execute_script(
             "return document.querySelectorAll('#studies tbody tr').length;") == 1)
    webui.check(driver.execute_script("return location.search;") == "",
          "/login?token= logs in and drops the token from the address bar")
    for method, path in [("POST", "/v1/studies"),
                         ("DELETE", "/v1/studies/1"),
                         ("POST", "/v1/studies/1/trials/1:stop"),
                         ("POST", "/v1/studies/1/trials:suggest")]:
        status = driver.execute_async_script(FETCH_JS, method, path, viewer)
        webui.check(status == 403, "viewer: %s %s -> 403 (got %s)" % (method, path, status))
    status = driver.execute_async_script(FETCH_JS, "GET", "/v1/studies/1", "")
    webui.check(status == 401, "no token: GET /v1/studies/1 -> 401 (got %s)" % status)
    status = driver.execute_async_script(FETCH_JS, "GET", "/v1/studies/1", viewer)
    webui.check(status == 200, "viewer: GET /v1/studies/1 -> 200")


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
        webui.wait(driver, what, ready)
        time.sleep(0.5)  # A broken image's onerror would have run by now.
        ran = driver.execute_script("return window.__xss;")
        webui.check(ran is None, "%s: no markup from the data ran (got %r)" % (path, ran))
        injected = driver.execute_script(
            "return document.querySelectorAll('#main img, #main b').length;")
        webui.check(injected == 0, "%s: no element made from the data" % path)
    text = driver.execute_script("return document.body.textContent;")
    webui.check("<img src=y onerror=window.__xss=2>" in text or "<b>sgd</b>" in text,
          "the trial page shows the categorical value as text")


def path_now(driver):
    return driver.execute_script("return location.pathname + location.search;")


def check_deep_links(driver, server):
    """A study or trial URL opened without a session goes to login and,
    once logged in, back to that URL; a `next` off this site goes to /."""
    trial = "/studies/1/trials/3"
    driver.execute_script("sessionStorage.clear();")
    driver.get(server.base + trial)
    webui.wait(driver, "the login form", lambda d: d.find_elements("id", "token"))
    webui.check(path_now(driver) == "/login?next=%2Fstudies%2F1%2Ftrials%2F3",
                "a trial URL without a session goes to login: %s" % path_now(driver))
    driver.find_element("id", "token").send_keys(server.token)
    driver.find_element("css selector", "form.login button").click()
    webui.wait(driver, "the trial page after login", lambda d: d.execute_script(
        "const t = document.getElementById('params');"
        "return t ? t.tBodies[0].rows.length : 0;") == 3)
    webui.check(path_now(driver) == trial, "logging in returns to %s" % trial)
    for next_param, landing in [("%2Fstudies%2F1", "/studies/1"),
                                ("//example.com/x", "/"),
                                ("https://example.com/", "/"),
                                ("/%5Cexample.com", "/"),
                                ("javascript:alert(1)", "/")]:
        driver.execute_script("sessionStorage.clear();")
        driver.get("%s/login?token=%s&next=%s" % (server.base, server.token, next_param))
        webui.wait(driver, "the page after a token link",
                   lambda d: d.find_elements("css selector", "main h1"))
        webui.check(path_now(driver) == landing and
                    server.base.startswith(driver.execute_script("return location.origin;")),
                    "a token link with next=%s lands on %s" % (next_param, landing))


LOSSES = []


def check_csv(server, trials):
    """?format=csv: the same CSV as `cairn trial list --csv`, every trial."""
    status, body = server.rest("GET", "studies/1/trials?format=csv")
    webui.check(status == 200, "GET studies/1/trials?format=csv -> 200 (got %s)" % status)
    lines = body.split("\r\n")[:-1]
    webui.check(lines[0] == "id,state,x,y,opt,loss,acc,infeasible_reason",
          "CSV header names the parameters and metrics: %r" % lines[0])
    webui.check(len(lines) == len(trials) + 1,
          "CSV has one row per trial (%d rows)" % (len(lines) - 1))
    first = lines[1].split(",")
    loss, _ = webui.values(trials[0])
    webui.check(first[:2] == ["1", "SUCCEEDED"] and abs(float(first[5]) - loss) < 1e-9,
          "CSV row 1 carries its state and final loss: %r" % lines[1])
    # text=True reads the CLI's "\r\n" line ends as "\n".
    cli = server.cli("trial", "list", "studies/1", "--csv").split("\n")
    webui.check(cli == lines, "the CLI's --csv is the same CSV")


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
        webui.wait(driver, "the studies list",
             lambda d: d.find_element("css selector", "#studies a").text == "studies/1")
        webui.check(True, "logged in with a token; the studies list shows studies/1")
        webui.wait(driver, "the best value",
             lambda d: d.find_element("id", "best-1").text.startswith("loss"))
        if args.screenshots:
            driver.save_screenshot(os.path.join(args.screenshots, "webui-studies.png"))
        check_study_page(driver, server)
        check_trial_page(driver, server)
        check_console(driver)
        check_viewer(driver, server, viewer)
        check_hostile_text(driver, server)
        driver.get_log("browser")  # check_viewer's refusals were expected.
        check_deep_links(driver, server)
        webui_compare.check(driver, server, args.screenshots)
        webui_jobs.check(driver, server, args.screenshots)
        check_console(driver)
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
