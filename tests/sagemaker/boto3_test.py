"""SageMaker's training-job API through boto3 (Debian's python3-boto3, the
real client) against a real cairnd with an object root: credentials from
`cairn token create --aws`, SigV4 refusals (wrong secret, unknown key,
skewed clock, revoked token), roles (a viewer's key), validation, the
object root's checks, paging and filters, stop and the waiter, and the
audit log; and jobs that run: the container contract in real podman with
the test image (image/, built by ensure_image.sh), model.tar.gz and
output.tar.gz in the object root, FailureReason, MaxRuntimeInSeconds.
Skipped without python3-boto3 or when podman cannot run a container."""
import datetime
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from unittest import mock

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "http"))
import webui  # noqa: E402

boto3 = pytest.importorskip("boto3", reason="apt-get install python3-boto3")
botocore_exceptions = pytest.importorskip("botocore.exceptions")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("CAIRN_BIN_DIR") or os.path.join(ROOT, "build", "bin")
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
IMAGE = "localhost/cairn-sagemaker-trainer:1"
# Jobs of the API tests stay InProgress this long; cairnd's runtime limit
# ends them (MaxRuntimeInSeconds) if the test does not.
JOB_SECONDS = "30"


@pytest.fixture(scope="module")
def objects():
    d = tempfile.mkdtemp(prefix="cairn-objects-")
    for sub in ("my-bucket/data/train", "my-bucket/data/test", "local/val"):
        os.makedirs(os.path.join(d, sub))
    with open(os.path.join(d, "my-bucket/data/train/a.csv"), "w") as f:
        f.write("1,2\n")
    with open(os.path.join(d, "local/val/v.csv"), "w") as f:
        f.write("3,4\n")
    return d


@pytest.fixture(scope="module")
def image():
    built = subprocess.run(
        [os.path.join(os.path.dirname(__file__), "ensure_image.sh")])
    if built.returncode == 77:
        pytest.skip("podman cannot run a container here")
    assert built.returncode == 0


# No GP deadline: a loaded machine would otherwise answer with the
# quasi-random design, which the warm-start test tells apart from the GP.
SERVER_ARGS = ["--max-running-jobs", "8", "--grace-seconds", "2",
               "--gp-suggest-deadline", "0"]


def remove_containers(cairnd):
    """Removes the containers a stopped cairnd left running."""
    data_dir = os.path.realpath(os.path.join(cairnd.dir, "data"))
    names = subprocess.run(
        ["podman", "ps", "--all", "--quiet",
         "--filter", "label=cairn.data_dir=" + data_dir],
        capture_output=True, text=True).stdout.split()
    if names:
        subprocess.run(["podman", "rm", "--force", "--time", "0", *names],
                       capture_output=True)


@pytest.fixture(scope="module")
def server(objects, image):
    s = webui.Cairnd(BIN, ["--object-root", objects, *SERVER_ARGS])
    yield s
    s.stop()
    remove_containers(s)


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
            "TrainingImage": IMAGE, "TrainingInputMode": "File",
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
        StoppingCondition={"MaxRuntimeInSeconds": 120},
        HyperParameters={"epochs": "3", "sleep": JOB_SECONDS})
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
        deadline = time.time() + 30
        while not os.path.exists(runs):  # its first attempt runs
            assert time.time() < deadline
            time.sleep(0.1)
        first.proc.kill()  # SIGKILL: no shutdown
        first.proc.wait(10)
        second = webui.Cairnd(BIN, ["--object-root", objects, *SERVER_ARGS],
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


def running_jobs(cairnd):
    """(trial, replica) of each container of cairnd's data dir that runs."""
    data_dir = os.path.realpath(os.path.join(cairnd.dir, "data"))
    out = subprocess.run(
        ["podman", "ps", "--format", "json",
         "--filter", "label=cairn.data_dir=" + data_dir],
        capture_output=True, text=True, check=True).stdout
    return [(c["Labels"].get("cairn.study"), c["Labels"].get("cairn.trial"),
             c["Labels"].get("cairn.replica"))
            for c in json.loads(out or "[]")]


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
        deadline = time.time() + 60
        while not running_jobs(first):  # kill it while jobs run
            assert time.time() < deadline
            time.sleep(0.1)
        first.proc.kill()  # SIGKILL: no shutdown
        first.proc.wait(10)
        second = webui.Cairnd(BIN, ["--object-root", objects, *SERVER_ARGS],
                              reuse_dir=first.dir)
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


def finished(sm, name, seconds=90):
    """DescribeTrainingJob once the job is Completed, Failed or Stopped."""
    deadline = time.time() + seconds
    while True:
        d = sm.describe_training_job(TrainingJobName=name)
        if d["TrainingJobStatus"] in ("Completed", "Failed", "Stopped"):
            return d
        assert time.time() < deadline, d["TrainingJobStatus"]
        time.sleep(0.3)


def archive(objects, name, file):
    """The files of <S3OutputPath>/<name>/output/<file> by name."""
    path = os.path.join(objects, "my-bucket/output", name, "output", file)
    with tarfile.open(path) as t:
        return {m.name: t.extractfile(m).read() for m in t.getmembers()
                if m.isfile()}


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


def tuning(name, objects, **config):
    """A CreateHyperParameterTuningJob request tuning the test image's
    epochs (its last val_loss is 1/epochs)."""
    c = dict(
        Strategy="Bayesian",
        HyperParameterTuningJobObjective={"Type": "Minimize",
                                          "MetricName": "validation:loss"},
        ResourceLimits={"MaxNumberOfTrainingJobs": 6,
                        "MaxParallelTrainingJobs": 2},
        ParameterRanges={"IntegerParameterRanges": [
            {"Name": "epochs", "MinValue": "1", "MaxValue": "9"}]})
    c.update(config)
    d = job("unused", objects)
    definition = {k: d[k] for k in (
        "AlgorithmSpecification", "RoleArn", "InputDataConfig",
        "OutputDataConfig", "ResourceConfig", "StoppingCondition")}
    definition["StaticHyperParameters"] = {"sleep": "0"}
    return dict(HyperParameterTuningJobName=name,
                HyperParameterTuningJobConfig=c,
                TrainingJobDefinition=definition)


def test_bayesian_tuning_job_finds_its_best_training_job(editor, objects):
    arn = editor.create_hyper_parameter_tuning_job(
        **tuning("tune-b", objects))["HyperParameterTuningJobArn"]
    assert arn.endswith(":hyper-parameter-tuning-job/tune-b")
    deadline = time.time() + 120
    while True:
        d = editor.describe_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="tune-b")
        if d["HyperParameterTuningJobStatus"] != "InProgress":
            break
        assert time.time() < deadline, d["TrainingJobStatusCounters"]
        time.sleep(0.5)
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


def finished_tuning(sm, name, seconds=120):
    """DescribeHyperParameterTuningJob once the job is no longer
    InProgress."""
    deadline = time.time() + seconds
    while True:
        d = sm.describe_hyper_parameter_tuning_job(
            HyperParameterTuningJobName=name)
        if d["HyperParameterTuningJobStatus"] != "InProgress":
            return d
        assert time.time() < deadline, d["TrainingJobStatusCounters"]
        time.sleep(0.5)


def study_trials(server, display_name):
    """The trials of the study behind a job, through Cairn's REST API."""
    status, studies = server.rest("GET", "studies")
    assert status == 200
    [study] = [s for s in studies["studies"]
               if s["displayName"] == display_name]
    status, trials = server.rest("GET", study["name"] + "/trials")
    assert status == 200
    return trials["trials"]


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
    d = editor.describe_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="tune-s")
    assert d["HyperParameterTuningJobStatus"] == "Stopped"
    counters = d["TrainingJobStatusCounters"]
    assert counters["InProgress"] == 0 and counters["Stopped"] >= 1, counters
    assert sum(counters.values()) <= 2
    code, message, _ = error_of(editor.stop_hyper_parameter_tuning_job,
                                HyperParameterTuningJobName="tune-s")
    assert code == "ValidationException" and "Stopped" in message
