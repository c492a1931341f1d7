"""A stop that stops, through boto3 against a real cairnd and real podman
(max 2 running jobs, 2 s grace): StopTrainingJob and
StopHyperParameterTuningJob answer Stopping while the container lives (its
SIGTERM handler saving into /opt/ml/model, then lingering until SIGKILL),
Stopped once `podman ps` no longer lists it; its slot goes to a waiting
job; model.tar.gz holds what it saved and FinalMetricDataList its last
measurements. Skipped without python3-boto3 or when podman cannot run a
container."""
import json
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from boto3_fixture import (  # noqa: E402,F401 (fixtures)
    objects, image, server, keys, client, job, error_of, archive, tuning,
    running_jobs)

# The `server` fixture's cairnd: 2 jobs at once, a 2 s grace.
SERVER_ARGS = ["--max-running-jobs", "2", "--grace-seconds", "2",
               "--gp-suggest-deadline", "0"]
# Long enough that only a stop ends them within the test.
LINGER = {"epochs": "3", "sleep": "300", "term": "linger"}


@pytest.fixture(scope="module")
def sm(server):
    return client(server, *keys(server, "stopper", "editor"))


def study_of(server, display_name):
    status, studies = server.rest("GET", "studies")
    assert status == 200
    [study] = [s["name"] for s in studies["studies"]
               if s["displayName"] == display_name]
    return study


def containers_of(server, display_name):
    """The running containers of the job (or tuning job) `display_name`."""
    study = study_of(server, display_name)
    return [c for c in running_jobs(server) if c[0] == study]


def measured(server, trial):
    """Whether trial `trial` (a resource name) has a measurement."""
    status, t = server.rest("GET", trial)
    return status == 200 and bool(t.get("measurements"))


def status_of(sm, name):
    return sm.describe_training_job(TrainingJobName=name)["TrainingJobStatus"]


def wait_training(sm, name, seconds=60):
    deadline = time.time() + seconds
    while sm.describe_training_job(
            TrainingJobName=name)["SecondaryStatus"] != "Training":
        assert time.time() < deadline, status_of(sm, name)
        time.sleep(0.2)


def test_stop_training_job_ends_its_container_and_frees_its_slot(
        server, sm, objects):
    for name in ("stop-a", "stop-b"):
        sm.create_training_job(**job(name, objects, HyperParameters=LINGER))
        wait_training(sm, name)
    # Both slots taken: this one waits.
    sm.create_training_job(**job("stop-c", objects, HyperParameters=LINGER))
    time.sleep(1)
    assert sm.describe_training_job(
        TrainingJobName="stop-c")["SecondaryStatus"] == "Starting"
    assert len(containers_of(server, "stop-a")) == 1
    deadline = time.time() + 30
    while not measured(server, study_of(server, "stop-a") + "/trials/1"):
        assert time.time() < deadline
        time.sleep(0.2)

    sm.stop_training_job(TrainingJobName="stop-a")
    stopped_at = time.time()
    d = sm.describe_training_job(TrainingJobName="stop-a")
    assert (d["TrainingJobStatus"], d["SecondaryStatus"]) == \
        ("Stopping", "Stopping")
    sm.stop_training_job(TrainingJobName="stop-a")  # again, while Stopping
    seen, lingered = [], False
    while True:
        # Read c first: once it trains, a must have ended before.
        c = sm.describe_training_job(TrainingJobName="stop-c")
        a = status_of(sm, "stop-a")
        if not seen or seen[-1] != a:
            seen.append(a)
        assert c["SecondaryStatus"] == "Starting" or a == "Stopped", (c, a)
        if a == "Stopped":
            break
        # Its SIGTERM handler lingers: the container lives until SIGKILL.
        if time.time() - stopped_at > 1:
            lingered = lingered or bool(containers_of(server, "stop-a"))
        assert time.time() - stopped_at < 30, seen
        time.sleep(0.1)
    assert seen == ["Stopping", "Stopped"], seen
    assert lingered, "the container was gone before the grace ended"
    assert time.time() - stopped_at >= 2, "ended before the 2 s grace"
    assert containers_of(server, "stop-a") == []
    # Its slot went to the waiting job.
    wait_training(sm, "stop-c", 30)

    d = sm.describe_training_job(TrainingJobName="stop-a")
    assert d["SecondaryStatus"] == "Stopped"
    assert [(m["MetricName"], round(m["Value"], 3)) for m in
            d["FinalMetricDataList"]] == [("validation:loss", 0.333)]
    model = archive(objects, "stop-a", "model.tar.gz")
    assert json.loads(model["on_term.json"]) == {"epochs": 3}
    code, message, _ = error_of(sm.stop_training_job, TrainingJobName="stop-a")
    assert code == "ValidationException" and "Stopped" in message

    for name in ("stop-b", "stop-c"):
        sm.stop_training_job(TrainingJobName=name)
    deadline = time.time() + 30
    while any(status_of(sm, n) != "Stopped" for n in ("stop-b", "stop-c")):
        assert time.time() < deadline
        time.sleep(0.2)
    assert containers_of(server, "stop-b") == []
    assert containers_of(server, "stop-c") == []


def tuning_status(sm, name):
    return sm.describe_hyper_parameter_tuning_job(
        HyperParameterTuningJobName=name)


def test_stop_tuning_job_ends_its_containers_and_frees_their_slots(
        server, sm, objects):
    request = tuning("tune-stop", objects, ResourceLimits={
        "MaxNumberOfTrainingJobs": 4, "MaxParallelTrainingJobs": 2})
    request["TrainingJobDefinition"]["StaticHyperParameters"] = {
        "sleep": "300", "term": "linger"}
    sm.create_hyper_parameter_tuning_job(**request)
    deadline = time.time() + 60
    while len(containers_of(server, "tune-stop")) < 2 or \
            not all(measured(server, t) for t in
                    ("%s/trials/%d" % (study_of(server, "tune-stop"), i)
                     for i in (1, 2))):
        assert time.time() < deadline
        time.sleep(0.2)

    sm.stop_hyper_parameter_tuning_job(HyperParameterTuningJobName="tune-stop")
    stopped_at = time.time()
    assert tuning_status(sm, "tune-stop")[
        "HyperParameterTuningJobStatus"] == "Stopping"
    sm.stop_hyper_parameter_tuning_job(HyperParameterTuningJobName="tune-stop")
    while True:
        status = tuning_status(sm, "tune-stop")["HyperParameterTuningJobStatus"]
        if status == "Stopped":
            break
        assert status == "Stopping", status
        assert time.time() - stopped_at < 30
        time.sleep(0.1)
    assert containers_of(server, "tune-stop") == []
    d = tuning_status(sm, "tune-stop")
    assert d["TrainingJobStatusCounters"]["Stopped"] == 2, d
    jobs = sm.list_training_jobs_for_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="tune-stop")["TrainingJobSummaries"]
    assert len(jobs) == 2
    for j in jobs:
        one = sm.describe_training_job(TrainingJobName=j["TrainingJobName"])
        assert one["TrainingJobStatus"] == "Stopped", one
        # Each had reported its curve (epochs 1-9) when it was stopped.
        assert [m["MetricName"] for m in one["FinalMetricDataList"]] == \
            ["validation:loss"], one
        model = archive(objects, j["TrainingJobName"], "model.tar.gz")
        assert "on_term.json" in model
    code, message, _ = error_of(sm.stop_hyper_parameter_tuning_job,
                                HyperParameterTuningJobName="tune-stop")
    assert code == "ValidationException" and "Stopped" in message

    # Both slots are free: the next tuning job runs 2 jobs at once.
    request = tuning("tune-next", objects, ResourceLimits={
        "MaxNumberOfTrainingJobs": 2, "MaxParallelTrainingJobs": 2})
    request["TrainingJobDefinition"]["StaticHyperParameters"] = {
        "sleep": "300"}
    sm.create_hyper_parameter_tuning_job(**request)
    deadline = time.time() + 60
    while len(containers_of(server, "tune-next")) < 2:
        assert time.time() < deadline, running_jobs(server)
        time.sleep(0.2)
    sm.stop_hyper_parameter_tuning_job(HyperParameterTuningJobName="tune-next")
