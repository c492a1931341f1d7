"""What a SageMaker user sees of a tuning job, through boto3 against a real
cairnd and real podman: early-stopped training jobs (median rule and
Hyperband) are Stopped, counted so, and their model.tar.gz holds what they
wrote; ListTrainingJobsForHyperParameterTuningJob sorts, filters and pages
with each job's objective value; Describe echoes the whole request, a
Failed job's FailureReason and a warm start's OverallBestTrainingJob; a
tuning job's training jobs are in ListTrainingJobs and are described,
tagged and stopped one by one. Every response is also checked against
botocore's model (boto3_fixture.client). Skipped without python3-boto3 or
when podman cannot run a container."""
import json
import os
import sys
import time


sys.path.insert(0, os.path.dirname(__file__))
from boto3_fixture import (  # noqa: E402,F401 (fixtures)
    objects, image, remove_containers, server, keys, client, editor, job,
    error_of, finished, finished_tuning, archive, tuning)


def early_stopping(name, objects, worse_after, jobs, **config):
    """A tuning job whose jobs run one at a time, 5 epochs each; those
    after the first `worse_after` report a loss 10 higher (image/train)."""
    settings = dict(Strategy="Random", ResourceLimits={
        "MaxNumberOfTrainingJobs": jobs, "MaxParallelTrainingJobs": 1},
        ParameterRanges={"ContinuousParameterRanges": [
            {"Name": "scale", "MinValue": "1", "MaxValue": "2",
             "ScalingType": "Linear"}]})
    settings.update(config)
    request = tuning(name, objects, **settings)
    request["TrainingJobDefinition"]["StaticHyperParameters"] = {
        "epochs": "5", "epoch_seconds": "0.4", "sleep": "0",
        "worse_after": str(worse_after)}
    request["Tags"] = [{"Key": "team", "Value": "ml"}]
    return request


def jobs_of(sm, name, **kwargs):
    return sm.list_training_jobs_for_hyper_parameter_tuning_job(
        HyperParameterTuningJobName=name, **kwargs)["TrainingJobSummaries"]


def check_early_stopped(sm, objects, name, jobs):
    """The last of `jobs` was stopped early; the others Completed."""
    d = finished_tuning(sm, name, seconds=150)
    assert d["HyperParameterTuningJobStatus"] == "Completed"
    assert d["TrainingJobStatusCounters"] == {
        "Completed": jobs - 1, "InProgress": 0, "RetryableError": 0,
        "NonRetryableError": 0, "Stopped": 1}
    # A stopped job's objective was evaluated (its last value is final).
    assert d["ObjectiveStatusCounters"] == {
        "Succeeded": jobs, "Pending": 0, "Failed": 0}
    [stopped] = jobs_of(sm, name, StatusEquals="Stopped")
    assert stopped["TrainingJobName"].endswith(
        "-%03d-" % jobs + stopped["TrainingJobName"][-8:])
    t = sm.describe_training_job(TrainingJobName=stopped["TrainingJobName"])
    assert (t["TrainingJobStatus"], t["SecondaryStatus"]) == (
        "Stopped", "Stopped")
    steps = t["SecondaryStatusTransitions"]
    assert [s["Status"] for s in steps] == [
        "Starting", "Training", "Stopping", "Stopped"], steps
    assert "early stopping" in steps[2]["StatusMessage"]
    assert [m["Value"] for m in t["FinalMetricDataList"]][0] > 10
    model = archive(objects, stopped["TrainingJobName"], "model.tar.gz")
    assert model["sigterm.txt"] == b"stopped\n"
    epochs = model["epochs.txt"].decode().splitlines()
    assert 1 <= len(epochs) < 5 and float(epochs[0].split()[1]) > 10
    return d


def test_median_rule_stops_the_worse_job(editor, objects):
    editor.create_hyper_parameter_tuning_job(**early_stopping(
        "es-med", objects, worse_after=3, jobs=4,
        TrainingJobEarlyStoppingType="Auto"))
    check_early_stopped(editor, objects, "es-med", 4)


def test_hyperband_stops_the_worse_job(editor, objects):
    editor.create_hyper_parameter_tuning_job(**early_stopping(
        "es-hb", objects, worse_after=2, jobs=3, Strategy="Hyperband",
        StrategyConfig={"HyperbandStrategyConfig": {
            "MinResource": 1, "MaxResource": 5}}))
    d = check_early_stopped(editor, objects, "es-hb", 3)
    assert d["HyperParameterTuningJobConfig"]["StrategyConfig"] == {
        "HyperbandStrategyConfig": {"MinResource": 1, "MaxResource": 5}}


def test_list_sorts_filters_and_pages_with_objectives(editor):
    every = jobs_of(editor, "es-med", MaxResults=100)
    assert [j["TrainingJobName"] for j in every] == sorted(
        j["TrainingJobName"] for j in every)  # Name, Ascending by default
    assert len(every) == 4
    for j in every:
        metric = j["FinalHyperParameterTuningJobObjectiveMetric"]
        assert metric["MetricName"] == "validation:loss"
        assert j["ObjectiveStatus"] == "Succeeded"
        assert j["TrainingStartTime"] >= j["CreationTime"]
        assert j["TrainingEndTime"] >= j["TrainingStartTime"]
    by_value = jobs_of(editor, "es-med", SortBy="FinalObjectiveMetricValue")
    values = [j["FinalHyperParameterTuningJobObjectiveMetric"]["Value"]
              for j in by_value]
    assert values == sorted(values) and values[-1] > 10
    down = jobs_of(editor, "es-med", SortBy="FinalObjectiveMetricValue",
                   SortOrder="Descending")
    assert [j["TrainingJobName"] for j in down] == \
        [j["TrainingJobName"] for j in reversed(by_value)]
    assert [j["TrainingJobStatus"] for j in jobs_of(
        editor, "es-med", StatusEquals="Completed")] == ["Completed"] * 3
    pages = list(editor.get_paginator(
        "list_training_jobs_for_hyper_parameter_tuning_job").paginate(
        HyperParameterTuningJobName="es-med", SortBy="CreationTime",
        SortOrder="Descending", PaginationConfig={"PageSize": 1}))
    paged = [j for p in pages for j in p["TrainingJobSummaries"]]
    assert len(pages) == 4 and [j["CreationTime"] for j in paged] == \
        sorted((j["CreationTime"] for j in every), reverse=True)
    first = jobs_of(editor, "es-med", MaxResults=3)
    assert len(first) == 3
    for bad, field in (({"SortBy": "Bogus"}, "SortBy 'Bogus'"),
                       ({"StatusEquals": "Done"}, "StatusEquals 'Done'"),
                       ({"MaxResults": 500}, "MaxResults '500'"),
                       ({"NextToken": "x"}, "NextToken 'x'")):
        code, message, _ = error_of(
            editor.list_training_jobs_for_hyper_parameter_tuning_job,
            HyperParameterTuningJobName="es-med", **bad)
        assert code == "ValidationException" and field in message, message


def test_describe_echoes_the_whole_request(editor, objects):
    request = early_stopping("es-med", objects, worse_after=3, jobs=4,
                             TrainingJobEarlyStoppingType="Auto")
    d = editor.describe_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="es-med")
    assert d["HyperParameterTuningJobConfig"] == \
        request["HyperParameterTuningJobConfig"]
    assert d["TrainingJobDefinition"] == request["TrainingJobDefinition"]
    assert d["CreationTime"] <= d["LastModifiedTime"] == \
        d["HyperParameterTuningEndTime"]
    assert "FailureReason" not in d
    best = d["BestTrainingJob"]
    assert best["TrainingJobStatus"] == "Completed"
    assert best["TuningJobName"] == "es-med"
    assert best["TrainingJobArn"].endswith(":training-job/" +
                                           best["TrainingJobName"])
    assert "OverallBestTrainingJob" not in d  # no warm start


def test_failed_tuning_job_says_why(editor, objects):
    request = tuning("fail-t", objects, ResourceLimits={
        "MaxNumberOfTrainingJobs": 3, "MaxParallelTrainingJobs": 3})
    request["TrainingJobDefinition"]["StaticHyperParameters"]["fail"] = \
        "no rows in train"
    editor.create_hyper_parameter_tuning_job(**request)
    d = finished_tuning(editor, "fail-t")
    assert d["HyperParameterTuningJobStatus"] == "Failed"
    assert d["TrainingJobStatusCounters"]["NonRetryableError"] == 3
    assert "failed" in d["FailureReason"]
    assert "no rows in train" in d["FailureReason"]
    for j in jobs_of(editor, "fail-t"):
        assert j["FailureReason"] == "no rows in train"
        assert j["ObjectiveStatus"] == "Failed"


def test_warm_start_names_the_overall_best_job(editor, objects):
    parent = jobs_of(editor, "es-med", SortBy="FinalObjectiveMetricValue",
                     MaxResults=1)[0]
    request = early_stopping("es-child", objects, worse_after=0, jobs=1)
    request["WarmStartConfig"] = {
        "ParentHyperParameterTuningJobs": [
            {"HyperParameterTuningJobName": "es-med"}],
        "WarmStartType": "IdenticalDataAndAlgorithm"}
    editor.create_hyper_parameter_tuning_job(**request)
    d = finished_tuning(editor, "es-child")
    [own] = jobs_of(editor, "es-child")
    assert d["BestTrainingJob"]["TrainingJobName"] == own["TrainingJobName"]
    overall = d["OverallBestTrainingJob"]
    assert overall["TrainingJobName"] == parent["TrainingJobName"]
    assert overall["TuningJobName"] == "es-med"
    assert overall["FinalHyperParameterTuningJobObjectiveMetric"] == \
        parent["FinalHyperParameterTuningJobObjectiveMetric"]


def test_training_jobs_of_a_tuning_job_one_by_one(editor, objects):
    names = [j["TrainingJobName"] for j in jobs_of(editor, "es-med")]
    listed = editor.list_training_jobs(NameContains="es-med-", MaxResults=100)
    assert sorted(s["TrainingJobName"]
                  for s in listed["TrainingJobSummaries"]) == sorted(names)
    arn = editor.describe_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="es-med")["HyperParameterTuningJobArn"]
    one = editor.describe_training_job(TrainingJobName=names[0])
    assert one["TuningJobArn"] == arn
    # Tags: the tuning job's are inherited, a job's own are its alone.
    tagged, other = one["TrainingJobArn"], "%s%s" % (
        one["TrainingJobArn"][:-len(names[0])], names[1])
    editor.add_tags(ResourceArn=tagged, Tags=[{"Key": "own", "Value": "1"}])
    assert editor.list_tags(ResourceArn=tagged)["Tags"] == [
        {"Key": "own", "Value": "1"}, {"Key": "team", "Value": "ml"}]
    assert editor.list_tags(ResourceArn=other)["Tags"] == [
        {"Key": "team", "Value": "ml"}]
    assert editor.list_tags(ResourceArn=arn)["Tags"] == [
        {"Key": "team", "Value": "ml"}]
    code, message, _ = error_of(editor.delete_tags, ResourceArn=tagged,
                                TagKeys=["team"])
    assert code == "ValidationException" and "'team'" in message
    editor.delete_tags(ResourceArn=tagged, TagKeys=["own"])
    assert editor.list_tags(ResourceArn=tagged)["Tags"] == [
        {"Key": "team", "Value": "ml"}]
    # Stopped alone: the tuning job and its other job go on.
    request = tuning("one-stop", objects, ResourceLimits={
        "MaxNumberOfTrainingJobs": 2, "MaxParallelTrainingJobs": 2})
    request["TrainingJobDefinition"]["StaticHyperParameters"]["sleep"] = "60"
    editor.create_hyper_parameter_tuning_job(**request)
    deadline = time.time() + 60
    while len(jobs_of(editor, "one-stop")) < 2:
        assert time.time() < deadline
        time.sleep(0.3)
    first, second = [j["TrainingJobName"] for j in jobs_of(editor, "one-stop")]
    editor.stop_training_job(TrainingJobName=first)
    assert finished(editor, first)["TrainingJobStatus"] == "Stopped"
    assert editor.describe_training_job(
        TrainingJobName=second)["TrainingJobStatus"] == "InProgress"
    d = editor.describe_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="one-stop")
    assert d["HyperParameterTuningJobStatus"] == "InProgress"
    assert d["TrainingJobStatusCounters"]["Stopped"] == 1
    code, _, _ = error_of(editor.stop_training_job, TrainingJobName=first)
    assert code == "ValidationException"
    editor.stop_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="one-stop")
