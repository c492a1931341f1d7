"""What the boto3 tests of SageMaker's API share (boto3_test.py,
boto3_tuning_test.py, boto3_shape_test.py, ...): a real cairnd with an
object root and the test image (image/, built by ensure_image.sh), keys
from `cairn token create --aws`, requests of training and tuning jobs, and
waits. Every client checks every response cairnd sends against botocore's
service model (aws_model.py) and fails the call that got a response out of
shape. Importing it skips the test module without python3-boto3."""
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "http"))
import webui  # noqa: E402
from aws_model import Model  # noqa: E402

boto3 = pytest.importorskip("boto3", reason="apt-get install python3-boto3")
botocore_exceptions = pytest.importorskip("botocore.exceptions")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("CAIRN_BIN_DIR") or os.path.join(ROOT, "build", "bin")
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
HERE = os.path.dirname(os.path.abspath(__file__))


def _image_tag():
    """ensure_image.sh's content tag: this checkout's image, not another's."""
    digest = hashlib.sha256()
    for name in ("Containerfile", "train"):
        with open(os.path.join(HERE, "image", name), "rb") as f:
            digest.update(f.read())
    return "localhost/cairn-sagemaker-trainer:" + digest.hexdigest()[:12]


IMAGE = _image_tag()
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
    assert built.returncode == 0, "ensure_image.sh failed (see its output)"


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
def server(request, objects, image):
    """A cairnd for the test module, with the module's SERVER_ARGS if it
    has its own."""
    args = getattr(request.module, "SERVER_ARGS", SERVER_ARGS)
    s = webui.Cairnd(BIN, ["--object-root", objects, *args])
    yield s
    s.stop()
    remove_containers(s)


def keys(server, name, role):
    out = server.cli("token", "create", "--name", name, "--role", role,
                     "--aws")
    assert "[%s]" % name in out
    return (re.search(r"aws_access_key_id = (\S+)", out).group(1),
            re.search(r"aws_secret_access_key = (\S+)", out).group(1))


MODEL = Model()
# (operation, HTTP status) of every response checked, in this process.
CHECKED = set()


def check_response(http_response, model, **kwargs):
    """botocore's after-call hook: the raw response against the model."""
    errors = MODEL.response_errors(model.name, http_response.status_code,
                                   http_response.content)
    CHECKED.add((model.name, http_response.status_code))
    assert not errors, "\n".join(errors)


def client(server, key_id, secret):
    sm = boto3.client(
        "sagemaker", endpoint_url=server.base, region_name="eu-west-1",
        aws_access_key_id=key_id, aws_secret_access_key=secret,
        config=boto3.session.Config(retries={"max_attempts": 1}))
    sm.meta.events.register("after-call.sagemaker", check_response)
    return sm


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


def finished_tuning(sm, name, seconds=120, running=("InProgress",)):
    """DescribeHyperParameterTuningJob once the job's status is not one of
    `running`."""
    deadline = time.time() + seconds
    while True:
        d = sm.describe_hyper_parameter_tuning_job(
            HyperParameterTuningJobName=name)
        if d["HyperParameterTuningJobStatus"] not in running:
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


def restart_after_kill_9(first, objects, ready, seconds=60):
    """Once ready() holds, kills cairnd `first` with SIGKILL (no shutdown)
    and starts another on its data dir; returns the new one."""
    deadline = time.time() + seconds
    while not ready():
        assert time.time() < deadline
        time.sleep(0.1)
    first.proc.kill()
    first.proc.wait(10)
    return webui.Cairnd(BIN, ["--object-root", objects, *SERVER_ARGS],
                        reuse_dir=first.dir)
