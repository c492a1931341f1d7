#!/usr/bin/python3
"""Optuna's figures for the work bench/core/cairn_bench_core measures.

ask/tell round trips per second (random sampler, two float parameters, one
objective) and trial.report calls per second, both with RDB storage on SQLite
in a fresh temporary file. With --workers N (N > 1) the ask/tell figure is
also measured the way Optuna parallelizes a study: N worker processes on one
study in the same SQLite storage, all running at once for --duration seconds.
Prints `key value` lines:
  optuna_version
  optuna_ask_tell_per_s                one worker
  optuna_ask_tell_per_s_wN             N workers together (N > 1)
  optuna_ask_tell_errors_wN            their failed ask/tell round trips
                                       (e.g. "database is locked"; not counted)
  optuna_report_per_s
Usage: optuna_bench.py [--duration SECONDS] [--only ask_tell|report]
                       [--workers N ...] [--dir DIR]
"""
import argparse
import multiprocessing
import os
import tempfile
import time

import optuna

STUDY_NAME = "bench-ask-tell"


def ask_tell_loop(study, duration):
    """Runs ask/tell round trips for `duration` seconds.

    Returns (completed round trips, failed round trips, seconds run).
    """
    n = 0
    errors = 0
    start = time.perf_counter()
    deadline = start + duration
    while True:
        try:
            trial = study.ask()
            x1 = trial.suggest_float("x1", -5.0, 10.0)
            x2 = trial.suggest_float("x2", 0.0, 15.0)
            study.tell(trial, (x1 - 1.0) ** 2 + (x2 - 2.0) ** 2)
            n += 1
        except Exception:  # noqa: BLE001 - SQLite lock timeouts and the like
            errors += 1
        now = time.perf_counter()
        if now >= deadline:
            return n, errors, now - start


def create_ask_tell_study(storage_url):
    storage = optuna.storages.RDBStorage(storage_url)
    study = optuna.create_study(
        storage=storage,
        study_name=STUDY_NAME,
        sampler=optuna.samplers.RandomSampler(seed=0),
        direction="minimize",
    )
    return storage, study


def ask_tell_rate(storage_url, duration):
    _, study = create_ask_tell_study(storage_url)
    n, errors, seconds = ask_tell_loop(study, duration)
    if errors:
        # One worker has nobody to contend with: a failure is a real one.
        raise SystemExit(f"optuna_bench.py: {errors} ask/tell round trips "
                         "failed with one worker")
    return n / seconds


def _worker(storage_url, seed, duration, barrier, results):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(
        study_name=STUDY_NAME,
        storage=storage_url,
        sampler=optuna.samplers.RandomSampler(seed=seed),
    )
    barrier.wait()  # every worker has loaded the study: start together
    results.put(ask_tell_loop(study, duration))


def parallel_ask_tell_rate(storage_url, duration, workers):
    """Round trips per second of `workers` processes sharing one study."""
    storage, _ = create_ask_tell_study(storage_url)
    # The children open their own connections; none is inherited.
    storage.engine.dispose()
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(workers)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_worker,
                    args=(storage_url, seed, duration, barrier, results))
        for seed in range(workers)
    ]
    for p in procs:
        p.start()
    outcomes = [results.get() for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"optuna_bench.py: a worker exited with {p.exitcode}")
    done = sum(o[0] for o in outcomes)
    errors = sum(o[1] for o in outcomes)
    seconds = max(o[2] for o in outcomes)
    return done / seconds, errors


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


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0,
                        help="seconds per measurement (default 5)")
    parser.add_argument("--only", choices=["ask_tell", "report"],
                        help="measure one figure only (default: both)")
    parser.add_argument("--workers", type=positive_int, nargs="+", default=[1],
                        help="worker counts for the ask/tell figure "
                             "(default 1)")
    parser.add_argument("--dir", default=None,
                        help="directory for the SQLite files (default: a "
                             "fresh temporary directory)")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    print("optuna_version", optuna.__version__, flush=True)

    def fresh_url(d, tag):
        # A fresh SQLite file per figure, its schema created before timing.
        url = "sqlite:///" + os.path.join(d, f"optuna-{tag}.db")
        optuna.storages.RDBStorage(url).engine.dispose()
        return url

    with tempfile.TemporaryDirectory(dir=args.dir, prefix="optuna-bench-") as d:
        if args.only in (None, "ask_tell"):
            for w in dict.fromkeys(args.workers):  # each count once, in order
                url = fresh_url(d, f"ask-tell-w{w}")
                if w == 1:
                    print("optuna_ask_tell_per_s %.1f"
                          % ask_tell_rate(url, args.duration), flush=True)
                else:
                    rate, errors = parallel_ask_tell_rate(url, args.duration, w)
                    print("optuna_ask_tell_per_s_w%d %.1f" % (w, rate))
                    print("optuna_ask_tell_errors_w%d %d" % (w, errors),
                          flush=True)
        if args.only in (None, "report"):
            url = fresh_url(d, "report")
            print("optuna_report_per_s %.1f" % report_rate(url, args.duration),
                  flush=True)


if __name__ == "__main__":
    main()
