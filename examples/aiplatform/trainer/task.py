"""A tiny AI Platform Training trainer: `python3 -m trainer.task`.

It takes its hyperparameters as --name=value flags and --job-dir, as AI
Platform passes them, "trains" a one-dimensional quadratic for --steps steps
(stdlib only, well under a second), reports the objective through the
cloudml-hypertune file protocol ($CLOUD_ML_HP_METRIC_FILE, metric tag
$CLOUD_ML_HP_METRIC_TAG or the --metric-tag flag), and writes model.txt into
its job dir. Runs unchanged on AI Platform with cloudml-hypertune installed.
"""
import argparse
import json
import math
import os
import time


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--job-dir", default=".")
    p.add_argument("--learning_rate", type=float, default=0.1)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--batch_size", type=float, default=32)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--metric-tag", default="accuracy")
    p.add_argument("--sleep", type=float, default=0.0)
    args, unknown = p.parse_known_args()
    return args, unknown


def report(tag, value, step, reports):
    """cloudml-hypertune's report_hyperparameter_tuning_metric."""
    path = os.environ.get("CLOUD_ML_HP_METRIC_FILE", "/tmp/hypertune/output.metrics")
    reports.append({tag: str(value), "global_step": str(step),
                    "timestamp": time.time(),
                    "trial": os.environ.get("CLOUD_ML_TRIAL_ID", "0")})
    del reports[:-100]
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path + ".tmp", "w") as f:
        for r in reports:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    os.replace(path + ".tmp", path)


def main():
    args, unknown = parse_args()
    tag = os.environ.get("CLOUD_ML_HP_METRIC_TAG", args.metric_tag)
    print("trainer: job dir %s, trial %s, extra args %s" %
          (args.job_dir, os.environ.get("CLOUD_ML_TRIAL_ID", "-"), unknown),
          flush=True)
    # What this replica was told about the cluster, as AI Platform sets it.
    print("trainer: env " + json.dumps(
        {k: os.environ.get(k, "") for k in
         ("TF_CONFIG", "CLOUD_ML_JOB_ID", "RANK", "WORLD_SIZE")}), flush=True)
    bonus = {"sgd": 0.0, "adam": 0.05}.get(args.optimizer, 0.02)
    reports = []
    x = 1.0
    for step in range(1, args.steps + 1):
        x -= args.learning_rate * 2 * x  # gradient descent on x^2
        accuracy = 1.0 / (1.0 + x * x) + bonus - 0.01 * abs(args.layers - 3) \
            - 0.001 * abs(math.log2(max(args.batch_size, 1)) - 6)
        report(tag, round(accuracy, 6), step, reports)
        print("step %d accuracy %.6f" % (step, accuracy), flush=True)
        if args.sleep:
            time.sleep(args.sleep)
    os.makedirs(args.job_dir, exist_ok=True)
    with open(os.path.join(args.job_dir, "model.txt"), "w") as f:
        f.write("x=%r\n" % x)


if __name__ == "__main__":
    main()
