"""docs/sagemaker.md's flow with a client nobody here wrote: Debian's AWS
CLI (/usr/bin/aws, awscli 2.9) against a real cairnd and real podman.
Credentials come from the documented `cairn token create ... --aws >>
~/.aws/credentials` appended to a file that already holds a real profile;
the "bring your own container" example (examples/sagemaker_byoc) is built
and run as a training job, described, listed, tagged, stopped, tuned, and
its log read with `aws logs tail` and `aws logs get-log-events`. This CLI
ignores a profile's endpoint, so every call passes --endpoint-url.
The container tests are skipped when podman cannot run a container."""
import configparser
import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "http"))
import webui  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("CAIRN_BIN_DIR") or os.path.join(ROOT, "build", "bin")
AWS = "/usr/bin/aws"  # Debian's awscli; `aws` on PATH may be another.
IMAGE = "localhost/cairn-linear-byoc:1"
GROUP = "/aws/sagemaker/TrainingJobs"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
REAL_PROFILE = ("[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")


@pytest.fixture(scope="module")
def home():
    """A HOME whose ~/.aws/credentials holds a real profile (no final
    newline, the hard case for an append) and ~/.aws/config a region."""
    d = tempfile.mkdtemp(prefix="cairn-awscli-")
    os.makedirs(os.path.join(d, ".aws"))
    with open(os.path.join(d, ".aws", "credentials"), "w") as f:
        f.write(REAL_PROFILE)
    with open(os.path.join(d, ".aws", "config"), "w") as f:
        f.write("[default]\nregion = us-east-1\n")
    return d


@pytest.fixture(scope="module")
def objects():
    d = tempfile.mkdtemp(prefix="cairn-objects-")
    os.makedirs(os.path.join(d, "my-bucket", "linear", "train"))
    with open(os.path.join(d, "my-bucket/linear/train/points.csv"), "w") as f:
        for i in range(11):
            f.write("%.1f,%.1f\n" % (i / 10, 3 * i / 10 + 1))
    return d


@pytest.fixture(scope="module")
def server(objects):
    s = webui.Cairnd(BIN, ["--object-root", objects, "--max-running-jobs",
                           "8", "--grace-seconds", "2"])
    yield s
    s.stop()
    data_dir = os.path.realpath(os.path.join(s.dir, "data"))
    names = subprocess.run(
        ["podman", "ps", "--all", "--quiet", "--filter",
         "label=cairn.data_dir=" + data_dir],
        capture_output=True, text=True).stdout.split()
    if names:
        subprocess.run(["podman", "rm", "--force", "--time", "0", *names],
                       capture_output=True)


@pytest.fixture(scope="module")
def image():
    """docs/sagemaker.md's build of the example image."""
    base = subprocess.run([os.path.join(ROOT, "tests/containers/ensure_image.sh")])
    if base.returncode == 77:
        pytest.skip("podman cannot run a container here")
    assert base.returncode == 0
    subprocess.run(["podman", "build", "-q", "--pull=never", "-t", IMAGE,
                    os.path.join(ROOT, "examples/sagemaker_byoc")],
                   check=True, capture_output=True)


def env_of(home):
    return {"HOME": home, "PATH": "/usr/bin:/bin", "AWS_PAGER": "",
            "AWS_DEFAULT_REGION": "us-east-1",
            "LANG": "C.UTF-8"}


@pytest.fixture(scope="module")
def profiles(server, home):
    """ml-team (editor) and ml-viewer (viewer), appended exactly as the docs
    say; returns the Cairn secrets the command printed to stderr."""
    secrets = {}
    for name, role in (("ml-team", "editor"), ("ml-viewer", "viewer")):
        out = subprocess.run(
            ["sh", "-c", '"$CAIRN" --server "$SERVER" token create --name "$1" '
             '--role "$2" --aws >> ~/.aws/credentials', "sh", name, role],
            env=dict(env_of(home), CAIRN=os.path.join(BIN, "cairn"),
                     SERVER="127.0.0.1:%d" % server.grpc_port,
                     CAIRN_TOKEN=server.token),
            capture_output=True, text=True, check=True)
        assert out.stdout == ""
        secrets[name] = out.stderr.strip().rsplit(" ", 1)[-1]
    return secrets


def aws(server, home, *args, profile="ml-team", check=True):
    """`aws --endpoint-url URL --profile P ARGS`: the parsed JSON output
    (None when empty), or (exit code, stderr) when check is False and the
    call fails."""
    p = subprocess.run([AWS, "--endpoint-url", server.base, "--profile",
                        profile, "--output", "json", *args],
                       env=env_of(home), capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        assert not check, "aws %s: %s" % (" ".join(args), p.stderr)
        return p.returncode, p.stderr
    return json.loads(p.stdout) if p.stdout.strip() else p.stdout


def training_job(name, **hyperparameters):
    hps = {"epochs": "5", "learning_rate": "0.1"}
    hps.update(hyperparameters)
    return {
        "TrainingJobName": name,
        "AlgorithmSpecification": {
            "TrainingImage": IMAGE, "TrainingInputMode": "File",
            "MetricDefinitions": [{"Name": "loss",
                                   "Regex": "loss=([0-9.e+-]+);"}]},
        "RoleArn": ROLE,
        "InputDataConfig": [{"ChannelName": "train", "DataSource": {
            "S3DataSource": {"S3DataType": "S3Prefix",
                             "S3Uri": "s3://my-bucket/linear/train/"}}}],
        "OutputDataConfig": {"S3OutputPath": "s3://my-bucket/output"},
        "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1,
                           "VolumeSizeInGB": 1},
        "StoppingCondition": {"MaxRuntimeInSeconds": 120},
        "HyperParameters": hps}


def create(server, home, request):
    path = os.path.join(home, request["TrainingJobName"] + ".json")
    with open(path, "w") as f:
        json.dump(request, f)
    return aws(server, home, "sagemaker", "create-training-job",
               "--cli-input-json", "file://" + path)


def wait_status(server, home, name, statuses, seconds=90):
    deadline = time.time() + seconds
    while True:
        d = aws(server, home, "sagemaker", "describe-training-job",
                "--training-job-name", name)
        if d["TrainingJobStatus"] in statuses:
            return d
        assert time.time() < deadline, d["TrainingJobStatus"]
        time.sleep(0.5)


def tail(server, home, prefix, profile="ml-team"):
    p = subprocess.run(
        [AWS, "--endpoint-url", server.base, "--profile", profile, "logs",
         "tail", GROUP, "--log-stream-name-prefix", prefix, "--since", "1h",
         "--format", "short"],
        env=env_of(home), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_token_aws_appends_a_readable_profile(server, home, profiles):
    with open(os.path.join(home, ".aws", "credentials")) as f:
        text = f.read()
    assert text.startswith(REAL_PROFILE + "\n")
    parsed = configparser.ConfigParser()
    parsed.read_string(text)
    assert parsed.sections() == ["default", "ml-team", "ml-viewer"]
    # The AWS CLI and boto3 read every profile, the user's own included.
    for profile, key in (("default", "AKIAIOSFODNN7EXAMPLE"),
                         ("ml-team", parsed["ml-team"]["aws_access_key_id"])):
        got = subprocess.run(
            [AWS, "configure", "get", "aws_access_key_id", "--profile",
             profile], env=env_of(home), capture_output=True, text=True)
        assert got.stdout.strip() == key, got.stderr
    boto = subprocess.run(
        ["/usr/bin/python3", "-c",
         "import boto3\nfor p in ('default', 'ml-team', 'ml-viewer'):\n"
         "  print(boto3.Session(profile_name=p).get_credentials().access_key)"],
        env=env_of(home), capture_output=True, text=True)
    assert boto.stdout.split() == [
        "AKIAIOSFODNN7EXAMPLE", parsed["ml-team"]["aws_access_key_id"],
        parsed["ml-viewer"]["aws_access_key_id"]], boto.stderr
    # The Cairn secret printed to stderr is the token's.
    status, studies = server.rest("GET", "studies", token=profiles["ml-team"])
    assert status == 200, studies
    assert aws(server, home, "sagemaker", "list-training-jobs") == {
        "TrainingJobSummaries": []}


def test_training_job_flow_and_its_logs(server, home, profiles, image,
                                        objects):
    arn = create(server, home, training_job("linear-1"))["TrainingJobArn"]
    assert arn.endswith(":training-job/linear-1")
    d = wait_status(server, home, "linear-1", ("Completed", "Failed"))
    assert d["TrainingJobStatus"] == "Completed", d.get("FailureReason")
    assert [m["MetricName"] for m in d["FinalMetricDataList"]] == ["loss"]
    listed = aws(server, home, "sagemaker", "list-training-jobs",
                 "--name-contains", "linear")
    assert "linear-1" in [s["TrainingJobName"]
                          for s in listed["TrainingJobSummaries"]]
    model = os.path.join(objects, "my-bucket/output/linear-1/output/"
                         "model.tar.gz")
    assert os.path.getsize(model) > 0

    # The log, the AWS way, also with a viewer's key.
    out = tail(server, home, "linear-1", profile="ml-viewer")
    epochs = [line for line in out.splitlines() if "epoch=" in line]
    assert len(epochs) == 5 and "epoch=1 loss=" in epochs[0], out
    assert "done: w=" in out
    streams = aws(server, home, "logs", "describe-log-streams",
                  "--log-group-name", GROUP, "--log-stream-name-prefix",
                  "linear-1/")["logStreams"]
    assert len(streams) == 1
    name = streams[0]["logStreamName"]
    assert name.startswith("linear-1/algo-1-")
    assert abs(int(name.rsplit("-", 1)[1]) - time.time()) < 600  # seconds
    events = aws(server, home, "logs", "get-log-events", "--log-group-name",
                 GROUP, "--log-stream-name", name, "--start-from-head",
                 profile="ml-viewer")
    messages = [e["message"] for e in events["events"]]
    assert [m for m in messages if m.startswith("epoch=")][0].startswith(
        "epoch=1 loss=")
    ts = [e["timestamp"] for e in events["events"]]
    assert ts == sorted(ts) and ts[0] > 1.6e12  # milliseconds
    assert streams[0]["lastEventTimestamp"] >= ts[-1]
    # Reading goes no further than its token.
    again = aws(server, home, "logs", "get-log-events", "--log-group-name",
                GROUP, "--log-stream-name", name, "--start-from-head",
                "--next-token", events["nextForwardToken"])
    assert again["events"] == []
    assert again["nextForwardToken"] == events["nextForwardToken"]
    # Nothing writes.
    code, err = aws(server, home, "logs", "put-log-events",
                    "--log-group-name", GROUP, "--log-stream-name", name,
                    "--log-events", "timestamp=1,message=forged",
                    check=False)
    assert code != 0 and "AccessDeniedException" in err, err
    code, err = aws(server, home, "logs", "get-log-events", "--log-group-name",
                    "/aws/lambda/other", "--log-stream-name", name,
                    check=False)
    assert "ResourceNotFoundException" in err, err
    # A viewer reads but creates nothing.
    code, err = aws(server, home, "sagemaker", "create-training-job",
                    "--cli-input-json", "file://" + os.path.join(
                        home, "linear-1.json"), profile="ml-viewer",
                    check=False)
    assert "AccessDenied" in err, err


def test_a_running_jobs_log_stop_and_tags(server, home, profiles, image):
    create(server, home, training_job("linear-stop", epochs="200",
                                      epoch_seconds="0.5"))
    deadline = time.time() + 60
    while "epoch=2 " not in tail(server, home, "linear-stop/"):
        assert time.time() < deadline
        time.sleep(0.5)
    aws(server, home, "sagemaker", "stop-training-job", "--training-job-name",
        "linear-stop")
    d = wait_status(server, home, "linear-stop", ("Stopped",))
    arn = d["TrainingJobArn"]
    aws(server, home, "sagemaker", "add-tags", "--resource-arn", arn,
        "--tags", "Key=team,Value=ml")
    assert aws(server, home, "sagemaker", "list-tags", "--resource-arn",
               arn)["Tags"] == [{"Key": "team", "Value": "ml"}]
    aws(server, home, "sagemaker", "delete-tags", "--resource-arn", arn,
        "--tag-keys", "team")
    assert aws(server, home, "sagemaker", "list-tags", "--resource-arn",
               arn)["Tags"] == []


def test_hostile_log_bytes_arrive_valid_and_cut(server, home, profiles,
                                                image):
    request = training_job("noisy-1")
    request["AlgorithmSpecification"]["ContainerEntrypoint"] = [
        "python3", "-c",
        "import sys; o = sys.stdout.buffer; "
        "o.write(b'bin \\xff\\xfe\\x00 end\\n' + b'y' * 600000 + b'\\n'); "
        "o.flush()"]
    create(server, home, request)
    wait_status(server, home, "noisy-1", ("Completed",))
    [stream] = aws(server, home, "logs", "describe-log-streams",
                   "--log-group-name", GROUP, "--log-stream-name-prefix",
                   "noisy-1/")["logStreams"]
    events = aws(server, home, "logs", "get-log-events", "--log-group-name",
                 GROUP, "--log-stream-name", stream["logStreamName"],
                 "--start-from-head")["events"]
    messages = [e["message"] for e in events]
    binary = [m for m in messages if m.startswith("bin ")]
    assert binary == ["bin \ufffd\ufffd\x00 end"]
    pieces = [m for m in messages if set(m) == {"y"}]
    assert len(pieces) > 2 and sum(map(len, pieces)) == 600000
    assert max(map(len, pieces)) <= 262118


def test_small_tuning_job(server, home, profiles, image):
    job = training_job("unused")
    definition = {k: job[k] for k in (
        "AlgorithmSpecification", "RoleArn", "InputDataConfig",
        "OutputDataConfig", "ResourceConfig", "StoppingCondition")}
    definition["StaticHyperParameters"] = {"epochs": "8"}
    request = {
        "HyperParameterTuningJobName": "linear-tune",
        "HyperParameterTuningJobConfig": {
            "Strategy": "Random",
            "HyperParameterTuningJobObjective": {"Type": "Minimize",
                                                 "MetricName": "loss"},
            "ResourceLimits": {"MaxNumberOfTrainingJobs": 2,
                               "MaxParallelTrainingJobs": 2},
            "ParameterRanges": {"ContinuousParameterRanges": [
                {"Name": "learning_rate", "MinValue": "0.01",
                 "MaxValue": "0.2"}]}},
        "TrainingJobDefinition": definition}
    path = os.path.join(home, "tune.json")
    with open(path, "w") as f:
        json.dump(request, f)
    aws(server, home, "sagemaker", "create-hyper-parameter-tuning-job",
        "--cli-input-json", "file://" + path)
    deadline = time.time() + 150
    while True:
        d = aws(server, home, "sagemaker", "describe-hyper-parameter-tuning-job",
                "--hyper-parameter-tuning-job-name", "linear-tune")
        if d["HyperParameterTuningJobStatus"] != "InProgress":
            break
        assert time.time() < deadline, d["TrainingJobStatusCounters"]
        time.sleep(1)
    assert d["HyperParameterTuningJobStatus"] == "Completed"
    assert d["TrainingJobStatusCounters"]["Completed"] == 2
    best = d["BestTrainingJob"]["TrainingJobName"]
    jobs = aws(server, home, "sagemaker",
               "list-training-jobs-for-hyper-parameter-tuning-job",
               "--hyper-parameter-tuning-job-name", "linear-tune")
    names = [s["TrainingJobName"] for s in jobs["TrainingJobSummaries"]]
    assert best in names and len(names) == 2
    # A tuning job's training job has its own log stream.
    out = tail(server, home, best + "/")
    assert sum("epoch=" in line for line in out.splitlines()) == 8, out


def check_shape(value, shape, where):
    """`value` (parsed JSON) fits botocore's `shape`: no member the model
    lacks, required ones present, types, enums and minimums."""
    t = shape.type_name
    if t == "structure":
        assert isinstance(value, dict), where
        for name in shape.required_members:
            assert name in value, "%s.%s missing" % (where, name)
        for name, v in value.items():
            assert name in shape.members, "%s.%s not in the model" % (
                where, name)
            check_shape(v, shape.members[name], where + "." + name)
    elif t == "list":
        assert isinstance(value, list), where
        for i, v in enumerate(value):
            check_shape(v, shape.member, "%s[%d]" % (where, i))
    elif t in ("long", "integer"):
        assert isinstance(value, int) and not isinstance(value, bool), where
        assert value >= shape.metadata.get("min", value), where
    elif t == "boolean":
        assert isinstance(value, bool), where
    elif t == "string":
        assert isinstance(value, str), where
        assert len(value) >= shape.metadata.get("min", 0), where
        if shape.enum:
            assert value in shape.enum, where
    else:
        raise AssertionError("%s: unexpected type %s" % (where, t))


def test_logs_responses_match_botocores_model(server, home, profiles, image):
    """The raw bodies of every logs operation cairnd serves, checked against
    Debian's botocore model (botocore itself drops what it does not know)."""
    import boto3
    creds = configparser.ConfigParser()
    creds.read(os.path.join(home, ".aws", "credentials"))
    logs = boto3.client(
        "logs", endpoint_url=server.base, region_name="us-east-1",
        aws_access_key_id=creds["ml-viewer"]["aws_access_key_id"],
        aws_secret_access_key=creds["ml-viewer"]["aws_secret_access_key"])
    checked = []

    def after_call(http_response, model, **kwargs):
        check_shape(json.loads(http_response.content), model.output_shape,
                    model.name)
        checked.append(model.name)

    logs.meta.events.register("after-call.logs", after_call)
    logs.describe_log_groups()
    streams = logs.describe_log_streams(
        logGroupName=GROUP, orderBy="LastEventTime", descending=True)
    assert streams["logStreams"], streams
    name = streams["logStreams"][0]["logStreamName"]
    forward = logs.get_log_events(logGroupName=GROUP, logStreamName=name,
                                  startFromHead=True, limit=2)
    assert len(forward["events"]) == 2
    logs.get_log_events(logGroupName=GROUP, logStreamName=name,
                        nextToken=forward["nextBackwardToken"])
    pages = logs.get_paginator("filter_log_events").paginate(
        logGroupName=GROUP, PaginationConfig={"PageSize": 3})
    assert sum(len(p["events"]) for p in pages) > 3
    assert checked[:4] == ["DescribeLogGroups", "DescribeLogStreams",
                           "GetLogEvents", "GetLogEvents"]
    assert checked.count("FilterLogEvents") > 1
