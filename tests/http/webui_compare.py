"""The web UI's trial comparison, checked in the browser test's session: a
study with a log-scaled parameter, learning curves, one trial stopped by
the median rule and one with a single measurement; every trial's curve on
one chart, parameter importance bars, STOPPED EARLY with its reason, log
axes with ticks, and a one-point curve drawn."""
import json
import math
import os
import re

import webui

CURVED = 30  # Trials with a 4-step curve, then completed.


def loss_of(trial):
    p = {q["parameterId"]: q["value"] for q in trial["parameters"]}
    return (math.log10(p["lr"]) + 3) ** 2 + 0.01 * p["dropout"]


def measure(server, trial, step, value):
    return server.ok("POST", trial["name"] + ":addMeasurement", {
        "measurement": {"stepCount": step,
                        "metrics": [{"metricId": "loss", "value": value}]}})


def make_study(server):
    """Returns (study name, trials, the stopped trial, the one-point one)."""
    study = server.ok("POST", "studies", {"study": {
        "displayName": "compare", "spec": {
            "parameters": [
                {"parameterId": "lr", "type": "DOUBLE", "minValue": 1e-5,
                 "maxValue": 1, "scaleType": "UNIT_LOG_SCALE"},
                {"parameterId": "dropout", "type": "DOUBLE", "minValue": 0,
                 "maxValue": 0.5}],
            "metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
            "earlyStopping": {"median": {"minSteps": 1,
                                         "minCompletedTrials": 2}},
            "algorithm": "RANDOM_SEARCH", "seed": "11"}}})
    trials = server.ok("POST", study["name"] + "/trials:suggest",
                       {"suggestionCount": CURVED + 2})["trials"]
    # Every curve before any trial completes: the rule judges none of them.
    for t in trials[:CURVED]:
        for step in range(1, 5):
            measure(server, t, step, loss_of(t) * (1 + 1.0 / step))
    for t in trials[:CURVED]:
        server.ok("POST", t["name"] + ":complete", {"finalMeasurement": {
            "stepCount": 5, "metrics": [{"metricId": "loss",
                                         "value": loss_of(t)}]}})
    stopped, single = trials[CURVED], trials[CURVED + 1]
    judged = measure(server, stopped, 1, 12.0)
    assert judged["state"] == "STOPPING", judged
    server.ok("POST", stopped["name"] + ":complete", {})
    judged = measure(server, single, 1, 0.0)
    assert judged["state"] == "ACTIVE", judged
    return study["name"], trials, stopped, single


def chart(driver, canvas_id, expr):
    return driver.execute_script(
        "const c = Chart.getChart(document.getElementById(arguments[0]));"
        "return c ? " + expr + " : null;", canvas_id)


def check_curves(driver, trials, stopped):
    drawn = webui.wait(driver, "every trial's curve", lambda d: chart(
        d, "all-curves", "c.data.datasets.map((s) => [s.label, s.borderWidth,"
        " s.borderDash.length, s.pointStyle])"))
    webui.check(len(drawn) == len(trials),
                "one chart draws a line per trial with measurements (%d)"
                % len(drawn))
    best = min(trials[:CURVED], key=loss_of)
    thick = [s[0] for s in drawn if s[1] == 3]
    webui.check(thick == ["trial " + best["id"]],
                "the best trial (%s) is the one highlighted" % best["id"])
    dashed = [s[0] for s in drawn if s[2] and s[3] == "crossRot"]
    webui.check(dashed == ["trial " + stopped["id"]],
                "the early-stopped trial is dashed and marked: %s" % dashed)


def check_importance(driver):
    bars = webui.wait(driver, "the importance bars", lambda d: chart(
        d, "importance", "[c.data.labels, c.data.datasets[0].data]"))
    labels, values = bars
    webui.check(labels == ["lr", "dropout"] and values[0] > 0.8 and values[1] < 0.2,
                "importance bars, one per parameter, lr first: %s" % bars)


def check_table(driver, stopped):
    cells = webui.wait(driver, "the stopped trial's row", lambda d: d.execute_script(
        "const a = document.querySelector('#trials a[href$=\"/trials/' + arguments[0] + '\"]');"
        "return a ? [...a.closest('tr').cells].map((c) => c.textContent) : null;",
        stopped["id"]))
    webui.check(cells[1] == "STOPPED EARLY" and "median rule" in " ".join(cells),
                "the table shows STOPPED EARLY with the rule's reason: %s"
                % cells[:2])


def check_log_axes(driver):
    axes = {a["name"]: a for a in json.loads(driver.execute_script(
        "return document.getElementById('parallel').dataset.axes;"))}
    lr = axes["lr"]
    values = [float(t[0]) for t in lr["ticks"]]
    ys = [t[1] for t in lr["ticks"]]
    steps = [b - a for a, b in zip(ys, ys[1:])]
    webui.check(lr["scale"] == "log" and len(values) >= 2 and all(
        abs(math.log10(v) - round(math.log10(v))) < 1e-9 for v in values)
        and max(steps) - min(steps) < 1.0,
        "parallel coordinates: lr on a log axis, decades evenly spaced: %s"
        % lr["ticks"])
    webui.check(axes["dropout"]["scale"] == "linear",
                "parallel coordinates: dropout stays linear")
    xscale, xticks = driver.execute_script(
        "const c = document.querySelector('canvas.slice');"
        "return [c.dataset.xscale, JSON.parse(c.dataset.xticks)];")
    webui.check(xscale == "log" and all(
        abs(math.log10(float(v)) - round(math.log10(float(v)))) < 1e-9
        for v in xticks), "the lr slice has a log x axis: %s" % xticks)


def check_trial_pages(driver, server, study, stopped, single, shots):
    driver.get(server.base + "/" + stopped["name"])
    state = webui.wait(driver, "the stopped trial's state", lambda d: d.find_element(
        "id", "trial-state").text)
    reason = driver.find_element("id", "early-stop").text
    webui.check(state == "STOPPED EARLY" and "median rule" in reason,
                "the trial page says STOPPED EARLY: %r" % reason)
    if shots:
        driver.save_screenshot(os.path.join(shots, "webui-trial.png"))
    driver.get(server.base + "/" + single["name"])
    webui.wait(driver, "the one-point curve", lambda d: d.execute_script(
        "return document.getElementById('curves').dataset.points;") == "1")
    canvas = driver.find_element("id", "curves")
    blue = driver.execute_script(webui.COLOR_PIXELS_JS, canvas, 40, 31, 119, 180)
    webui.check(blue >= 20, "a one-point learning curve is drawn as a point "
                "(%d pixels)" % blue)


def check_importance_errors(server, study):
    status, body = server.rest(
        "GET", study + "/parameterImportance?metric_id=" + "<b>" * 2000)
    message = body["error"]["message"]
    webui.check(status == 400 and message.startswith('metric_id "<b><b>')
                and "(loss)" in message and len(json.dumps(body)) < 1024,
                "an unknown metric_id gets 400 naming it, short: %s" % message[:60])
    status, body = server.rest("GET", "studies/999/parameterImportance")
    webui.check(status == 404, "importance of a missing study: 404")
    status, body = server.rest("GET", study + "/parameterImportance", token="")
    webui.check(status == 401, "importance without a token: 401")


def check_importance_minimum(driver, server):
    """The page's minimum for importance is the one cairnd's REST refusal
    names (tuner's kMinImportanceTrials, served in /static/limits.js)."""
    study = server.ok("POST", "studies", {"study": {
        "displayName": "few", "spec": {
            "parameters": [{"parameterId": "lr", "type": "DOUBLE",
                            "minValue": 0, "maxValue": 1}],
            "metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
            "algorithm": "RANDOM_SEARCH"}}})["name"]
    status, body = server.rest("GET", study + "/parameterImportance")
    found = re.search(r"needs at least (\d+) SUCCEEDED", body["error"]["message"])
    webui.check(status == 400 and found is not None,
                "importance with no trials is refused, naming the minimum: %s"
                % body["error"]["message"][:80])
    driver.get(server.base + "/" + study)
    want = "shown from %s succeeded trials on" % found.group(1)
    note = webui.wait(driver, "the importance note", lambda d: d.execute_script(
        "const n = document.getElementById('importance-note');"
        "return n && n.textContent === arguments[0] ? n.textContent : null;",
        want))
    webui.check(note == want, "the page shows cairnd's minimum: %r" % note)


def check(driver, server, shots):
    """Every check above, on a study of its own."""
    study, trials, stopped, single = make_study(server)
    check_importance_errors(server, study)
    check_importance_minimum(driver, server)
    driver.get(server.base + "/" + study)
    check_curves(driver, trials, stopped)
    check_importance(driver)
    check_table(driver, stopped)
    check_log_axes(driver)
    if shots:  # The whole page, table included.
        driver.set_window_size(1280, 2300)
        driver.execute_script("return new Promise((r) => requestAnimationFrame(r));")
        driver.save_screenshot(os.path.join(shots, "webui-study.png"))
        driver.set_window_size(1280, 1000)
    check_trial_pages(driver, server, study, stopped, single, shots)
