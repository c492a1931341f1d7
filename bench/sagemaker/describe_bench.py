"""boto3 describe_training_job round trips per second against a real
cairnd, beside the same job's study read through Cairn's REST API on the
same HTTP port (GET /v1/studies/N with a bearer token, one persistent
connection), in interleaved slices of one run. Prints both and the ratio:
what SigV4, the in-process gRPC calls (LookupStudy + ListTrials) and the
SageMaker view cost over one plain REST read.

  /usr/bin/python3 bench/sagemaker/describe_bench.py [--calls N]
"""
import argparse
import http.client
import os
import re
import statistics
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

        rates = {"boto3": [], "rest": []}
        for _ in range(5):
            for name, call in (("boto3", boto), ("rest", rest)):
                t0 = time.perf_counter()
                for _ in range(args.calls // 5):
                    call()
                rates[name].append((args.calls // 5) /
                                   (time.perf_counter() - t0))
        b, r = statistics.median(rates["boto3"]), statistics.median(
            rates["rest"])
        print("boto3 describe_training_job: %.0f round trips/s" % b)
        print("REST GET /v1/studies/N:      %.0f round trips/s" % r)
        print("ratio (boto3 / REST): %.2fx" % (b / r))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
