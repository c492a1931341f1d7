"""SageMaker's API as boto3's own service model describes it, against a
real cairnd and real podman: every response of every operation Cairn
serves is checked against botocore's model (the fixture's client does it
for each call, aws_model.py), here driven through each operation in each
state a job passes through; every request member of those operations
that Cairn does not support is refused by name (ValidationException), never
ignored; and a training job's times: SecondaryStatusTransitions,
TrainingStartTime when its container started (not when it was queued),
TrainingTimeInSeconds, BillableTimeInSeconds and LastModifiedTime.
Skipped without python3-boto3 or when podman cannot run a container."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from boto3_fixture import (  # noqa: E402,F401 (fixtures)
    objects, image, remove_containers, server, keys, client, editor, job,
    error_of, finished, finished_tuning, archive, tuning, CHECKED, MODEL,
    BIN, SERVER_ARGS, webui)
from botocore import xform_name  # noqa: E402

# The operations Cairn serves (http/sagemaker_api.h).
OPERATIONS = {
    "CreateTrainingJob", "DescribeTrainingJob", "ListTrainingJobs",
    "StopTrainingJob", "CreateHyperParameterTuningJob",
    "DescribeHyperParameterTuningJob",
    "ListTrainingJobsForHyperParameterTuningJob",
    "StopHyperParameterTuningJob", "ListHyperParameterTuningJobs",
    "AddTags", "ListTags", "DeleteTags"}

# The request members Cairn supports (docs/sagemaker.md), as dotted paths
# through the model's input shapes (a list's members under the list's
# name). Every other member of these operations must be refused by name.
_CHANNEL = ["ChannelName", "DataSource", "DataSource.S3DataSource",
            "DataSource.S3DataSource.S3DataType",
            "DataSource.S3DataSource.S3Uri",
            "DataSource.S3DataSource.S3DataDistributionType",
            "DataSource.FileSystemDataSource",
            "DataSource.FileSystemDataSource.FileSystemId",
            "DataSource.FileSystemDataSource.FileSystemAccessMode",
            "DataSource.FileSystemDataSource.FileSystemType",
            "DataSource.FileSystemDataSource.DirectoryPath",
            "ContentType", "CompressionType", "RecordWrapperType",
            "InputMode"]
_TRAINING = ["RoleArn", "InputDataConfig",
             *("InputDataConfig." + m for m in _CHANNEL),
             "OutputDataConfig", "OutputDataConfig.S3OutputPath",
             "ResourceConfig", "ResourceConfig.InstanceType",
             "ResourceConfig.InstanceCount", "ResourceConfig.VolumeSizeInGB",
             "StoppingCondition", "StoppingCondition.MaxRuntimeInSeconds",
             "CheckpointConfig", "CheckpointConfig.S3Uri",
             "CheckpointConfig.LocalPath"]
_ALGORITHM = ["AlgorithmSpecification",
              "AlgorithmSpecification.TrainingImage",
              "AlgorithmSpecification.TrainingInputMode",
              "AlgorithmSpecification.MetricDefinitions",
              "AlgorithmSpecification.MetricDefinitions.Name",
              "AlgorithmSpecification.MetricDefinitions.Regex"]
_TAGS = ["Tags", "Tags.Key", "Tags.Value"]
_RANGES = ["", ".IntegerParameterRanges", ".ContinuousParameterRanges",
           ".CategoricalParameterRanges",
           *(".%sParameterRanges.%s" % (k, m)
             for k in ("Integer", "Continuous")
             for m in ("Name", "MinValue", "MaxValue", "ScalingType")),
           ".CategoricalParameterRanges.Name",
           ".CategoricalParameterRanges.Values"]
_CONFIG = "HyperParameterTuningJobConfig"
_LIST = ["NextToken", "MaxResults", "StatusEquals", "SortBy", "SortOrder"]
_FILTERS = ["NameContains", "CreationTimeAfter", "CreationTimeBefore",
            "LastModifiedTimeAfter", "LastModifiedTimeBefore"]
SUPPORTED = {
    "CreateTrainingJob": {
        "TrainingJobName", "HyperParameters", "Environment", *_ALGORITHM,
        "AlgorithmSpecification.ContainerEntrypoint",
        "AlgorithmSpecification.ContainerArguments", *_TRAINING, *_TAGS},
    "CreateHyperParameterTuningJob": {
        "HyperParameterTuningJobName", _CONFIG,
        *(_CONFIG + "." + m for m in (
            "Strategy", "StrategyConfig", "StrategyConfig."
            "HyperbandStrategyConfig",
            "StrategyConfig.HyperbandStrategyConfig.MinResource",
            "StrategyConfig.HyperbandStrategyConfig.MaxResource",
            "HyperParameterTuningJobObjective",
            "HyperParameterTuningJobObjective.Type",
            "HyperParameterTuningJobObjective.MetricName", "ResourceLimits",
            "ResourceLimits.MaxNumberOfTrainingJobs",
            "ResourceLimits.MaxParallelTrainingJobs",
            "TrainingJobEarlyStoppingType")),
        *(_CONFIG + ".ParameterRanges" + m for m in _RANGES),
        "TrainingJobDefinition",
        *("TrainingJobDefinition." + m for m in (
            "StaticHyperParameters", *_ALGORITHM, *_TRAINING)),
        "WarmStartConfig", "WarmStartConfig.ParentHyperParameterTuningJobs",
        "WarmStartConfig.ParentHyperParameterTuningJobs."
        "HyperParameterTuningJobName", "WarmStartConfig.WarmStartType",
        *_TAGS},
    "DescribeTrainingJob": {"TrainingJobName"},
    "StopTrainingJob": {"TrainingJobName"},
    "ListTrainingJobs": {*_LIST, *_FILTERS},
    "DescribeHyperParameterTuningJob": {"HyperParameterTuningJobName"},
    "StopHyperParameterTuningJob": {"HyperParameterTuningJobName"},
    "ListHyperParameterTuningJobs": {*_LIST, *_FILTERS},
    "ListTrainingJobsForHyperParameterTuningJob": {
        "HyperParameterTuningJobName", *_LIST},
    "AddTags": {"ResourceArn", *_TAGS},
    "ListTags": {"ResourceArn", "NextToken", "MaxResults"},
    "DeleteTags": {"ResourceArn", "TagKeys"},
}


def member_paths(shape_name, prefix=""):
    """(path, shape name) of every member under structure `shape_name`."""
    out = []
    for name, member in MODEL.shapes[shape_name].get("members", {}).items():
        target = member["shape"]
        while MODEL.shapes[target]["type"] == "list":
            target = MODEL.shapes[target]["member"]["shape"]
        path = prefix + name
        out.append((path, member["shape"]))
        if MODEL.shapes[target]["type"] == "structure":
            out.extend(member_paths(target, path + "."))
    return out


def unsupported(operation):
    """The outermost members of `operation` Cairn does not support."""
    supported = SUPPORTED[operation]
    out = []
    for path, shape in member_paths(MODEL.input_shape(operation)):
        parent = path.rpartition(".")[0]
        if path not in supported and (not parent or parent in supported):
            out.append((path, shape))
    return out


def with_member(request, path, value):
    """`request` with the member at dotted `path` set (into the first item
    of a list, making the structures on the way from the model)."""
    request = json.loads(json.dumps(request))
    node = request
    names = path.split(".")
    for name in names[:-1]:
        if name not in node:
            node[name] = {}
        node = node[name]
        if isinstance(node, list):
            node = node[0]
    node[names[-1]] = value
    return request


def test_the_model_names_every_supported_member():
    for operation, supported in SUPPORTED.items():
        paths = {p for p, _ in member_paths(MODEL.input_shape(operation))}
        assert supported <= paths, (operation, supported - paths)
    assert set(SUPPORTED) == OPERATIONS


def test_the_validator_finds_what_breaks_a_shape():
    good = {"TrainingJobSummaries": [{
        "TrainingJobName": "a", "CreationTime": 1.5,
        "TrainingJobStatus": "Completed",
        "TrainingJobArn":
            "arn:aws:sagemaker:local:000000000000:training-job/a"}]}
    body = json.dumps(good).encode()
    assert MODEL.response_errors("ListTrainingJobs", 200, body) == []
    for change, says in (
            (lambda s: s.pop("TrainingJobArn"), "required member"),
            (lambda s: s.update(TrainingJobStatus="Done"), "is not one of"),
            (lambda s: s.update(CreationTime="2024"), "epoch seconds"),
            (lambda s: s.update(Extra=1), "not a member"),
            (lambda s: s.update(TrainingJobName="x" * 64), "length 64"),
            (lambda s: s.update(TrainingJobArn="arn:x"), "does not match"),
            (lambda s: s.update(WarmPoolStatus={"Status": 1}), "not a string")):
        bad = json.loads(body)
        change(bad["TrainingJobSummaries"][0])
        errors = MODEL.response_errors("ListTrainingJobs", 200,
                                       json.dumps(bad).encode())
        assert errors and all(says in e for e in errors[:1]), errors
    assert MODEL.response_errors("StopTrainingJob", 200, b'{"a": 1}')
    assert MODEL.response_errors("StopTrainingJob", 400, b'{"message": "x"}')
    assert MODEL.response_errors(
        "AddTags", 200, json.dumps({"Tags": [
            {"Key": "caf\u00e9 1", "Value": ""}]}).encode()) == []
    assert MODEL.response_errors(
        "AddTags", 200, b'{"Tags": [{"Key": "a;b", "Value": ""}]}')


def test_each_unsupported_member_is_refused_by_name(editor, objects):
    requests = {
        "CreateTrainingJob": job("shape-refused", objects),
        "CreateHyperParameterTuningJob": tuning("shape-refused", objects),
        "ListTrainingJobs": {},
        "ListHyperParameterTuningJobs": {},
        "ListTags": {"ResourceArn": "arn:aws:sagemaker:local:000000000000:"
                                    "training-job/shape-refused"},
    }
    tried = 0
    for operation in sorted(OPERATIONS):
        for path, shape in unsupported(operation):
            request = with_member(requests[operation], path,
                                  MODEL.sample(shape))
            call = getattr(editor, xform_name(operation))
            code, message, status = error_of(call, **request)
            assert (code, status) == ("ValidationException", 400), \
                (operation, path, message)
            assert path.rpartition(".")[2] in message, (path, message)
            tried += 1
    assert tried >= 40, tried  # the model's many members Cairn lacks
    # Nothing was created by a refused request.
    assert error_of(editor.describe_training_job,
                    TrainingJobName="shape-refused")[0] == "ResourceNotFound"
    assert error_of(editor.describe_hyper_parameter_tuning_job,
                    HyperParameterTuningJobName="shape-refused")[0] == \
        "ResourceNotFound"


def transitions(d):
    return [t["Status"] for t in d["SecondaryStatusTransitions"]]


def check_times(d, statuses):
    """The time members of a Describe of an ended job."""
    assert transitions(d) == statuses, d["SecondaryStatusTransitions"]
    steps = d["SecondaryStatusTransitions"]
    assert steps[0]["StartTime"] == d["CreationTime"]
    for a, b in zip(steps, steps[1:]):
        assert a["EndTime"] == b["StartTime"] >= a["StartTime"]
    assert d["LastModifiedTime"] == steps[-1]["StartTime"]
    start, end = d["TrainingStartTime"], d["TrainingEndTime"]
    assert d["CreationTime"] <= start <= end
    seconds = max(1, round((end - start).total_seconds()))
    assert d["TrainingTimeInSeconds"] == d["BillableTimeInSeconds"] == \
        seconds


def test_every_operation_answers_in_the_models_shapes(editor, objects):
    editor.create_training_job(**job(
        "shape-ok", objects, HyperParameters={"epochs": "2", "sleep": "1"},
        Tags=[{"Key": "team", "Value": "ml"}]))
    editor.create_training_job(**job(
        "shape-fail", objects, HyperParameters={"fail": "no rows"}))
    editor.create_training_job(**job(
        "shape-stop", objects, HyperParameters={"sleep": "60"}))
    d = editor.describe_training_job(TrainingJobName="shape-ok")
    assert d["TrainingJobStatus"] == "InProgress"
    assert transitions(d)[0] == "Starting"
    editor.stop_training_job(TrainingJobName="shape-stop")
    check_times(finished(editor, "shape-ok"),
                ["Starting", "Training", "Uploading", "Completed"])
    failed = finished(editor, "shape-fail")
    assert failed["FailureReason"] == "no rows"
    assert transitions(failed)[-1] == "Failed"
    stopped = finished(editor, "shape-stop")
    assert stopped["TrainingJobStatus"] == "Stopped"
    assert transitions(stopped)[-1] == "Stopped"
    listed = editor.list_training_jobs(
        NameContains="shape-", SortBy="Status", SortOrder="Descending",
        LastModifiedTimeAfter=d["CreationTime"])["TrainingJobSummaries"]
    assert {s["TrainingJobName"] for s in listed} == {
        "shape-ok", "shape-fail", "shape-stop"}
    assert all("LastModifiedTime" in s for s in listed)
    arn = d["TrainingJobArn"]
    editor.add_tags(ResourceArn=arn, Tags=[{"Key": "k", "Value": "v"}])
    assert editor.list_tags(ResourceArn=arn)["Tags"] == [
        {"Key": "k", "Value": "v"}, {"Key": "team", "Value": "ml"}]
    editor.delete_tags(ResourceArn=arn, TagKeys=["k"])

    request = tuning("shape-tune", objects, ResourceLimits={
        "MaxNumberOfTrainingJobs": 2, "MaxParallelTrainingJobs": 2})
    editor.create_hyper_parameter_tuning_job(**request)
    editor.describe_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="shape-tune")
    done = finished_tuning(editor, "shape-tune")
    assert done["HyperParameterTuningJobStatus"] == "Completed"
    editor.list_training_jobs_for_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="shape-tune")
    editor.list_hyper_parameter_tuning_jobs(SortBy="CreationTime")
    stop = tuning("shape-tune-s", objects)
    stop["TrainingJobDefinition"]["StaticHyperParameters"]["sleep"] = "60"
    editor.create_hyper_parameter_tuning_job(**stop)
    editor.stop_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="shape-tune-s")
    editor.describe_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="shape-tune-s")
    assert error_of(editor.describe_training_job,
                    TrainingJobName="no-such-job")[0] == "ResourceNotFound"
    # Each operation answered at least once, and every answer was checked
    # against the model (a response out of shape fails its call).
    answered = {op for op, status in CHECKED if status == 200}
    assert OPERATIONS <= answered, OPERATIONS - answered


def test_training_start_time_is_when_the_container_started(objects, image):
    """With one job slot, a second job waits for the first: its
    TrainingStartTime is when its container started, seconds after it was
    created, and the container saw a time at or after it."""
    args = [a for a in SERVER_ARGS] + ["--object-root", objects]
    args[args.index("--max-running-jobs") + 1] = "1"
    s = webui.Cairnd(BIN, args)
    try:
        sm = client(s, *keys(s, "q", "editor"))
        sm.create_training_job(**job("queue-1", objects, HyperParameters={
            "epochs": "1", "sleep": "3"}))
        sm.create_training_job(**job("queue-2", objects, HyperParameters={
            "epochs": "1", "sleep": "0"}))
        first = finished(sm, "queue-1")
        d = finished(sm, "queue-2")
        assert d["TrainingJobStatus"] == "Completed"
        waited = (d["TrainingStartTime"] - d["CreationTime"]).total_seconds()
        assert waited >= 2, waited
        assert d["TrainingStartTime"] >= first["TrainingEndTime"]
        started = json.loads(archive(objects, "queue-2", "model.tar.gz")[
            "manifest.json"])["started"]
        assert d["TrainingStartTime"].timestamp() <= started + 0.001
        check_times(d, ["Starting", "Training", "Uploading", "Completed"])
    finally:
        s.stop()
        remove_containers(s)
