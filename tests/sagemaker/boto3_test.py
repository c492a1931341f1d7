"""SageMaker's training-job API through boto3 (Debian's python3-boto3, the
real client) against a real cairnd with an object root: credentials from
`cairn token create --aws`, SigV4 refusals (wrong secret, unknown key,
skewed clock, revoked token), roles (a viewer's key), validation, the
object root's checks, paging and filters, stop and the waiter, tags, and
the audit log; and jobs that run: the container contract in real podman
with the test image, model.tar.gz and output.tar.gz in the object root,
FailureReason, MaxRuntimeInSeconds, kill -9 of cairnd, a ManifestFile
channel. Skipped without
python3-boto3; failed when podman cannot run a container."""
import contextlib
import datetime
import importlib.util
import json
import os
import re
import sys
import time
from unittest import mock

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from boto3_fixture import (  # noqa: E402,F401 (fixtures)
    objects, image, remove_containers, server, keys, client, editor, job,
    error_of, finished, finished_tuning, restart_after_kill_9, archive,
    tuning, BIN,
    JOB_SECONDS, SERVER_ARGS, webui)


def test_create_describe_list_stop_and_waiter(server, editor, objects):
    arn = editor.create_training_job(**job("xgb-1", objects))["TrainingJobArn"]
    assert arn.endswith(":training-job/xgb-1")
    d = editor.describe_training_job(TrainingJobName="xgb-1")
    assert d["TrainingJobStatus"] == "InProgress"
    assert [c["ChannelName"] for c in d["InputDataConfig"]] == \
        ["train", "validation"]
    assert d["HyperParameters"] == {"epochs": "3", "sleep": JOB_SECONDS}
    assert d["ModelArtifacts"]["S3ModelArtifacts"] == \
        "s3://my-bucket/output/xgb-1/output/model.tar.gz"
    assert isinstance(d["CreationTime"], datetime.datetime)
    deadline = time.time() + 30
    while d["SecondaryStatus"] != "Training":  # its container runs
        assert d["SecondaryStatus"] == "Starting" and time.time() < deadline
        time.sleep(0.2)
        d = editor.describe_training_job(TrainingJobName="xgb-1")
    # The job is a study like any other (REST, and so the CLI and UI).
    status, studies = server.rest("GET", "studies")
    assert status == 200
    assert "xgb-1" in [s["displayName"] for s in studies["studies"]]

    editor.create_training_job(**job("xgb-2", objects))
    editor.create_training_job(**job("other-3", objects))
    editor.stop_training_job(TrainingJobName="xgb-2")
    editor.get_waiter("training_job_completed_or_stopped").wait(
        TrainingJobName="xgb-2", WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    assert editor.describe_training_job(
        TrainingJobName="xgb-2")["TrainingJobStatus"] == "Stopped"

    pages = editor.get_paginator("list_training_jobs").paginate(
        SortBy="Name", SortOrder="Ascending",
        PaginationConfig={"PageSize": 1})
    names = [s["TrainingJobName"] for p in pages
             for s in p["TrainingJobSummaries"]]
    assert names == ["other-3", "xgb-1", "xgb-2"]
    listed = editor.list_training_jobs(NameContains="XGB",
                                       StatusEquals="InProgress")
    assert [s["TrainingJobName"] for s in
            listed["TrainingJobSummaries"]] == ["xgb-1"]
    later = editor.list_training_jobs(
        CreationTimeAfter=datetime.datetime(2100, 1, 1))
    assert later["TrainingJobSummaries"] == []
    code, _, _ = error_of(editor.stop_training_job, TrainingJobName="xgb-2")
    assert code == "ValidationException"

def test_validation_names_field_and_value(editor, objects):
    cases = [
        (dict(TrainingJobName="bad_name_!"), "TrainingJobName 'bad_name_!'"),
        (dict(ResourceConfig={"InstanceType": "local_gpu",
                              "InstanceCount": 1, "VolumeSizeInGB": 1}),
         "InstanceType 'local_gpu'"),
        (dict(OutputDataConfig={"S3OutputPath": "s3://my-bucket/../etc"}),
         "'..'"),
        (dict(OutputDataConfig={"S3OutputPath": "s3://no-bucket/out"}),
         "bucket 'no-bucket' does not exist"),
        (dict(StoppingCondition={"MaxRuntimeInSeconds": 99999999}),
         "MaxRuntimeInSeconds '99999999'"),
        (dict(InputDataConfig=[{"ChannelName": "..", "DataSource": {
            "S3DataSource": {"S3DataType": "S3Prefix",
                             "S3Uri": "s3://my-bucket/data/train/"}}}]),
         "ChannelName '..'"),
        (dict(InputDataConfig=[{"ChannelName": "etc", "DataSource": {
            "FileSystemDataSource": {
                "FileSystemId": "fs-0123456789abcdef0",
                "FileSystemAccessMode": "ro", "FileSystemType": "EFS",
                "DirectoryPath": "/etc"}}}]),
         "DirectoryPath '/etc'"),
    ]
    for overrides, says in cases:
        code, message, status = error_of(
            editor.create_training_job, **job("valid-name", objects,
                                              **overrides))
        assert (code, status) == ("ValidationException", 400), message
        assert says in message
    editor.create_training_job(**job("dup", objects))
    with pytest.raises(editor.exceptions.ResourceInUse):
        editor.create_training_job(**job("dup", objects))
    with pytest.raises(editor.exceptions.ResourceNotFound):
        editor.describe_training_job(TrainingJobName="missing")
    code, _, _ = error_of(editor.list_endpoints)
    assert code == "UnknownOperationException"

def test_signature_refusals(server, editor):
    key_id, secret = keys(server, "sig", "editor")
    good = client(server, key_id, secret)
    assert "TrainingJobSummaries" in good.list_training_jobs()
    code, _, status = error_of(
        client(server, key_id, secret[:-1] + "x").list_training_jobs)
    assert (code, status) == ("InvalidSignatureException", 403)
    code, _, status = error_of(
        client(server, "CAIRN000000000000000", secret).list_training_jobs)
    assert (code, status) == ("UnrecognizedClientException", 403)
    skewed = datetime.datetime.utcnow() - datetime.timedelta(minutes=20)
    # With python3-awscrt installed (awscli depends on it) botocore signs
    # through botocore.crt.auth, which reads the clock itself.
    clocks = ["botocore.auth.datetime"]
    if importlib.util.find_spec("awscrt") is not None:
        clocks.append("botocore.crt.auth.datetime")
    with contextlib.ExitStack() as stack:
        for clock in clocks:
            dt = stack.enter_context(mock.patch(clock))
            dt.datetime.utcnow.return_value = skewed
            dt.timezone = datetime.timezone
        code, message, _ = error_of(good.list_training_jobs)
    assert code == "InvalidSignatureException"
    assert "Signature expired" in message
    server.cli("token", "revoke", "sig")
    code, message, _ = error_of(good.list_training_jobs)
    assert code == "UnrecognizedClientException" and "revoked" in message
    audit = server.cli("audit", "list")
    assert "/SageMaker/ListTrainingJobs" in audit

def test_viewer_key_reads_but_cannot_create(server, editor, objects):
    viewer = client(server, *keys(server, "view", "viewer"))
    assert "TrainingJobSummaries" in viewer.list_training_jobs()
    code, _, _ = error_of(viewer.create_training_job,
                          **job("by-viewer", objects))
    assert code == "AccessDeniedException"
    audit = server.cli("audit", "list")
    assert re.search(r"view\s+viewer\s+StudyService/CreateStudy", audit), audit
    # Each SageMaker operation is audited under its own name too.
    assert re.search(r"view\s+viewer\s+\S*SageMaker/CreateTrainingJob\s",
                     audit), audit

def test_kill_9_loses_and_doubles_no_job(objects, image):
    first = webui.Cairnd(BIN, ["--object-root", objects, *SERVER_ARGS])
    try:
        key_id, secret = keys(first, "k9", "editor")
        sm = client(first, key_id, secret)
        for i in range(3):
            sm.create_training_job(**job("k9-%d" % i, objects))
        sm.create_training_job(**job(
            "k9-ckpt", objects, HyperParameters={"sleep": "5"},
            CheckpointConfig={"S3Uri": "s3://my-bucket/ckpt/k9"}))
        runs = os.path.join(objects, "my-bucket/ckpt/k9/runs.txt")
        # Killed while its first attempt runs.
        second = restart_after_kill_9(first, objects,
                                      lambda: os.path.exists(runs), 30)
    except Exception:
        first.stop()
        raise
    try:
        # The same AWS key works after the restart (token and key file
        # survive); every acknowledged job is there once.
        sm = client(second, key_id, secret)
        names = sorted(s["TrainingJobName"] for s in
                       sm.list_training_jobs()["TrainingJobSummaries"])
        assert names == ["k9-0", "k9-1", "k9-2", "k9-ckpt"]
        with pytest.raises(sm.exceptions.ResourceInUse):
            sm.create_training_job(**job("k9-1", objects))
        # The interrupted job ran again, once, and found its checkpoint.
        d = finished(sm, "k9-ckpt")
        assert d["TrainingJobStatus"] == "Completed", d.get("FailureReason")
        model = json.loads(archive(objects, "k9-ckpt", "model.tar.gz")[
            "manifest.json"])
        assert model["earlier_runs"] == 1
    finally:
        second.stop()
        remove_containers(second)

def test_job_runs_the_container_contract(server, editor, objects):
    arn = editor.create_training_job(**job(
        "run-1", objects, HyperParameters={"epochs": "2"},
        Environment={"TEAM": "ml"},
        CheckpointConfig={"S3Uri": "s3://my-bucket/ckpt/run-1"}))[
            "TrainingJobArn"]
    editor.get_waiter("training_job_completed_or_stopped").wait(
        TrainingJobName="run-1", WaiterConfig={"Delay": 1, "MaxAttempts": 90})
    d = editor.describe_training_job(TrainingJobName="run-1")
    assert (d["TrainingJobStatus"], d["SecondaryStatus"]) == \
        ("Completed", "Completed"), d.get("FailureReason")
    model = json.loads(archive(objects, "run-1", "model.tar.gz")[
        "manifest.json"])
    # `train` ran as the command (the image has no ENTRYPOINT), alone: no
    # --job-dir or parameters after it.
    assert model["argv"] == ["/usr/local/bin/train"]
    assert model["hps"] == {"epochs": "2"}
    assert model["channels"] == {"train": {"a.csv": "1,2\n"},
                                 "validation": {"v.csv": "3,4\n"}}
    assert model["channel_writable"] is False
    assert model["ro_mounts"] == ["/opt/ml/input/data/train",
                                  "/opt/ml/input/data/validation"]
    assert model["resource"]["current_host"] == "algo-1"
    assert model["resource"]["hosts"] == ["algo-1"]
    assert model["uid"] != 0  # the job user, never root
    assert model["env"] == {"TRAINING_JOB_NAME": "run-1",
                            "TRAINING_JOB_ARN": arn, "TEAM": "ml"}
    assert archive(objects, "run-1", "output.tar.gz") == \
        {"notes.txt": b"done\n"}
    with open(os.path.join(objects, "my-bucket/ckpt/run-1/runs.txt")) as f:
        assert f.read() == "run\n"  # kept in the object root
    # MetricDefinitions on the container's output: the learning curve and
    # the final value.
    assert [(m["MetricName"], m["Value"]) for m in
            d["FinalMetricDataList"]] == [("validation:loss", 0.5)]
    curve = server.cli("trial", "history", "run-1", "1", "validation_loss")
    assert [tuple(float(v) for v in line.split())
            for line in curve.splitlines()] == [(1, 1.0), (2, 0.5)]

def test_failure_reason_and_max_runtime(editor, objects):
    editor.create_training_job(**job(
        "fails-1", objects, HyperParameters={"fail": "no rows in 'train'"}))
    editor.create_training_job(**job(
        "slow-1", objects, HyperParameters={"sleep": "60"},
        StoppingCondition={"MaxRuntimeInSeconds": 2}))
    d = finished(editor, "fails-1")
    assert d["TrainingJobStatus"] == "Failed"
    assert d["FailureReason"] == "no rows in 'train'"
    d = finished(editor, "slow-1")
    assert (d["TrainingJobStatus"], d["SecondaryStatus"]) == \
        ("Stopped", "MaxRuntimeExceeded")

def test_instance_count_2_runs_a_container_per_host(editor, objects):
    editor.create_training_job(**job(
        "multi-1", objects, HyperParameters={"sleep": "3"},
        ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 2,
                        "VolumeSizeInGB": 1},
        CheckpointConfig={"S3Uri": "s3://my-bucket/ckpt/multi-1"}))
    d = finished(editor, "multi-1")
    assert d["TrainingJobStatus"] == "Completed", d.get("FailureReason")
    ckpt = os.path.join(objects, "my-bucket/ckpt/multi-1")
    for host in ("algo-1", "algo-2"):
        with open(os.path.join(ckpt, host + ".json")) as f:
            resource = json.load(f)
        assert resource["current_host"] == host
        assert resource["hosts"] == ["algo-1", "algo-2"]

def test_tags_on_create_add_list_delete(server, editor, objects):
    arn = editor.create_training_job(**job(
        "tag-1", objects, Tags=[{"Key": "team", "Value": "ml"}],
        HyperParameters={"epochs": "1", "sleep": "0"}))["TrainingJobArn"]
    assert editor.list_tags(ResourceArn=arn)["Tags"] == [
        {"Key": "team", "Value": "ml"}]
    added = editor.add_tags(ResourceArn=arn, Tags=[
        {"Key": "project", "Value": "x-1"}, {"Key": "team", "Value": "cv"}])
    want = [{"Key": "project", "Value": "x-1"}, {"Key": "team", "Value": "cv"}]
    assert added["Tags"] == want
    assert editor.list_tags(ResourceArn=arn)["Tags"] == want
    editor.delete_tags(ResourceArn=arn, TagKeys=["project"])
    audit = server.cli("audit", "list")
    for op in ("CreateTrainingJob", "AddTags", "DeleteTags"):
        assert re.search(r"ed\s+editor\s+\S*SageMaker/%s\s" % op, audit), op
    assert re.search(r"ed\s+editor\s+\S*StudyService/UpdateStudyLabels\s",
                     audit), audit
    assert editor.list_tags(ResourceArn=arn)["Tags"] == want[1:]
    # Underneath they are the study's labels (cairn study label's).
    labels = json.loads(server.cli("study", "get", "tag-1"))["spec"]["labels"]
    assert labels["aws-tag:team"] == "cv" and labels["sagemaker"]
    # Refusals name the field and value and change nothing.
    for tags, code, words in (
            ([{"Key": "aws:x", "Value": "1"}], "ValidationException",
             "Tags.Key 'aws:x'"),
            ([{"Key": "a", "Value": "bad!"}], "ValidationException",
             "Tags.Value 'bad!'"),
            ([{"Key": "k%d" % i, "Value": ""} for i in range(51)],
             "ValidationException", "'51'"),
            ([{"Key": "k%d" % i, "Value": ""} for i in range(50)],
             "ResourceLimitExceeded", "51 tags; at most 50")):
        got, message, _ = error_of(editor.add_tags, ResourceArn=arn,
                                   Tags=tags)
        assert (got, words in message) == (code, True), message
    assert editor.list_tags(ResourceArn=arn)["Tags"] == want[1:]
    assert error_of(editor.list_tags, ResourceArn=arn + "x")[0] == \
        "ResourceNotFound"
    code, message, _ = error_of(editor.list_tags, ResourceArn="arn:aws:s3:::b")
    assert code == "ValidationException" and "ResourceArn" in message
    # A viewer's key lists but cannot tag.
    viewer = client(server, *keys(server, "tag-viewer", "viewer"))
    assert viewer.list_tags(ResourceArn=arn)["Tags"] == want[1:]
    assert error_of(viewer.add_tags, ResourceArn=arn, Tags=want)[0] == \
        "AccessDeniedException"
    # A tuning job's Tags, by its ARN.
    request = tuning("tune-t", objects, ResourceLimits={
        "MaxNumberOfTrainingJobs": 1, "MaxParallelTrainingJobs": 1})
    request["Tags"] = [{"Key": "team", "Value": "ml"}]
    tuning_arn = editor.create_hyper_parameter_tuning_job(
        **request)["HyperParameterTuningJobArn"]
    editor.add_tags(ResourceArn=tuning_arn,
                    Tags=[{"Key": "stage", "Value": "dev"}])
    assert editor.list_tags(ResourceArn=tuning_arn)["Tags"] == [
        {"Key": "stage", "Value": "dev"}, {"Key": "team", "Value": "ml"}]

def manifest_channel(objects, *keys):
    """Writes s3://my-bucket/manifests/train.manifest listing `keys` of
    my-bucket/data/many/ (1.csv, 2.csv, 3.csv); the channel "train" of it."""
    data = os.path.join(objects, "my-bucket/data/many")
    os.makedirs(data, exist_ok=True)
    for name in ("1.csv", "2.csv", "3.csv"):
        with open(os.path.join(data, name), "w") as f:
            f.write(name + "\n")
    manifest = os.path.join(objects, "my-bucket/manifests/train.manifest")
    os.makedirs(os.path.dirname(manifest), exist_ok=True)
    with open(manifest, "w") as f:
        json.dump([{"prefix": "s3://my-bucket/data/many/"}, *keys], f)
    return [{"ChannelName": "train", "DataSource": {"S3DataSource": {
        "S3DataType": "ManifestFile",
        "S3DataDistributionType": "FullyReplicated",
        "S3Uri": "s3://my-bucket/manifests/train.manifest"}}}]


def test_manifest_channel_presents_exactly_the_listed_files(editor, objects):
    def with_manifest(name, *keys):
        return job(name, objects, HyperParameters={"sleep": "0"},
                   InputDataConfig=manifest_channel(objects, *keys))

    # A bad entry is refused at create, naming the manifest and the entry.
    code, message, _ = error_of(editor.create_training_job,
                                **with_manifest("mf-bad", "1.csv", "../x"))
    assert code == "ValidationException"
    assert "train.manifest" in message and "entry 2 '../x'" in message
    editor.create_training_job(**with_manifest("mf-1", "1.csv", "3.csv"))
    d = finished(editor, "mf-1")
    assert d["TrainingJobStatus"] == "Completed", d.get("FailureReason")
    model = json.loads(archive(objects, "mf-1", "model.tar.gz")[
        "manifest.json"])
    assert model["channels"] == {"train": {"1.csv": "1.csv\n",
                                           "3.csv": "3.csv\n"}}
    assert model["ro_mounts"] == ["/opt/ml/input/data/train/1.csv",
                                  "/opt/ml/input/data/train/3.csv"]
    assert model["channel_writable"] is False


def test_manifest_broken_after_create_fails_the_next_start(editor, objects):
    # One job at a time: the second starts after the manifest is broken.
    request = tuning("mf-tune", objects, Strategy="Random", ResourceLimits={
        "MaxNumberOfTrainingJobs": 2, "MaxParallelTrainingJobs": 1})
    definition = request["TrainingJobDefinition"]
    definition["InputDataConfig"] = manifest_channel(objects, "2.csv")
    definition["StaticHyperParameters"] = {"sleep": "2"}
    editor.create_hyper_parameter_tuning_job(**request)
    deadline = time.time() + 30
    while True:  # the first job's container runs: its mounts are made
        jobs = editor.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="mf-tune")["TrainingJobSummaries"]
        if jobs and editor.describe_training_job(
                TrainingJobName=jobs[0]["TrainingJobName"])[
                    "SecondaryStatus"] != "Starting":
            break
        assert time.time() < deadline
        time.sleep(0.2)
    manifest_channel(objects, "2.csv", "/etc/passwd")
    d = finished_tuning(editor, "mf-tune", 60)
    assert d["TrainingJobStatusCounters"]["Completed"] == 1
    [failed] = [j for j in
                editor.list_training_jobs_for_hyper_parameter_tuning_job(
                    HyperParameterTuningJobName="mf-tune")[
                        "TrainingJobSummaries"]
                if j["TrainingJobStatus"] == "Failed"]
    reason = editor.describe_training_job(
        TrainingJobName=failed["TrainingJobName"])["FailureReason"]
    assert "train.manifest" in reason and "entry 2 '/etc/passwd'" in reason
