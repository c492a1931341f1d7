#!/usr/bin/python3
"""Slurm vs local executor benchmark driver (run it through run.sh).

For each executor: a fresh cairnd (--auth=none, its own data dir) runs a
study of the toy trainer (one step, no sleep) with --sequential trials one at
a time (seconds per trial = dispatch overhead + the program's own run), then
a study of --trials trials, 4 at a time (trials per minute). Time runs from
CreateStudy to the study leaving ACTIVE. Prints one table with slurm/local
ratios.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--bin", required=True)
ap.add_argument("--root", required=True)
ap.add_argument("--trials", type=int, default=50)
ap.add_argument("--sequential", type=int, default=5)
a = ap.parse_args()

gen = tempfile.mkdtemp(prefix="cairn-stubs-")
# Debian's protoc, as the build uses (grpc_tools' bundled 3.5 refuses proto3
# `optional`); study.proto imports the other protos.
v1 = os.path.join(a.root, "proto", "cairn", "v1")
subprocess.run(["protoc", "-I", os.path.join(a.root, "proto"),
                "--python_out=" + gen, "--grpc_out=" + gen,
                "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin"]
               + sorted("cairn/v1/" + f for f in os.listdir(v1) if f.endswith(".proto")),
               check=True)
sys.path.insert(0, gen)
import grpc  # noqa: E402
from cairn.v1 import study_pb2, study_service_pb2, study_service_pb2_grpc  # noqa: E402


def start_cairnd(executor, data_dir):
    port_file = os.path.join(data_dir, "port")
    log = open(os.path.join(data_dir, "cairnd.log"), "w")
    proc = subprocess.Popen(
        [os.path.join(a.bin, "cairnd"), "--data-dir", data_dir, "--listen",
         "127.0.0.1:0", "--metrics-listen", "", "--http-listen", "", "--gpus", "0",
         "--auth=none",
         "--port-file", port_file, "--max-running-jobs", "4",
         "--executor=" + executor], stdout=log, stderr=subprocess.STDOUT)
    t0 = time.monotonic()
    while not os.path.exists(port_file) or not open(port_file).read().strip():
        if proc.poll() is not None or time.monotonic() - t0 > 60:
            sys.exit(f"cairnd ({executor}) did not start; see {data_dir}/cairnd.log")
        time.sleep(0.01)
    port = open(port_file).read().strip()
    return proc, study_service_pb2_grpc.StudyServiceStub(
        grpc.insecure_channel("127.0.0.1:" + port))


def run_study(stub, name, trials, parallel):
    spec = study_pb2.StudySpec(
        algorithm=study_pb2.StudySpec.RANDOM_SEARCH, max_trials=trials,
        max_parallel_trials=parallel)
    p = spec.parameters.add(parameter_id="x", type=study_pb2.ParameterSpec.DOUBLE)
    p.min_value, p.max_value = 0.0, 1.0
    spec.metrics.add(metric_id="loss", goal=study_pb2.MetricSpec.MINIMIZE)
    spec.job_template.command.extend(
        ["/usr/bin/python3", os.path.join(a.root, "tests/jobs/toy_trainer.py")])
    spec.job_template.env["TOY_STEPS"] = "1"
    spec.job_template.env["TOY_SLEEP"] = "0"
    t0 = time.monotonic()
    study = stub.CreateStudy(study_service_pb2.CreateStudyRequest(
        study=study_pb2.Study(display_name=name, spec=spec)))
    while True:
        s = stub.GetStudy(study_service_pb2.GetStudyRequest(name=study.name))
        if s.state != study_pb2.Study.ACTIVE:
            break
        time.sleep(0.05)
    wall = time.monotonic() - t0
    if s.state != study_pb2.Study.COMPLETED:
        t = stub.ListTrials(study_service_pb2.ListTrialsRequest(parent=study.name))
        sys.exit(f"{name}: study ended {s.state}: {s.inactive_reason}; "
                 f"first trial's job: {t.trials[0].job.message}")
    return wall


results = {}
for executor in ("local", "slurm"):
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as d:
        os.chmod(d, 0o755)  # The job user (nobody when root) reaches it.
        print(f"{executor}...", file=sys.stderr, flush=True)
        proc, stub = start_cairnd(executor, d)
        try:
            seq = run_study(stub, "seq", a.sequential, 1)
            par = run_study(stub, "par", a.trials, 4)
        finally:
            proc.terminate()
            proc.wait()
    results[executor] = (seq / a.sequential, a.trials / par * 60.0)

local, slurm = results["local"], results["slurm"]
print(f"{'':38} {'local':>10} {'slurm':>10} {'slurm/local':>12}")
print(f"{'seconds per trial, one at a time':38} {local[0]:10.3f} {slurm[0]:10.3f} "
      f"{slurm[0] / local[0]:12.2f}")
print(f"{'trials per minute, ' + str(a.trials) + ' trials, 4 at a time':38} "
      f"{local[1]:10.1f} {slurm[1]:10.1f} {slurm[1] / local[1]:12.2f}")
