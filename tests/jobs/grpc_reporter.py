#!/usr/bin/python3
"""A training job that reports over the Cairn gRPC API and completes itself.

Uses CAIRN_SERVER, CAIRN_STUDY and CAIRN_TRIAL_ID as cairnd sets them; the
Python stubs are generated from $TOY_PROTO_DIR at start. Reports steps
1..5 with AddTrialMeasurement (loss = x + 1/step), then CompleteTrial with a
final measurement of its own (loss = x, step 99).
"""
import os
import subprocess
import sys
import tempfile

args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
x = float(args["x"])
gen = tempfile.mkdtemp(prefix="cairn-stubs-")
proto_dir = os.environ["TOY_PROTO_DIR"]
# Debian's protoc (3.21, as the build uses): grpc_tools bundles protoc 3.5,
# which refuses proto3 `optional`. study.proto imports the other protos.
protos = sorted("cairn/v1/" + f for f in os.listdir(os.path.join(proto_dir, "cairn", "v1"))
                if f.endswith(".proto"))
subprocess.run(["protoc", "-I", proto_dir, "--python_out=" + gen, "--grpc_out=" + gen,
                "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin"] + protos, check=True)
sys.path.insert(0, gen)
import grpc  # noqa: E402
from cairn.v1 import study_pb2, study_service_pb2, study_service_pb2_grpc  # noqa: E402

# The job's own token (cairnd sets CAIRN_TOKEN; it is good for this trial only).
metadata = [("authorization", "Bearer " + os.environ["CAIRN_TOKEN"])]
channel = grpc.insecure_channel(os.environ["CAIRN_SERVER"])
stub = study_service_pb2_grpc.StudyServiceStub(channel)
trial = "%s/trials/%s" % (os.environ["CAIRN_STUDY"], os.environ["CAIRN_TRIAL_ID"])
for step in range(1, 6):
    m = study_pb2.Measurement(step_count=step)
    m.metrics.add(metric_id="loss", value=x + 1.0 / step)
    stub.AddTrialMeasurement(study_service_pb2.AddTrialMeasurementRequest(trial_name=trial, measurement=m),
                             metadata=metadata)
final = study_pb2.Measurement(step_count=99)
final.metrics.add(metric_id="loss", value=x)
stub.CompleteTrial(study_service_pb2.CompleteTrialRequest(name=trial, final_measurement=final),
                   metadata=metadata)
print("reported over gRPC and completed", trial, flush=True)
