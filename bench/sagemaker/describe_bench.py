"""boto3 describe_training_job round trips per second against a real
cairnd, beside, in interleaved slices of one run: the same job's study
read through Cairn's REST API on the same HTTP port (GET /v1/studies/N
with a bearer token, one persistent connection), the same job's study
through the CLI (`cairn study get JOB`, one process per call), and
`cairn jobs describe` of an AI Platform job (one process per call; a
SageMaker job is not an AI Platform job, so it describes its own).
Prints each rate and its ratio to boto3's: what SigV4, the in-process
gRPC calls (LookupStudy + ListTrials) and the SageMaker view cost over a
plain REST read, and what a CLI process costs per call.

  /usr/bin/python3 bench/sagemaker/describe_bench.py [--calls N]
"""
import argparse
import http.client
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "http"))
import webui  # noqa: E402
import boto3  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    args = parser.parse_args()
    objects = tempfile.mkdtemp(prefix="cairn-bench-objects-")
    os.makedirs(os.path.join(objects, "bench-bucket"))
    server = webui.Cairnd(args.bin, ["--object-root", objects])
    try:
        out = server.cli("token", "create", "--name", "bench", "--role",
                         "editor", "--aws")
        sm = boto3.client(
            "sagemaker", endpoint_url=server.base, region_name="us-east-1",
            aws_access_key_id=re.search(r"aws_access_key_id = (\S+)",
                                        out).group(1),
            aws_secret_access_key=re.search(r"aws_secret_access_key = (\S+)",
                                            out).group(1))
        sm.create_training_job(
            TrainingJobName="bench-1",
            AlgorithmSpecification={"TrainingImage": "localhost/t:1",
                                    "TrainingInputMode": "File"},
            RoleArn="arn:aws:iam::123456789012:role/R",
            OutputDataConfig={"S3OutputPath": "s3://bench-bucket/out"},
            ResourceConfig={"InstanceType": "ml.m5.large",
                            "InstanceCount": 1, "VolumeSizeInGB": 1},
            StoppingCondition={"MaxRuntimeInSeconds": 60})
        study = server.ok("GET", "studies")["studies"][0]["name"]
        conn = http.client.HTTPConnection(server.base[len("http://"):])
        headers = {"Authorization": "Bearer " + server.token}

        def rest():
            conn.request("GET", "/v1/" + study, headers=headers)
            r = conn.getresponse()
            r.read()
            assert r.status == 200

        def boto():
            sm.describe_training_job(TrainingJobName="bench-1")

        server.cli("jobs", "submit", "training", "bench_job",
                   "--module-name", "trainer.task", "--package-path",
                   os.path.join(ROOT, "examples", "aiplatform", "trainer"),
                   "--", "--steps", "1")
        cli = [os.path.join(args.bin, "cairn"), "--server",
               "127.0.0.1:%d" % server.grpc_port]
        env = dict(os.environ, CAIRN_TOKEN=server.token)

        def run_cli(*argv):
            subprocess.run(cli + list(argv), env=env, check=True,
                           stdout=subprocess.DEVNULL)

        clients = (
            ("boto3 describe_training_job", boto, args.calls),
            ("REST GET /v1/studies/N", rest, args.calls),
            ("cairn study get JOB", lambda: run_cli("study", "get", "bench-1"),
             args.calls // 10),
            ("cairn jobs describe", lambda: run_cli("jobs", "describe",
                                                    "bench_job"),
             args.calls // 10))
        rates = {name: [] for name, _, _ in clients}
        for _ in range(5):
            for name, call, calls in clients:
                t0 = time.perf_counter()
                for _ in range(calls // 5):
                    call()
                rates[name].append((calls // 5) / (time.perf_counter() - t0))
        b = statistics.median(rates[clients[0][0]])
        for name, _, _ in clients:
            rate = statistics.median(rates[name])
            print("%-28s %7.0f round trips/s  (boto3 / it: %.2fx)" %
                  (name + ":", rate, b / rate))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
