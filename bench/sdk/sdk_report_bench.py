#!/usr/bin/python3
"""Python SDK CPU per reported point: Trial.report() in a tight loop, then a
flush (every point durable), on a trial of its own. Prints
  py_report_cpu_us_per_point   process CPU (every thread) / points
  py_report_wall_us_per_point  wall time / points
  py_report_call_us_per_point  wall time of the report() loop alone / points
Server and token from $CAIRN_SERVER / $CAIRN_TOKEN_FILE (bench/sdk/run.sh).
Also prints the trial it used (trial NAME) for the C++ run, with --make-trial.
"""
import argparse
import time

import cairn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=100000)
    parser.add_argument("--make-trial", action="store_true",
                        help="only create a trial and print its name")
    args = parser.parse_args()
    client = cairn.Client()
    spec = {"parameters": [{"parameter_id": "x", "type": "DOUBLE",
                            "min_value": 0, "max_value": 1}],
            "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
            "algorithm": "RANDOM_SEARCH"}
    name = "sdk-bench-%d" % time.time_ns()
    trial = client.create_study(name, spec).suggest()[0]
    if args.make_trial:
        print("trial", trial.name)
        return
    n = args.points
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for step in range(n):
        trial.report(step, loss=1.0 / (step + 1))
    loop = time.perf_counter() - wall0
    trial.flush()
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    assert len(trial.history("loss")) == n
    print("py_report_cpu_us_per_point %.3f" % (cpu * 1e6 / n))
    print("py_report_wall_us_per_point %.3f" % (wall * 1e6 / n))
    print("py_report_call_us_per_point %.3f" % (loop * 1e6 / n))
    client.close()


if __name__ == "__main__":
    main()
