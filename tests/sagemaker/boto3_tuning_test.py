"""SageMaker's tuning jobs through boto3 against a real cairnd and real
podman: a Bayesian job and its best training job, warm start from it,
validation, StopHyperParameterTuningJob, and kill -9 of cairnd during a
tuning job. Skipped without python3-boto3; failed when podman cannot run
a container."""
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from boto3_fixture import (  # noqa: E402,F401 (fixtures)
    objects, image, remove_containers, server, keys, client, editor, job,
    error_of, running_jobs, restart_after_kill_9, archive, tuning,
    finished_tuning, study_trials, BIN, SERVER_ARGS, webui)


def test_bayesian_tuning_job_finds_its_best_training_job(editor, objects):
    arn = editor.create_hyper_parameter_tuning_job(
        **tuning("tune-b", objects))["HyperParameterTuningJobArn"]
    assert arn.endswith(":hyper-parameter-tuning-job/tune-b")
    d = finished_tuning(editor, "tune-b")
    assert d["HyperParameterTuningJobStatus"] == "Completed"
    assert d["TrainingJobStatusCounters"]["Completed"] == 6
    assert sum(d["TrainingJobStatusCounters"].values()) == 6
    assert d["ObjectiveStatusCounters"] == {
        "Succeeded": 6, "Pending": 0, "Failed": 0}
    jobs = editor.list_training_jobs_for_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="tune-b")["TrainingJobSummaries"]
    assert len(jobs) == 6
    for j in jobs:
        assert re.fullmatch(r"tune-b-\d{3}-[0-9a-f]{8}", j["TrainingJobName"])
        assert j["TrainingJobStatus"] == "Completed"
    assert len({j["TrainingJobName"] for j in jobs}) == 6
    most = max(int(j["TunedHyperParameters"]["epochs"]) for j in jobs)
    best = d["BestTrainingJob"]
    assert int(best["TunedHyperParameters"]["epochs"]) == most
    metric = best["FinalHyperParameterTuningJobObjectiveMetric"]
    assert metric["MetricName"] == "validation:loss"
    assert abs(metric["Value"] - round(1.0 / most, 3)) < 1e-9
    # Each training job ran the contract under its own name and values.
    manifest = json.loads(archive(objects, best["TrainingJobName"],
                                  "model.tar.gz")["manifest.json"])
    assert manifest["hps"] == {"sleep": "0", "epochs": str(most)}
    assert manifest["env"]["TRAINING_JOB_NAME"] == best["TrainingJobName"]
    listed = editor.list_hyper_parameter_tuning_jobs(
        NameContains="TUNE-B", StatusEquals="Completed")
    assert [(j["HyperParameterTuningJobName"],
             j["TrainingJobStatusCounters"]["Completed"],
             j["ResourceLimits"]["MaxParallelTrainingJobs"])
            for j in listed["HyperParameterTuningJobSummaries"]] == \
        [("tune-b", 6, 2)]
    # A tuning job is not a training job; its training jobs are.
    assert error_of(editor.describe_training_job,
                    TrainingJobName="tune-b")[0] == "ResourceNotFound"
    t = editor.describe_training_job(TrainingJobName=best["TrainingJobName"])
    assert t["TuningJobArn"] == arn
    assert t["TrainingJobStatus"] == "Completed"
    assert t["HyperParameters"] == {"sleep": "0", "epochs": str(most)}
    assert [(m["MetricName"], m["Value"]) for m in t["FinalMetricDataList"]
            if m["MetricName"] == "validation:loss"] == \
        [("validation:loss", metric["Value"])]
    assert t["ModelArtifacts"]["S3ModelArtifacts"] == \
        "s3://my-bucket/output/%s/output/model.tar.gz" % best["TrainingJobName"]
    wrong = best["TrainingJobName"][:-8] + "00000000"
    assert error_of(editor.describe_training_job,
                    TrainingJobName=wrong)[0] == "ResourceNotFound"

def test_warm_start_tells_the_gp_its_parents_jobs(server, editor, objects):
    # tune-b (above) ran 6 jobs over the same range: enough completed
    # points (5 for one parameter) that the GP skips its initial design.
    request = tuning("tune-w", objects, ResourceLimits={
        "MaxNumberOfTrainingJobs": 1, "MaxParallelTrainingJobs": 1})
    request["WarmStartConfig"] = {
        "ParentHyperParameterTuningJobs": [
            {"HyperParameterTuningJobName": "tune-b"}],
        "WarmStartType": "IdenticalDataAndAlgorithm"}
    editor.create_hyper_parameter_tuning_job(**request)
    d = finished_tuning(editor, "tune-w")
    assert d["HyperParameterTuningJobStatus"] == "Completed"
    assert d["WarmStartConfig"] == request["WarmStartConfig"]
    assert d["TrainingJobStatusCounters"]["Completed"] == 1
    assert sum(d["TrainingJobStatusCounters"].values()) == 1
    assert d["HyperParameterTuningJobConfig"]["ResourceLimits"][
        "MaxNumberOfTrainingJobs"] == 1
    [own] = editor.list_training_jobs_for_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="tune-w")["TrainingJobSummaries"]
    assert d["BestTrainingJob"]["TrainingJobName"] == own["TrainingJobName"]
    # Underneath, the study was told tune-b's 6 jobs before it started,
    # and its first suggestion came from the GP's model (ucb), not from
    # the initial design (quasi_random) that a cold start begins with.
    trials = study_trials(server, "tune-w")
    prior = [t for t in trials
             if t.get("labels", {}).get("sagemaker-warm-start") == "tune-b"]
    assert len(prior) == 6
    assert all(t["state"] == "SUCCEEDED" for t in prior)
    [first] = [t for t in trials if t not in prior]
    assert first["metadata"]["suggestion_kind"] in (
        "ucb", "pure_exploration", "restart"), first
    # A parent still running cannot be one.
    busy = tuning("tune-busy", objects)
    busy["TrainingJobDefinition"]["StaticHyperParameters"]["sleep"] = "20"
    editor.create_hyper_parameter_tuning_job(**busy)
    request["HyperParameterTuningJobName"] = "tune-w2"
    request["WarmStartConfig"]["ParentHyperParameterTuningJobs"] = [
        {"HyperParameterTuningJobName": "tune-busy"}]
    code, message, _ = error_of(editor.create_hyper_parameter_tuning_job,
                                **request)
    assert code == "ValidationException" and "InProgress" in message
    editor.stop_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="tune-busy")

def test_tuning_job_validation_names_field_and_value(editor, objects):
    bad_range = {"IntegerParameterRanges": [
        {"Name": "epochs", "MinValue": "5", "MaxValue": "2"}]}
    log_zero = {"ContinuousParameterRanges": [
        {"Name": "lr", "MinValue": "0", "MaxValue": "1",
         "ScalingType": "Logarithmic"}]}
    for config, words in (
            (dict(ParameterRanges=bad_range), ("MinValue", "'5'")),
            (dict(ParameterRanges=log_zero), ("MinValue", "'0'")),
            (dict(Strategy="Grid", ResourceLimits={
                "MaxNumberOfTrainingJobs": 600,
                "MaxParallelTrainingJobs": 2}),
             ("MaxNumberOfTrainingJobs", "600"))):
        code, message, status = error_of(
            editor.create_hyper_parameter_tuning_job,
            **tuning("tune-bad", objects, **config))
        assert (code, status) == ("ValidationException", 400), message
        for w in words:
            assert w in message, message
    warm = tuning("tune-warm", objects)
    for config, code, words in (
            ({"ParentHyperParameterTuningJobs": [
                {"HyperParameterTuningJobName": "tune-b"}],
              "WarmStartType": "Cold"}, "ValidationException", "'Cold'"),
            ({"ParentHyperParameterTuningJobs": [
                {"HyperParameterTuningJobName": "no-such-job"}],
              "WarmStartType": "TransferLearning"}, "ResourceNotFound",
             "'no-such-job'")):
        warm["WarmStartConfig"] = config
        got, message, _ = error_of(editor.create_hyper_parameter_tuning_job,
                                   **warm)
        assert got == code and words in message, message
    assert error_of(editor.describe_hyper_parameter_tuning_job,
                    HyperParameterTuningJobName="tune-bad")[0] == \
        "ResourceNotFound"

def test_stop_tuning_job_stops_its_training_jobs(editor, objects):
    request = tuning("tune-s", objects, ResourceLimits={
        "MaxNumberOfTrainingJobs": 4, "MaxParallelTrainingJobs": 2})
    request["TrainingJobDefinition"]["StaticHyperParameters"]["sleep"] = "60"
    editor.create_hyper_parameter_tuning_job(**request)
    deadline = time.time() + 60
    while not editor.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="tune-s")["TrainingJobSummaries"]:
        assert time.time() < deadline
        time.sleep(0.3)
    editor.stop_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="tune-s")
    # Stopping until its containers are gone (boto3_stop_test.py).
    d = finished_tuning(editor, "tune-s", 30, ("InProgress", "Stopping"))
    assert d["HyperParameterTuningJobStatus"] == "Stopped"
    counters = d["TrainingJobStatusCounters"]
    assert counters["InProgress"] == 0 and counters["Stopped"] >= 1, counters
    assert sum(counters.values()) <= 2
    code, message, _ = error_of(editor.stop_hyper_parameter_tuning_job,
                                HyperParameterTuningJobName="tune-s")
    assert code == "ValidationException" and "Stopped" in message

def test_kill_9_during_a_tuning_job_loses_and_doubles_no_job(objects, image):
    first = webui.Cairnd(BIN, ["--object-root", objects, *SERVER_ARGS])
    try:
        key_id, secret = keys(first, "k9t", "editor")
        sm = client(first, key_id, secret)
        request = tuning("tune-k9", objects, ResourceLimits={
            "MaxNumberOfTrainingJobs": 4, "MaxParallelTrainingJobs": 2})
        request["TrainingJobDefinition"]["StaticHyperParameters"]["sleep"] = \
            "3"
        sm.create_hyper_parameter_tuning_job(**request)
        # Killed while jobs run.
        second = restart_after_kill_9(first, objects,
                                      lambda: running_jobs(first))
    except Exception:
        first.stop()
        remove_containers(first)
        raise
    try:
        sm = client(second, key_id, secret)
        # Never two containers for one training job, while it finishes.
        deadline = time.time() + 150
        while True:
            running = running_jobs(second)
            assert len(running) == len(set(running)), running
            d = sm.describe_hyper_parameter_tuning_job(
                HyperParameterTuningJobName="tune-k9")
            if d["HyperParameterTuningJobStatus"] != "InProgress":
                break
            assert time.time() < deadline, d["TrainingJobStatusCounters"]
            time.sleep(0.2)
        assert d["HyperParameterTuningJobStatus"] == "Completed"
        assert d["TrainingJobStatusCounters"]["Completed"] == 4
        assert sum(d["TrainingJobStatusCounters"].values()) == 4
        assert d["ObjectiveStatusCounters"] == {
            "Succeeded": 4, "Pending": 0, "Failed": 0}
        jobs = sm.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="tune-k9")["TrainingJobSummaries"]
        assert len({j["TrainingJobName"] for j in jobs}) == len(jobs) == 4
        assert all(j["TrainingJobStatus"] == "Completed" for j in jobs)
    finally:
        second.stop()
        remove_containers(second)
