"""AI Platform Training's REST surface on a real cairnd, driven by Google's
own client (Debian's python3-googleapi): discovery.build() from cairnd's
discovery document, then projects.jobs create / get / list / cancel with
bearer tokens, as TFX and ZenML's AI Platform backend call them.

Run by ctest (http_aiplatform_rest_test) with /usr/bin/python3 through
tests/testing/run_pytest.py; skipped when python3-googleapi or
python3-google-auth-httplib2 is missing."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from googleapi import ROOT, errors, ml, server  # noqa: E402,F401

PARENT = "projects/my-project"
FINAL = ("SUCCEEDED", "FAILED", "CANCELLED")


@pytest.fixture(scope="module")
def sdist():
    """examples/aiplatform/trainer as a source package, built with
    setup.py sdist, in a dir the job user can read."""
    work = tempfile.mkdtemp(prefix="cairn-aip-sdist-")
    os.chmod(work, 0o755)
    shutil.copytree(os.path.join(ROOT, "examples", "aiplatform", "trainer"),
                    os.path.join(work, "trainer"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    with open(os.path.join(work, "setup.py"), "w") as f:
        f.write("from setuptools import setup\n"
                "setup(name='trainer', version='0.1', packages=['trainer'])\n")
    subprocess.run(["/usr/bin/python3", "setup.py", "-q", "sdist",
                    "--dist-dir", "dist"], cwd=work, check=True,
                   capture_output=True)
    path = os.path.join(work, "dist", "trainer-0.1.tar.gz")
    os.chmod(path, 0o644)
    yield path
    shutil.rmtree(work, ignore_errors=True)


def job_body(job_id, package, args):
    return {"jobId": job_id, "labels": {"team": "cv"},
            "trainingInput": {"scaleTier": "BASIC", "region": "us-central1",
                              "pythonModule": "trainer.task",
                              "packageUris": [package], "args": args}}


def wait_for(jobs, name, states, timeout=90):
    deadline = time.time() + timeout
    while True:
        job = jobs.get(name=name).execute()
        if job["state"] in states or time.time() > deadline:
            return job
        time.sleep(0.3)


def http_error(call):
    """The HttpError of `call`: (HTTP status, its JSON error, raw size)."""
    with pytest.raises(errors.HttpError) as e:
        call.execute()
    return e.value.resp.status, json.loads(e.value.content)["error"], \
        len(e.value.content)


def test_discovery_document_names_the_server(server):
    for path in ("/discovery/v1/apis/ml/v1/rest", "/$discovery/rest?version=v1"):
        # No token: the document holds no data.
        with urllib.request.urlopen(server.base + path, timeout=30) as r:
            doc = json.loads(r.read())
        assert doc["rootUrl"] == server.base + "/"
        assert doc["servicePath"] == ""
        methods = doc["resources"]["projects"]["resources"]["jobs"]["methods"]
        assert sorted(methods) == ["cancel", "create", "get", "list"]
        for m in methods.values():
            for ref in (m.get("request", {}).get("$ref"), m["response"]["$ref"]):
                assert ref is None or ref in doc["schemas"], ref


def test_submit_poll_list_and_cancel(server, sdist):
    jobs = ml(server, server.token).projects().jobs()
    job = jobs.create(parent=PARENT, body=job_body(
        "rest_job_1", "file://" + sdist, ["--steps", "2"])).execute()
    assert job["jobId"] == "rest_job_1"
    assert job["labels"] == {"team": "cv", "aiplatform_project": "my-project"}
    assert job["trainingInput"]["pythonModule"] == "trainer.task"
    assert job["state"] == "QUEUED"
    done = wait_for(jobs, PARENT + "/jobs/rest_job_1", FINAL)
    assert done["state"] == "SUCCEEDED", done
    assert done["createTime"] and done["endTime"]

    # A plain path works as well as a file:// URI; this one runs long.
    jobs.create(parent=PARENT, body=job_body(
        "rest_job_2", sdist, ["--steps", "600", "--sleep", "0.1"])).execute()
    wait_for(jobs, PARENT + "/jobs/rest_job_2", ("RUNNING",) + FINAL)
    assert jobs.cancel(name=PARENT + "/jobs/rest_job_2", body={}).execute() == {}
    cancelled = wait_for(jobs, PARENT + "/jobs/rest_job_2", ("CANCELLED",))
    assert cancelled["state"] == "CANCELLED", cancelled

    listed = jobs.list(parent=PARENT).execute()["jobs"]
    assert [j["jobId"] for j in listed] == ["rest_job_1", "rest_job_2"]
    succeeded = jobs.list(parent=PARENT, filter="state=SUCCEEDED").execute()
    assert [j["jobId"] for j in succeeded["jobs"]] == ["rest_job_1"]
    # The filters AI Platform documents: a jobId prefix, ANDed terms, labels.
    def ids(filter_text):
        page = jobs.list(parent=PARENT, filter=filter_text).execute()
        return [j["jobId"] for j in page.get("jobs", [])]
    assert ids("jobId:rest_job*") == ["rest_job_1", "rest_job_2"]
    assert ids("jobId:rest_job* AND state:CANCELLED") == ["rest_job_2"]
    assert ids("labels.team=cv AND jobId=rest_job_1") == ["rest_job_1"]
    assert ids("jobId:census*") == []
    status, error, _ = http_error(jobs.list(parent=PARENT, filter="jobId:x OR state:FAILED"))
    assert status == 400 and "filter" in error["message"], error
    # Pages, followed with the client's own list_next.
    request = jobs.list(parent=PARENT, pageSize=1)
    pages = []
    while request is not None:
        page = request.execute()
        pages.append([j["jobId"] for j in page.get("jobs", [])])
        request = jobs.list_next(request, page)
    assert pages == [["rest_job_1"], ["rest_job_2"]], pages

    # Audited like every other change.
    audit = server.cli("audit", "list", "--json")
    assert "SubmitTrainingJob" in audit and "CancelJob" in audit


def test_viewer_reads_but_cannot_submit(server, sdist):
    viewer = server.cli("token", "create", "--name", "aip-viewer",
                        "--role", "viewer")
    jobs = ml(server, viewer,
              server.base + "/$discovery/rest?version={apiVersion}"
              ).projects().jobs()
    status, error, _ = http_error(jobs.create(parent=PARENT, body=job_body(
        "viewer_job", sdist, [])))
    assert status == 403 and error["status"] == "PERMISSION_DENIED", error
    # Reads are allowed (the jobs of the test above).
    listed = jobs.list(parent=PARENT).execute()["jobs"]
    assert "rest_job_1" in [j["jobId"] for j in listed]
    status, error, _ = http_error(jobs.cancel(name=PARENT + "/jobs/x", body={}))
    assert status == 403, error


def test_errors_in_googles_shape(server, sdist):
    jobs = ml(server, server.token).projects().jobs()
    bad = job_body("bad_tier", sdist, [])
    bad["trainingInput"]["scaleTier"] = "HUGE"
    status, error, size = http_error(jobs.create(parent=PARENT, body=bad))
    assert status == 400 and error["code"] == 400, error
    assert error["status"] == "INVALID_ARGUMENT"
    assert "scaleTier" in error["message"] and "HUGE" in error["message"]
    assert size < 1024

    gcs = job_body("gcs_job", "gs://bucket/trainer-0.1.tar.gz", [])
    status, error, size = http_error(jobs.create(parent=PARENT, body=gcs))
    assert status == 400, error
    assert "packageUris[0]" in error["message"]
    assert "gs://bucket/trainer-0.1.tar.gz" in error["message"]
    assert size < 1024

    status, error, _ = http_error(jobs.create(parent=PARENT, body=job_body(
        "1bad", sdist, [])))
    assert status == 400 and "1bad" in error["message"], error

    status, error, _ = http_error(jobs.get(name=PARENT + "/jobs/no_such_job"))
    assert status == 404 and error["code"] == 404, error
    assert error["status"] == "NOT_FOUND" and "no_such_job" in error["message"]

    # No token: 401, in the same shape.
    status, out = server.rest("GET", "projects/p/jobs", token="")
    assert status == 401 and out["error"]["status"] == "UNAUTHENTICATED"
