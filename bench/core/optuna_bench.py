#!/usr/bin/python3
"""Optuna's figures for the work bench/core/cairn_bench_core measures.

ask/tell round trips per second (random sampler, two float parameters, one
objective) and trial.report calls per second, both with RDB storage on SQLite
in a fresh temporary file. Prints `key value` lines:
  optuna_ask_tell_per_s, optuna_report_per_s, optuna_version
Usage: optuna_bench.py [--duration SECONDS] [--only ask_tell|report] [--dir DIR]
"""
import argparse
import os
import tempfile
import time

import optuna


def ask_tell_rate(storage_url, duration):
    study = optuna.create_study(
        storage=storage_url,
        study_name="bench-ask-tell",
        sampler=optuna.samplers.RandomSampler(seed=0),
        direction="minimize",
    )
    n = 0
    start = time.perf_counter()
    deadline = start + duration
    while True:
        trial = study.ask()
        x1 = trial.suggest_float("x1", -5.0, 10.0)
        x2 = trial.suggest_float("x2", 0.0, 15.0)
        study.tell(trial, (x1 - 1.0) ** 2 + (x2 - 2.0) ** 2)
        n += 1
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


def report_rate(storage_url, duration):
    study = optuna.create_study(
        storage=storage_url,
        study_name="bench-report",
        sampler=optuna.samplers.RandomSampler(seed=0),
        direction="minimize",
    )
    trial = study.ask()
    trial.suggest_float("x1", -5.0, 10.0)
    n = 0
    start = time.perf_counter()
    deadline = start + duration
    while True:
        trial.report(1.0 / (n + 1), step=n)
        n += 1
        now = time.perf_counter()
        if now >= deadline:
            rate = n / (now - start)
            study.tell(trial, 0.0)
            return rate


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0,
                        help="seconds per measurement (default 5)")
    parser.add_argument("--only", choices=["ask_tell", "report"],
                        help="measure one figure only (default: both)")
    parser.add_argument("--dir", default=None,
                        help="directory for the SQLite file (default: a "
                             "fresh temporary directory)")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    with tempfile.TemporaryDirectory(dir=args.dir, prefix="optuna-bench-") as d:
        url = "sqlite:///" + os.path.join(d, "optuna.db")
        # Create the schema first so table creation is not timed.
        optuna.storages.RDBStorage(url)
        print("optuna_version", optuna.__version__)
        if args.only in (None, "ask_tell"):
            print("optuna_ask_tell_per_s %.1f"
                  % ask_tell_rate(url, args.duration), flush=True)
        if args.only in (None, "report"):
            print("optuna_report_per_s %.1f" % report_rate(url, args.duration),
                  flush=True)


if __name__ == "__main__":
    main()
