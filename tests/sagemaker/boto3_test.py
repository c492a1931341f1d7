"""SageMaker's training-job API through boto3 (Debian's python3-boto3, the
real client) against a real cairnd with an object root: credentials from
`cairn token create --aws`, SigV4 refusals (wrong secret, unknown key,
skewed clock, revoked token), roles (a viewer's key), validation, the
object root's checks, paging and filters, stop and the waiter, and the
audit log. Skipped without python3-boto3."""
import datetime
import os
import re
import sys
import tempfile
from unittest import mock

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "http"))
import webui  # noqa: E402

boto3 = pytest.importorskip("boto3", reason="apt-get install python3-boto3")
botocore_exceptions = pytest.importorskip("botocore.exceptions")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("CAIRN_BIN_DIR") or os.path.join(ROOT, "build", "bin")
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


@pytest.fixture(scope="module")
def objects():
    d = tempfile.mkdtemp(prefix="cairn-objects-")
    for sub in ("my-bucket/data/train", "my-bucket/data/test", "local/val"):
        os.makedirs(os.path.join(d, sub))
    with open(os.path.join(d, "my-bucket/data/train/a.csv"), "w") as f:
        f.write("1,2\n")
    return d


@pytest.fixture(scope="module")
def server(objects):
    s = webui.Cairnd(BIN, ["--object-root", objects])
    yield s
    s.stop()


def keys(server, name, role):
    out = server.cli("token", "create", "--name", name, "--role", role,
                     "--aws")
    assert "[%s]" % name in out
    return (re.search(r"aws_access_key_id = (\S+)", out).group(1),
            re.search(r"aws_secret_access_key = (\S+)", out).group(1))


def client(server, key_id, secret):
    return boto3.client(
        "sagemaker", endpoint_url=server.base, region_name="eu-west-1",
        aws_access_key_id=key_id, aws_secret_access_key=secret,
        config=boto3.session.Config(retries={"max_attempts": 1}))


@pytest.fixture(scope="module")
def editor(server):
    return client(server, *keys(server, "ed", "editor"))


def job(name, objects, **overrides):
    request = dict(
        TrainingJobName=name,
        AlgorithmSpecification={
            "TrainingImage": "localhost/train:1", "TrainingInputMode": "File",
            "MetricDefinitions": [{"Name": "validation:loss",
                                   "Regex": "val_loss=([0-9.]+)"}]},
        RoleArn=ROLE,
        InputDataConfig=[
            {"ChannelName": "train", "DataSource": {"S3DataSource": {
                "S3DataType": "S3Prefix",
                "S3Uri": "s3://my-bucket/data/train/"}}},
            {"ChannelName": "validation", "DataSource": {
                "FileSystemDataSource": {
                    "FileSystemId": "fs-0123456789abcdef0", "FileSystemAccessMode": "ro",
                    "FileSystemType": "EFS",
                    "DirectoryPath": os.path.join(objects, "local/val")}}}],
        OutputDataConfig={"S3OutputPath": "s3://my-bucket/output"},
        ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1,
                        "VolumeSizeInGB": 1},
        StoppingCondition={"MaxRuntimeInSeconds": 600},
        HyperParameters={"epochs": "3"})
    request.update(overrides)
    return request


def error_of(call, *args, **kwargs):
    with pytest.raises(botocore_exceptions.ClientError) as e:
        call(*args, **kwargs)
    err = e.value.response["Error"]
    assert len(err["Message"]) < 1024
    return err["Code"], err["Message"], \
        e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_create_describe_list_stop_and_waiter(server, editor, objects):
    arn = editor.create_training_job(**job("xgb-1", objects))["TrainingJobArn"]
    assert arn.endswith(":training-job/xgb-1")
    d = editor.describe_training_job(TrainingJobName="xgb-1")
    assert d["TrainingJobStatus"] == "InProgress"
    assert [c["ChannelName"] for c in d["InputDataConfig"]] == \
        ["train", "validation"]
    assert d["HyperParameters"] == {"epochs": "3"}
    assert d["ModelArtifacts"]["S3ModelArtifacts"] == \
        "s3://my-bucket/output/xgb-1/output/model.tar.gz"
    assert isinstance(d["CreationTime"], datetime.datetime)
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
    with mock.patch("botocore.auth.datetime") as dt:
        dt.datetime.utcnow.return_value = skewed
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


def test_kill_9_loses_and_doubles_no_job(objects):
    first = webui.Cairnd(BIN, ["--object-root", objects])
    try:
        key_id, secret = keys(first, "k9", "editor")
        sm = client(first, key_id, secret)
        for i in range(3):
            sm.create_training_job(**job("k9-%d" % i, objects))
        first.proc.kill()  # SIGKILL: no shutdown
        first.proc.wait(10)
        second = webui.Cairnd(BIN, ["--object-root", objects],
                              reuse_dir=first.dir)
    except Exception:
        first.stop()
        raise
    try:
        # The same AWS key works after the restart (token and key file
        # survive); every acknowledged job is there once.
        sm = client(second, key_id, secret)
        names = sorted(s["TrainingJobName"] for s in
                       sm.list_training_jobs()["TrainingJobSummaries"])
        assert names == ["k9-0", "k9-1", "k9-2"]
        with pytest.raises(sm.exceptions.ResourceInUse):
            sm.create_training_job(**job("k9-1", objects))
    finally:
        second.stop()
