#!/usr/bin/env python3
"""Startup of cairn-train --backend=cpu against the cairn CLI, in one run.

Times, alternating, `cairn --help` and a trivial cairn-train CPU run (a
4-row CSV, --epochs=0: parse flags, load data, build the model, export) and
prints the medians and their ratio as JSON. Target (issue 15, item 8):
ratio <= 3. Before the CUDA backend moved into a dlopen'ed module the CUDA
libraries loaded at program start: 440 ms against 20 ms on an idle machine,
972 ms against 84 ms on a loaded one.

Usage: bench/train/startup_bench.py [BUILD_DIR] [RUNS] [--train-binary PATH]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def timed(argv):
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    p = argparse.ArgumentParser()
    p.add_argument("build", nargs="?", default=os.path.join(root, "build"))
    p.add_argument("runs", nargs="?", type=int, default=20)
    p.add_argument("--train-binary", default=None,
                   help="cairn-train to time (default BUILD/bin/cairn-train)")
    a = p.parse_args()
    cli = os.path.join(a.build, "bin", "cairn")
    train = a.train_binary or os.path.join(a.build, "bin", "cairn-train")
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "tiny.csv")
        with open(csv, "w") as f:
            f.write("x,y,label\n0,0,0\n1,1,1\n0,1,1\n1,0,0\n")
        cli_argv = [cli, "--help"]
        train_argv = [train, "--backend=cpu", "--train=" + csv, "--epochs=0",
                      "--hidden_units=4", "--job-dir=" + tmp + "/job"]
        timed(cli_argv), timed(train_argv)  # Warm the page cache.
        cli_s, train_s = [], []
        for _ in range(a.runs):
            cli_s.append(timed(cli_argv))
            train_s.append(timed(train_argv))
    cli_ms = statistics.median(cli_s) * 1e3
    train_ms = statistics.median(train_s) * 1e3
    print(json.dumps({
        "bench": "cairn_train_startup", "runs": a.runs,
        "cairn_help_ms": round(cli_ms, 1),
        "cairn_train_cpu_ms": round(train_ms, 1),
        "ratio": round(train_ms / cli_ms, 2), "target_ratio": 3}))


if __name__ == "__main__":
    main()
