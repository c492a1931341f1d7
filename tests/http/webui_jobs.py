"""The web UI's jobs page, checked in the browser test's session: a job
submitted with `cairn jobs submit training` is listed with its state
(reached from the navigation), and its page shows its trial and log."""
import os

import webui

JOB_ID = "ui_job_1"
STATES = ("QUEUED", "PREPARING", "RUNNING", "SUCCEEDED")


def job_row(driver):
    return driver.execute_script(
        "const a = [...document.querySelectorAll('#jobs tbody a')]"
        ".find((x) => x.textContent === arguments[0]);"
        "return a ? [...a.closest('tr').cells].map((c) => c.textContent) : null;",
        JOB_ID)


def check_log_errors(server):
    status, body = server.rest("GET", "projects/p/jobs/%s/logs?trialId=x" % JOB_ID)
    webui.check(status == 400 and "trialId" in body["error"]["message"],
                "job logs: a bad trialId gets 400 naming it")
    status, body = server.rest("GET", "projects/p/jobs/no_such_job/logs")
    webui.check(status == 404, "job logs of a missing job: 404 (got %s)" % status)


def check(driver, server, shots):
    server.cli("jobs", "submit", "training", JOB_ID, "--module-name",
               "trainer.task", "--package-path",
               os.path.join(webui.ROOT, "examples", "aiplatform", "trainer"),
               "--", "--steps", "2")
    driver.get(server.base + "/")
    webui.wait(driver, "the studies list", lambda d: d.find_elements(
        "css selector", "#studies tbody tr"))
    driver.find_element("id", "nav-jobs").click()
    row = webui.wait(driver, "the job in the jobs list", job_row)
    webui.check(row[1] in STATES,
                "the jobs page, reached from the navigation, lists %s as %s"
                % (JOB_ID, row[1]))
    row = webui.wait(driver, "the job to succeed",
                     lambda d: (job_row(d) or [0, 0])[1] == "SUCCEEDED" and job_row(d),
                     timeout=60)
    webui.check(row[2] == "1 succeeded",
                "the list shows the job's trials: %r" % row[2])
    if shots:
        driver.save_screenshot(os.path.join(shots, "webui-jobs.png"))
    driver.find_element("link text", JOB_ID).click()
    state = webui.wait(driver, "the job page", lambda d: d.find_element(
        "id", "job-state").text)
    webui.check(state == "SUCCEEDED", "the job page shows its state")
    log = webui.wait(driver, "the job's log", lambda d: "trainer" in d.find_element(
        "id", "job-log").text and d.find_element("id", "job-log").text)
    webui.check("cairn: attempt 1 of trial" in log,
                "the job page shows its trial's log")
    trials = driver.execute_script(
        "return document.getElementById('job-trials').tBodies[0].rows.length;")
    webui.check(trials == 1, "the job page lists its one trial")
    check_log_errors(server)
    if shots:
        driver.save_screenshot(os.path.join(shots, "webui-job.png"))
