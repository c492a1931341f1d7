#!/usr/bin/python3
"""Cairn GP_BANDIT + ASHA against Optuna 3.1 on the LCBench surrogate.

Each run tunes one LCBench task with one seed, one trial at a time, epochs as
steps, until 1,560 epochs (30 full trainings of 52) are spent; a trial's
epochs count when reported, so a stopped trial costs only what it ran.
Contenders, same tasks and seeds, in the same process:
  * cairn GP_BANDIT + ASHA: a study on a real cairnd over gRPC; every epoch
    is an AddTrialMeasurement followed by CheckTrialEarlyStoppingState, a
    stopped trial is completed with its last measurement (CompleteTrial
    without a final measurement), as a client of the service does;
    early_stopping asha {min_resource 2, reduction_factor 3, max_resource 52}
    (rungs 2, 6, 18);
  * optuna TPE + Hyperband (HyperbandPruner(2, 52, 3): rungs 2, 6, 18),
    optuna TPE (no pruner), optuna Random + SH (SuccessiveHalvingPruner(2, 3)).
The objective is val_accuracy (maximized); test_balanced_accuracy is the
held-back test metric (never shown to a tuner).

Printed: anytime curves (median over seeds of the best val_accuracy seen so
far over every reported (trial, epoch), and the test metric at that same
(trial, epoch)) against cumulative epochs; seed-by-seed wins/ties/losses of
Cairn against each Optuna contender and against the best of them (ties:
within --tie-val percentage points of val_accuracy, --tie-test of the test
metric); the share of corner suggestions (3 or more of the 6 continuous
hyperparameters within 2% of a bound, in the search space's scale) and of
runs whose final incumbent is a corner.

--save FILE writes every run's record as JSON; --load FILE reuses records
(e.g. Optuna's, which do not depend on cairnd) instead of running them again;
--report-only prints the tables of the loaded records.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "gp"))

import lcbench  # noqa: E402

BUDGET = 1560
RUNGS = (2, 6, 18)
ETA = 3
CHECKPOINTS = (52, 104, 208, 416, 780, 1040, 1560)
CAIRN = "cairn GP_BANDIT + ASHA"
OPTUNA = ["optuna TPE + Hyperband", "optuna TPE", "optuna Random + SH"]
DEFAULT_TASKS = "167152,167149,126026,189873"


class Run:
    """One tuning run: what each trial suggested and observed."""

    def __init__(self, method, task, seed):
        self.method, self.task, self.seed = method, task, seed
        self.epochs = 0
        self.trials = []  # {config, corner, epochs, val: [...], test: [...]}
        self.seconds = 0.0

    def to_json(self):
        return {"method": self.method, "task": self.task, "seed": self.seed,
                "epochs": self.epochs, "trials": self.trials,
                "seconds": self.seconds}

    @staticmethod
    def from_json(d):
        r = Run(d["method"], d["task"], d["seed"])
        r.epochs, r.trials, r.seconds = d["epochs"], d["trials"], d["seconds"]
        return r

    def anytime(self):
        """[(cumulative epochs, best val so far, its test, trial index)]."""
        out, spent, best = [], 0, (-math.inf, math.nan, -1)
        for i, t in enumerate(self.trials):
            for v, s in zip(t["val"], t["test"]):
                spent += 1
                if v > best[0]:
                    best = (v, s, i)
                out.append((spent, best[0], best[1], best[2]))
        return out

    def at(self, epochs):
        """(best val, its test, trial index) after `epochs` epochs."""
        curve = self.anytime()
        best = (math.nan, math.nan, -1)
        for spent, v, s, i in curve:
            if spent > epochs:
                break
            best = (v, s, i)
        return best


def trial_record(space, config, curve):
    return {"config": config, "corner": lcbench.is_corner(space, config),
            "val": [], "test": [], "curve": curve}


def observe(run, record, epoch):
    """Reports epoch `epoch` (1-based) of `record`; False when the budget is
    spent (the epoch is not run)."""
    if run.epochs >= BUDGET:
        return False
    run.epochs += 1
    record["val"].append(record["curve"]["val_accuracy"][epoch - 1])
    record["test"].append(record["curve"]["test_balanced_accuracy"][epoch - 1])
    return True


def curve_of(surrogate, task, config):
    c = surrogate.curve(task, config)
    return {"val_accuracy": [float(v) for v in c["val_accuracy"]],
            "test_balanced_accuracy": [float(v) for v in
                                       c["test_balanced_accuracy"]]}


def finish(run, record):
    del record["curve"]
    record["epochs"] = len(record["val"])
    run.trials.append(record)


# --- Cairn through gRPC. ---

class Cairn:
    def __init__(self, server):
        import grpc
        import gp_bench
        self.pb, self.spb, grpc_mod = gp_bench.load_stubs()
        self.channel = grpc.insecure_channel(server)
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.stub = gp_bench.Authed(grpc_mod.StudyServiceStub(self.channel),
                                    gp_bench.cairn_token())

    def create_study(self, space, task, seed):
        pb = self.pb
        spec = pb.StudySpec(algorithm=pb.StudySpec.GP_BANDIT, seed=seed + 1)
        for name in lcbench.HYPERPARAMETERS:
            lo, hi, log, integer = space.params[name]
            p = spec.parameters.add(
                parameter_id=name,
                type=pb.ParameterSpec.INTEGER if integer else
                pb.ParameterSpec.DOUBLE, min_value=lo, max_value=hi)
            if log:
                p.scale_type = pb.ParameterSpec.UNIT_LOG_SCALE
        spec.metrics.add(metric_id="val_accuracy", goal=pb.MetricSpec.MAXIMIZE)
        spec.early_stopping.asha.min_resource = RUNGS[0]
        spec.early_stopping.asha.reduction_factor = ETA
        spec.early_stopping.asha.max_resource = lcbench.MAX_EPOCH
        name = "lcbench-%d-%s-%d-%d" % (os.getpid(), task, seed, time.time_ns())
        return self.stub.CreateStudy(self.spb.CreateStudyRequest(
            study=pb.Study(display_name=name, spec=spec))).name

    def suggest(self, study):
        resp = self.stub.SuggestTrials(self.spb.SuggestTrialsRequest(
            parent=study, suggestion_count=1, client_id="lcbench"))
        if not resp.trials:
            raise RuntimeError("no suggestion: %s" % resp.message)
        t = resp.trials[0]
        config = {p.parameter_id: p.value.number_value for p in t.parameters}
        return t.name, config, t.metadata.get("suggestion_kind", "")

    def report(self, trial, epoch, value):
        m = self.pb.Measurement(step_count=epoch)
        m.metrics.add(metric_id="val_accuracy", value=value)
        self.stub.AddTrialMeasurement(self.spb.AddTrialMeasurementRequest(
            trial_name=trial, measurement=m))

    def should_stop(self, trial):
        return self.stub.CheckTrialEarlyStoppingState(
            self.spb.CheckTrialEarlyStoppingStateRequest(
                trial_name=trial)).should_stop

    def complete(self, trial):
        # Unset final measurement: the last reported one becomes final.
        self.stub.CompleteTrial(self.spb.CompleteTrialRequest(name=trial))

    def run(self, surrogate, task, seed):
        space = surrogate.space
        run = Run(CAIRN, task, seed)
        start = time.perf_counter()
        study = self.create_study(space, task, seed)
        while run.epochs < BUDGET:
            trial, raw, kind = self.suggest(study)
            config = {k: int(round(v)) if space.params[k][3] else v
                      for k, v in raw.items()}
            config = space.clamp(config)
            record = trial_record(space, config, curve_of(surrogate, task,
                                                          config))
            record["kind"] = kind
            for epoch in range(1, lcbench.MAX_EPOCH + 1):
                if not observe(run, record, epoch):
                    break
                self.report(trial, epoch, record["val"][-1])
                if epoch < lcbench.MAX_EPOCH and self.should_stop(trial):
                    break
            if record["val"]:
                self.complete(trial)
            finish(run, record)
        run.seconds = time.perf_counter() - start
        return run


def dump_points(path, space, run):
    """Writes what the GP of `run` saw (unit coordinates of each trial and
    its last reported val_accuracy) in gp_engine_bench's "points" format
    (bench/gp/points_replay.h)."""
    with open(path, "w") as f:
        f.write("# %s task %s seed %d\n" % (run.method, run.task, run.seed))
        f.write("dims %d\n" % len(lcbench.HYPERPARAMETERS))
        for name in lcbench.HYPERPARAMETERS:
            lo, hi, _, integer = space.params[name]
            grid = [space.to_unit(name, v) for v in
                    range(int(lo), int(hi) + 1)] if integer else []
            f.write("grid %d %s\n" % (len(grid), " ".join("%.17g" % g
                                                             for g in grid)))
        rows = [t for t in run.trials if t["val"]]
        f.write("rows %d\n" % len(rows))
        for t in rows:
            u = [space.to_unit(n, t["config"][n]) for n in
                 lcbench.HYPERPARAMETERS]
            f.write(" ".join("%.17g" % v for v in u + [t["val"][-1]]) + "\n")


# --- Optuna. ---

def optuna_study(method, seed):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    samplers = {
        "optuna TPE + Hyperband": lambda: (
            optuna.samplers.TPESampler(seed=seed),
            optuna.pruners.HyperbandPruner(min_resource=RUNGS[0],
                                           max_resource=lcbench.MAX_EPOCH,
                                           reduction_factor=ETA)),
        "optuna TPE": lambda: (optuna.samplers.TPESampler(seed=seed),
                               optuna.pruners.NopPruner()),
        "optuna Random + SH": lambda: (
            optuna.samplers.RandomSampler(seed=seed),
            optuna.pruners.SuccessiveHalvingPruner(min_resource=RUNGS[0],
                                                   reduction_factor=ETA)),
    }
    sampler, pruner = samplers[method]()
    return optuna.create_study(direction="maximize", sampler=sampler,
                               pruner=pruner)


def optuna_config(trial, space):
    config = {}
    for name in lcbench.HYPERPARAMETERS:
        lo, hi, log, integer = space.params[name]
        if integer:
            config[name] = trial.suggest_int(name, int(lo), int(hi), log=log)
        else:
            config[name] = trial.suggest_float(name, lo, hi, log=log)
    return config


def run_optuna(method, surrogate, task, seed):
    import optuna
    space = surrogate.space
    run = Run(method, task, seed)
    start = time.perf_counter()
    study = optuna_study(method, seed)
    while run.epochs < BUDGET:
        trial = study.ask()
        config = space.clamp(optuna_config(trial, space))
        record = trial_record(space, config, curve_of(surrogate, task, config))
        pruned = False
        for epoch in range(1, lcbench.MAX_EPOCH + 1):
            if not observe(run, record, epoch):
                break
            trial.report(record["val"][-1], epoch)
            if epoch < lcbench.MAX_EPOCH and trial.should_prune():
                pruned = True
                break
        if record["val"] and not pruned and len(record["val"]) == \
                lcbench.MAX_EPOCH:
            study.tell(trial, record["val"][-1])
        elif record["val"]:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        finish(run, record)
    run.seconds = time.perf_counter() - start
    return run


# --- Tables. ---

def median(xs):
    xs = [x for x in xs if not math.isnan(x)]
    return statistics.median(xs) if xs else math.nan


def print_anytime(runs, methods, tasks, out):
    out.write("\nAnytime: median over seeds of the best val_accuracy (%) seen "
              "so far / test_balanced_accuracy at that (trial, epoch)\n")
    out.write("%-8s %-26s" % ("task", "method") +
              "".join("%15s" % ("@%d ep" % c) for c in CHECKPOINTS) + "\n")
    for task in tasks:
        for m in methods:
            rs = [r for r in runs if r.task == task and r.method == m]
            if not rs:
                continue
            cells = []
            for c in CHECKPOINTS:
                at = [r.at(c) for r in rs]
                cells.append("%7.2f/%.4f" % (median([a[0] for a in at]),
                                             median([a[1] for a in at])))
            out.write("%-8s %-26s" % (task, m) +
                      "".join("%15s" % c for c in cells) + "\n")


def compare(a, b, tie):
    if abs(a - b) <= tie:
        return 0
    return 1 if a > b else -1


def print_wins(runs, tasks, args, out):
    out.write("\nSeed-by-seed wins/ties/losses of %s (final incumbent), "
              "ties within %.2f pp val / %.4f test\n" %
              (CAIRN, args.tie_val, args.tie_test))
    by = {(r.method, r.task, r.seed): r for r in runs}
    pairs = sorted({(r.task, r.seed) for r in runs if r.method == CAIRN})
    contenders = [m for m in OPTUNA if any(r.method == m for r in runs)]
    out.write("%-28s %8s %-12s %-12s\n" % ("against", "pairs", "val w/t/l",
                                            "test w/t/l"))
    for against in contenders + ["best Optuna contender"]:
        wv, wt, n = [0, 0, 0], [0, 0, 0], 0
        for task, seed in pairs:
            c = by[(CAIRN, task, seed)].at(BUDGET)
            others = [by[(m, task, seed)].at(BUDGET) for m in
                      (contenders if against.startswith("best") else
                       [against]) if (m, task, seed) in by]
            if not others:
                continue
            # The best contender by val; its test is that run's incumbent's.
            o = max(others, key=lambda a: a[0])
            n += 1
            wv[1 - compare(c[0], o[0], args.tie_val)] += 1
            wt[1 - compare(c[1], o[1], args.tie_test)] += 1
        out.write("%-28s %8d %-12s %-12s\n" % (
            against, n, "%d/%d/%d" % tuple(wv), "%d/%d/%d" % tuple(wt)))


def print_corners(runs, methods, tasks, space, out):
    out.write("\nCorner suggestions (>= 3 of 6 continuous hyperparameters "
              "within 2% of a bound; within 5%: the same with 5%) and corner "
              "incumbents\n")
    out.write("%-8s %-26s %8s %9s %10s %10s %14s %8s\n" % (
        "task", "method", "trials", "corners", "share", "within 5%",
        "corner incumb.", "seconds"))
    for task in tasks + (["all"] if len(tasks) > 1 else []):
        for m in methods:
            rs = [r for r in runs if r.method == m and task in (r.task, "all")]
            if not rs:
                continue
            trials = sum(len(r.trials) for r in rs)
            corners = sum(t["corner"] for r in rs for t in r.trials)
            wide = sum(lcbench.is_corner(space, t["config"], share=0.05)
                       for r in rs for t in r.trials)
            inc = sum(r.trials[r.at(BUDGET)[2]]["corner"] for r in rs)
            out.write("%-8s %-26s %8d %9d %9.1f%% %9.1f%% %8d of %-3d %8.1f\n"
                      % (task, m, trials, corners,
                         100.0 * corners / max(trials, 1),
                         100.0 * wide / max(trials, 1), inc, len(rs),
                         median([r.seconds for r in rs])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", help="cairnd HOST:PORT (needed for Cairn)")
    ap.add_argument("--data-dir", help="LCBench data (default: "
                    "$CAIRN_LCBENCH_DIR or ../shared/benchmarks/lcbench)")
    ap.add_argument("--tasks", default=DEFAULT_TASKS)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--methods", default="cairn,tpe_hb,tpe,random_sh",
                    help="any of cairn, tpe_hb, tpe, random_sh")
    ap.add_argument("--tie-val", type=float, default=0.05)
    ap.add_argument("--tie-test", type=float, default=0.0005)
    ap.add_argument("--save", help="write the run records (JSON) here")
    ap.add_argument("--load", action="append", default=[],
                    help="reuse run records from this JSON file")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--dump-points", metavar="DIR",
                    help="write each Cairn run's observations here for "
                    "gp_engine_bench points")
    args = ap.parse_args()

    data = lcbench.find_data_dir(args.data_dir)
    if data is None:
        sys.stderr.write(
            "lcbench_bench: LCBench data not found (need %s in --data-dir, "
            "$CAIRN_LCBENCH_DIR or ../shared/benchmarks/lcbench); it is not "
            "part of this repository, see bench/lcbench/README.md. Nothing "
            "was measured.\n" % ", ".join(lcbench.FILES))
        return 2
    surrogate = lcbench.Surrogate(data)
    tasks = args.tasks.split(",")
    for t in tasks:
        if t not in surrogate.space.tasks:
            sys.stderr.write("--tasks: %r is not an LCBench task\n" % t)
            return 2
    names = {"cairn": CAIRN, "tpe_hb": OPTUNA[0], "tpe": OPTUNA[1],
             "random_sh": OPTUNA[2]}
    wanted = [names[m] for m in args.methods.split(",") if m]
    seeds = range(args.first_seed, args.first_seed + args.seeds)

    runs = {}
    for path in args.load:
        with open(path) as f:
            for d in json.load(f):
                r = Run.from_json(d)
                runs[(r.method, r.task, r.seed)] = r
    cairn = None
    if not args.report_only:
        for task in tasks:
            for seed in seeds:
                for m in wanted:
                    if (m, task, seed) in runs:
                        continue
                    if m == CAIRN:
                        if cairn is None:
                            if not args.server:
                                sys.stderr.write("--server is needed to run "
                                                 "Cairn\n")
                                return 2
                            cairn = Cairn(args.server)
                        r = cairn.run(surrogate, task, seed)
                    else:
                        r = run_optuna(m, surrogate, task, seed)
                    runs[(m, task, seed)] = r
                    if args.dump_points and m == CAIRN:
                        os.makedirs(args.dump_points, exist_ok=True)
                        dump_points(os.path.join(
                            args.dump_points, "%s-%d.txt" % (task, seed)),
                            surrogate.space, r)
                    sys.stderr.write("%s task %s seed %d: best %.2f, %d "
                                     "trials, %.1f s\n" % (
                                         m, task, seed, r.at(BUDGET)[0],
                                         len(r.trials), r.seconds))
                    if args.save:  # Atomically: readers may load it.
                        with open(args.save + ".tmp", "w") as f:
                            json.dump([x.to_json() for x in runs.values()], f)
                        os.replace(args.save + ".tmp", args.save)
    selected = [r for r in runs.values() if r.task in tasks and
                r.seed in seeds]
    methods = [CAIRN] + OPTUNA
    out = sys.stdout
    out.write("LCBench surrogate, tasks %s, seeds %d..%d, %d epochs per run, "
              "rungs %s, eta %d\n" % (",".join(tasks), seeds[0], seeds[-1],
                                      BUDGET, "/".join(map(str, RUNGS)), ETA))
    print_anytime(selected, methods, tasks, out)
    print_wins(selected, tasks, args, out)
    print_corners(selected, methods, tasks, surrogate.space, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
