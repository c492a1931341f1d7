#!/usr/bin/python3
"""GP_BANDIT bench through the real service (cairnd + gRPC) beside Optuna.

Runs studies on SFU test functions (minimized; regret = best found - f*):
  * regret: Branin (2-D) and Hartmann6 (6-D), N seeds, budgets 50 and 100, for
    Cairn GP_BANDIT, QUASI_RANDOM_SEARCH, RANDOM_SEARCH (each suggestion one
    SuggestTrials + CompleteTrial round trip) and Optuna TPE (default and
    multivariate) and CMA-ES, seeded alike, in the same run;
  * timing: median time of one suggestion with 100, 300 and 1000 completed
    trials in 6-D (Hartmann6), Cairn's designer time (the trial's
    "suggestion_seconds" metadata) and its full SuggestTrials round trip,
    against Optuna TPE's ask + 6 suggest_float calls on the same history;
    a SuggestTrials of 8 against one; GetStudy p90 on the study idle and
    while another client runs suggestions on it;
  * --functions illscaled: smooth, unimodal, ill-scaled bowls (f* = 0)
    whose values span 4 to 12 decades: a 6-D quartic, a rotated and
    ill-conditioned 6-D quartic, an 8th-power 4-D bowl, a 4-D quartic with
    weights 1 to 1000, a 3-D product and an 8-D exponential; with
    --optuna random,tpe,mtpe,cmaes beside Optuna's four samplers;
  * --functions hard: smooth, steep, ill-conditioned and rotated 6-D
    objectives with off-center optima (ill_scaled.HARD: an ellipsoid,
    different powers, an exponential of an ellipsoid, a Rosenbrock valley),
    where GP_BANDIT must do at least as well as random search;
  * multi-objective: BraninCurrin hypervolume after 100 trials (reference
    point (18, 6), both minimized), Cairn GP_BANDIT vs Optuna NSGA-II.
Prints one table. Python stubs are generated at run time from proto/.

Usage: gp_bench.py --server HOST:PORT [--seeds 10] [--budgets 50,100]
                   [--parts regret,timing,mo] [--timing-sizes 100,300,1000]
                   [--functions branin,hartmann6|multimodal|illscaled|hard]
                   [--cairn GP_BANDIT,...] [--optuna random,tpe,mtpe,cmaes]
                   [--quick]
"""
import argparse
import importlib
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import ill_scaled

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_stubs():
    out = tempfile.mkdtemp(prefix="cairn-gp-bench-stubs.")
    protos = [os.path.join("proto", "cairn", "v1", f)
              for f in sorted(os.listdir(os.path.join(ROOT, "proto", "cairn", "v1")))
              if f.endswith(".proto")]
    # Debian's protoc, as the build uses (grpc_tools' bundled 3.5 refuses
    # proto3 `optional`).
    subprocess.run(["protoc", "-I", "proto", "--python_out=" + out, "--grpc_out=" + out,
                    "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin"] + protos,
                   cwd=ROOT, check=True)
    sys.path.insert(0, out)
    study_pb2 = importlib.import_module("cairn.v1.study_pb2")
    service_pb2 = importlib.import_module("cairn.v1.study_service_pb2")
    service_grpc = importlib.import_module("cairn.v1.study_service_pb2_grpc")
    return study_pb2, service_pb2, service_grpc


# --- Test functions (SFU library), inputs in their native boxes. ---

def branin(x):
    x1, x2 = x
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 ** 2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


HART_A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
          [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
HART_P = [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
          [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]
HART_ALPHA = [1.0, 1.2, 3.0, 3.2]


def hartmann6(x):
    s = 0.0
    for i in range(4):
        e = sum(HART_A[i][j] * (x[j] - 1e-4 * HART_P[i][j]) ** 2 for j in range(6))
        s += HART_ALPHA[i] * math.exp(-e)
    return -s


def currin(x):
    x1, x2 = x
    factor = 1.0 if x2 <= 0 else 1 - math.exp(-1 / (2 * x2))
    return factor * (2300 * x1 ** 3 + 1900 * x1 ** 2 + 2092 * x1 + 60) / (
        100 * x1 ** 3 + 500 * x1 ** 2 + 4 * x1 + 20)


def branin_currin(u):
    return [branin([15 * u[0] - 5, 15 * u[1]]), currin(u)]


def styblinski_tang(x):
    return 0.5 * sum(v ** 4 - 16 * v ** 2 + 5 * v for v in x)


def rastrigin(x):
    return 10 * len(x) + sum(v * v - 10 * math.cos(2 * math.pi * v) for v in x)


def ackley(x):
    d = len(x)
    s1 = sum(v * v for v in x) / d
    s2 = sum(math.cos(2 * math.pi * v) for v in x) / d
    return -20 * math.exp(-0.2 * math.sqrt(s1)) - math.exp(s2) + 20 + math.e


def levy(x):
    w = [1 + (v - 1) / 4 for v in x]
    s = math.sin(math.pi * w[0]) ** 2
    for wi in w[:-1]:
        s += (wi - 1) ** 2 * (1 + 10 * math.sin(math.pi * wi + 1) ** 2)
    return s + (w[-1] - 1) ** 2 * (1 + math.sin(2 * math.pi * w[-1]) ** 2)


def michalewicz(x):
    return -sum(math.sin(v) * math.sin((i + 1) * v * v / math.pi) ** 20
                for i, v in enumerate(x))


FUNCTIONS = {
    "branin": (branin, [(-5.0, 10.0), (0.0, 15.0)], 0.397887),
    "hartmann6": (hartmann6, [(0.0, 1.0)] * 6, -3.322368),
    # Multimodal SFU functions. Rastrigin and Ackley have their optimum at
    # the origin; their boxes are shifted off-center so that the first
    # (center) trial does not hit it.
    "styblinski_tang4": (styblinski_tang, [(-5.0, 5.0)] * 4, -39.16617 * 4),
    "rastrigin4": (rastrigin, [(-4.12, 6.12)] * 4, 0.0),
    "ackley5": (ackley, [(-12.0, 32.768)] * 5, 0.0),
    "levy6": (levy, [(-10.0, 10.0)] * 6, 0.0),
    "michalewicz5": (michalewicz, [(0.0, math.pi)] * 5, -4.687658),
}
MULTIMODAL = "styblinski_tang4,rastrigin4,ackley5,levy6,michalewicz5"


# Ill-scaled bowls (bench/gp/ill_scaled.py).
FUNCTIONS.update(ill_scaled.FUNCTIONS)
ILLSCALED = ",".join(ill_scaled.FUNCTIONS)
FUNCTIONS.update(ill_scaled.HARD)
HARD = ",".join(ill_scaled.HARD)
BC_REFERENCE = (18.0, 6.0)


def hypervolume_2d_min(points, ref):
    pts = sorted((p for p in points if p[0] < ref[0] and p[1] < ref[1]))
    hv, best_y = 0.0, ref[1]
    for x, y in pts:
        if y < best_y:
            hv += (ref[0] - x) * (best_y - y)
            best_y = y
    return hv


# --- Cairn through gRPC. ---


def cairn_token():
    """The token to send: $CAIRN_TOKEN, else the file $CAIRN_TOKEN_FILE, else
    ~/.config/cairn/token; None if there is none (cairnd --auth=none)."""
    if os.environ.get("CAIRN_TOKEN"):
        return os.environ["CAIRN_TOKEN"].strip()
    path = os.environ.get("CAIRN_TOKEN_FILE") or os.path.expanduser("~/.config/cairn/token")
    if os.path.exists(path):
        with open(path) as f:
            return f.readline().strip()
    return None


class Authed:
    """Wraps a stub so that every call sends `authorization: Bearer <token>`."""

    def __init__(self, stub, token):
        self._stub = stub
        self._metadata = [("authorization", "Bearer " + token)] if token else None

    def __getattr__(self, name):
        method = getattr(self._stub, name)
        return lambda *args, **kwargs: method(*args, metadata=self._metadata, **kwargs)


class Cairn:
    def __init__(self, server):
        import grpc
        self.pb, self.spb, grpc_mod = load_stubs()
        self.channel = grpc.insecure_channel(server)
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.stub = Authed(grpc_mod.StudyServiceStub(self.channel), cairn_token())
        self.counter = 0

    def create_study(self, algorithm, bounds, seed, metrics, max_trials=0):
        pb = self.pb
        spec = pb.StudySpec(algorithm=pb.StudySpec.Algorithm.Value(algorithm),
                            seed=seed, max_trials=max_trials)
        for i, (lo, hi) in enumerate(bounds):
            spec.parameters.add(parameter_id="x%d" % i, type=pb.ParameterSpec.DOUBLE,
                                min_value=lo, max_value=hi)
        for m in metrics:
            spec.metrics.add(metric_id=m, goal=pb.MetricSpec.MINIMIZE)
        self.counter += 1
        name = "gp-bench-%d-%d-%s-%d" % (os.getpid(), self.counter, algorithm.lower(), seed)
        req = self.spb.CreateStudyRequest(
            study=pb.Study(display_name=name, spec=spec))
        return self.stub.CreateStudy(req).name

    def suggest(self, study, client="bench"):
        """One suggestion: (x list, designer seconds, round-trip seconds, trial name)."""
        start = time.perf_counter()
        resp = self.stub.SuggestTrials(self.spb.SuggestTrialsRequest(
            parent=study, suggestion_count=1, client_id=client))
        rtt = time.perf_counter() - start
        if not resp.trials:
            raise RuntimeError("no suggestion: %s" % resp.message)
        t = resp.trials[0]
        values = {p.parameter_id: p.value.number_value for p in t.parameters}
        x = [values["x%d" % i] for i in range(len(values))]
        return x, float(t.metadata.get("suggestion_seconds", "nan")), rtt, t.name

    def complete(self, trial_name, values):
        m = self.pb.Measurement()
        for k, v in values.items():
            m.metrics.add(metric_id=k, value=v)
        self.stub.CompleteTrial(self.spb.CompleteTrialRequest(
            name=trial_name, final_measurement=m))

    def add_completed(self, study, x, values):
        t = self.pb.Trial()
        for i, xi in enumerate(x):
            p = t.parameters.add(parameter_id="x%d" % i)
            p.value.number_value = xi
        for k, v in values.items():
            t.final_measurement.metrics.add(metric_id=k, value=v)
        self.stub.CreateTrial(self.spb.CreateTrialRequest(parent=study, trial=t))

    def run(self, algorithm, fn, bounds, seed, budget):
        study = self.create_study(algorithm, bounds, seed, ["value"], budget)
        ys, times = [], []
        for _ in range(budget):
            x, sec, _, name = self.suggest(study)
            y = fn(x)
            self.complete(name, {"value": y})
            ys.append(y)
            times.append(sec)
        return ys, times


# --- Optuna. ---

def optuna_samplers(seed, names):
    import optuna
    samplers = {
        "optuna random": lambda: optuna.samplers.RandomSampler(seed=seed),
        "optuna TPE": lambda: optuna.samplers.TPESampler(seed=seed),
        "optuna TPE multivariate": lambda: optuna.samplers.TPESampler(
            seed=seed, multivariate=True),
        "optuna CMA-ES": lambda: optuna.samplers.CmaEsSampler(seed=seed),
    }
    short = {"random": "optuna random", "tpe": "optuna TPE",
             "mtpe": "optuna TPE multivariate", "cmaes": "optuna CMA-ES"}
    return {short[n]: samplers[short[n]] for n in names}


def optuna_run(sampler, fn, bounds, budget, directions=("minimize",)):
    import optuna
    study = optuna.create_study(sampler=sampler, directions=list(directions))
    ys, times = [], []
    for _ in range(budget):
        start = time.perf_counter()
        trial = study.ask()
        x = [trial.suggest_float("x%d" % i, lo, hi) for i, (lo, hi) in enumerate(bounds)]
        times.append(time.perf_counter() - start)
        y = fn(x)
        study.tell(trial, y)
        ys.append(y)
    return ys, times


# --- Parts. ---

def best_at(ys, n):
    return min(ys[:n])


def part_regret(cairn, args, rows):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    budgets = args.budgets
    top = max(budgets)
    for fname in args.functions:
        fn, bounds, fstar = FUNCTIONS[fname]
        results = {}
        for seed in range(args.seeds):
            for algo in args.cairn:
                ys, _ = cairn.run(algo, fn, bounds, seed + 1, top)
                results.setdefault("cairn " + algo, []).append(ys)
            for label, make in optuna_samplers(seed + 1, args.optuna).items():
                ys, _ = optuna_run(make(), fn, bounds, top)
                results.setdefault(label, []).append(ys)
            print("  %s seed %d done" % (fname, seed + 1), file=sys.stderr, flush=True)
        for label, runs in results.items():
            med = [statistics.median(best_at(ys, b) - fstar for ys in runs) for b in budgets]
            rows.append(("regret", fname, label, med))


def hartmann_history(n):
    rng = random.Random(n)
    history = []
    for _ in range(n):
        x = [rng.random() for _ in range(6)]
        history.append((x, hartmann6(x)))
    return history


def tpe_times(history, reps):
    """Optuna TPE ask + 6 suggest_float on `history`, `reps` times (seconds)."""
    import optuna
    tpe = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=1))
    dists = {"x%d" % i: optuna.distributions.FloatDistribution(0.0, 1.0)
             for i in range(6)}
    for x, y in history:
        tpe.add_trial(optuna.trial.create_trial(
            params={"x%d" % i: v for i, v in enumerate(x)},
            distributions=dists, value=y))
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        trial = tpe.ask()
        x = [trial.suggest_float("x%d" % i, 0.0, 1.0) for i in range(6)]
        times.append(time.perf_counter() - start)
        tpe.tell(trial, hartmann6(x))
    return times


def p90(values):
    v = sorted(values)
    return v[min(len(v) - 1, int(math.ceil(0.9 * len(v))) - 1)]


def get_study_times(cairn, study, count):
    times = []
    for _ in range(count):
        start = time.perf_counter()
        cairn.stub.GetStudy(cairn.spb.GetStudyRequest(name=study))
        times.append(time.perf_counter() - start)
    return times


def get_study_during(cairn, study, reps):
    """GetStudy latencies while another thread runs `reps` suggestions (each
    from a new client, completed only after the measurement: a GetStudy
    waits for a concurrent CompleteTrial's durable write by design, which
    is not what this measures)."""
    import threading
    done = threading.Event()
    created = []

    def suggest_loop():
        try:
            for i in range(reps):
                created.append(cairn.suggest(study, client="busy-%d" % i))
        finally:
            done.set()

    # The suggesting thread shares this interpreter: a short GIL switch
    # interval keeps it from holding GetStudy's thread for up to 5 ms (the
    # default) when its RPC returns, which is the client's delay, not
    # cairnd's.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    worker = threading.Thread(target=suggest_loop)
    worker.start()
    times = []
    while not done.is_set():
        times.extend(get_study_times(cairn, study, 1))
    worker.join()
    sys.setswitchinterval(interval)
    for x, _, _, name in created:
        cairn.complete(name, {"value": hartmann6(x)})
    return times


def suggest_batch(cairn, study, count):
    """One SuggestTrials of `count`: (round-trip seconds, [(x, name)])."""
    start = time.perf_counter()
    resp = cairn.stub.SuggestTrials(cairn.spb.SuggestTrialsRequest(
        parent=study, suggestion_count=count, client_id="batch"))
    rtt = time.perf_counter() - start
    out = []
    for t in resp.trials:
        values = {p.parameter_id: p.value.number_value for p in t.parameters}
        out.append(([values["x%d" % i] for i in range(6)], t.name))
    return rtt, out


def part_timing(cairn, args, rows):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    bounds = [(0.0, 1.0)] * 6
    for n in args.timing_sizes:
        history = hartmann_history(n)
        # Cairn: n completed trials created directly, then suggestions.
        study = cairn.create_study("GP_BANDIT", bounds, 1, ["value"])
        for x, y in history:
            cairn.add_completed(study, x, {"value": y})
        # Single suggestions (each completed before the next), then
        # batch-of-8 and single suggestions in pairs.
        designer, rtts, pair_single, batch = [], [], [], []
        for _ in range(args.timing_reps):
            x, sec, rtt, name = cairn.suggest(study)
            designer.append(sec)
            rtts.append(rtt)
            cairn.complete(name, {"value": hartmann6(x)})
        otimes = tpe_times(history, args.timing_reps)
        for _ in range(args.timing_reps):
            # The batch first (it pays any scheduled refit), then one
            # suggestion on the same completed trials (same fit, the batch
            # pending), then all complete.
            rtt, trials = suggest_batch(cairn, study, 8)
            batch.append(rtt)
            x, _, rtt, name = cairn.suggest(study)
            pair_single.append(rtt)
            for x, name in trials + [(x, name)]:
                cairn.complete(name, {"value": hartmann6(x)})
        # Idle and busy windows alternate, so both see the same load from
        # other processes (on a shared machine that load, not the study,
        # moves an idle p90 measured once by 10x between runs).
        idle, busy = [], []
        for _ in range(args.timing_reps):
            idle.extend(get_study_times(cairn, study, 40))
            busy.extend(get_study_during(cairn, study, 1))
        what = "hartmann6 %d trials" % n
        single = statistics.median(rtts)
        rows.append(("timing", what, "cairn GP_BANDIT (designer)",
                     [1e3 * statistics.median(designer)]))
        rows.append(("timing", what, "cairn GP_BANDIT (SuggestTrials RPC)",
                     [1e3 * single]))
        rows.append(("timing", what, "optuna TPE (ask)",
                     [1e3 * statistics.median(otimes)]))
        rows.append(("batch", what, "batch of 8 (RPC) / one (RPC)",
                     [1e3 * statistics.median(batch),
                      statistics.median(batch) / statistics.median(pair_single)]))
        rows.append(("getstudy", what, "GetStudy p90 idle / during suggestions",
                     [1e3 * p90(idle), 1e3 * p90(busy), p90(busy) / p90(idle), len(busy)]))
        print("  timing %d done" % n, file=sys.stderr, flush=True)


def part_mo(cairn, args, rows):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    budget = args.mo_budget
    bounds = [(0.0, 1.0)] * 2
    hv_cairn, hv_nsga = [], []
    for seed in range(args.seeds):
        study = cairn.create_study("GP_BANDIT", bounds, seed + 1, ["branin", "currin"], budget)
        points = []
        for _ in range(budget):
            x, _, _, name = cairn.suggest(study)
            f = branin_currin(x)
            cairn.complete(name, {"branin": f[0], "currin": f[1]})
            points.append(f)
        hv_cairn.append(hypervolume_2d_min(points, BC_REFERENCE))
        ys, _ = optuna_run(optuna.samplers.NSGAIISampler(seed=seed + 1), branin_currin,
                           bounds, budget, directions=("minimize", "minimize"))
        hv_nsga.append(hypervolume_2d_min(ys, BC_REFERENCE))
        print("  braincurrin seed %d done" % (seed + 1), file=sys.stderr, flush=True)
    rows.append(("mo", "branin_currin %d trials" % budget, "cairn GP_BANDIT",
                 [statistics.median(hv_cairn)]))
    rows.append(("mo", "branin_currin %d trials" % budget, "optuna NSGA-II",
                 [statistics.median(hv_nsga)]))


def print_table(rows, args):
    import optuna
    print("GP_BANDIT bench via cairnd (gRPC), Optuna %s in the same run, %d seed(s)"
          % (optuna.__version__, args.seeds))
    regret = [r for r in rows if r[0] == "regret"]
    if regret:
        print()
        print("Median simple regret (best found - f*), lower is better")
        header = "%-11s %-36s" % ("function", "algorithm") + "".join(
            " %12s" % ("@%d trials" % b) for b in args.budgets)
        print(header)
        for _, fname, label, med in regret:
            print("%-11s %-36s" % (fname, label) + "".join(" %12.4g" % m for m in med))
    timing = [r for r in rows if r[0] == "timing"]
    if timing:
        print()
        print("Median time of one suggestion, 6-D, after N completed trials (ms)")
        for _, what, label, (ms,) in timing:
            print("%-22s %-38s %10.1f" % (what, label, ms))
    batch = [r for r in rows if r[0] == "batch"]
    if batch:
        print()
        print("Median SuggestTrials of 8 (ms) and its ratio to one suggestion (target <= 3)")
        for _, what, label, (ms, ratio) in batch:
            print("%-22s %-38s %10.1f %8.2fx" % (what, label, ms, ratio))
    gs = [r for r in rows if r[0] == "getstudy"]
    if gs:
        print()
        print("GetStudy p90 (ms) idle and while suggestions run on the study (target <= 5x)")
        for _, what, label, (idle, busy, ratio, count) in gs:
            print("%-22s %-38s %7.2f %7.2f %7.2fx (%d calls)"
                  % (what, label, idle, busy, ratio, count))
    mo = [r for r in rows if r[0] == "mo"]
    if mo:
        print()
        print("Median hypervolume, BraninCurrin, reference (18, 6), higher is better")
        for _, what, label, (hv,) in mo:
            print("%-22s %-38s %10.3f" % (what, label, hv))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budgets", default="50,100")
    ap.add_argument("--functions", default="branin,hartmann6",
                    help="comma-separated; 'multimodal' stands for " + MULTIMODAL +
                    ", 'illscaled' for " + ILLSCALED + ", 'hard' for " + HARD)
    ap.add_argument("--cairn", default="GP_BANDIT,QUASI_RANDOM_SEARCH,RANDOM_SEARCH",
                    help="Cairn algorithms of the regret part (comma-separated, may be empty)")
    ap.add_argument("--optuna", default="tpe,mtpe,cmaes",
                    help="Optuna samplers of the regret part: random,tpe,mtpe,cmaes "
                    "(comma-separated, may be empty)")
    ap.add_argument("--parts", default="regret,timing,mo")
    ap.add_argument("--timing-sizes", default="100,300,1000")
    ap.add_argument("--timing-reps", type=int, default=9)
    ap.add_argument("--mo-budget", type=int, default=100)
    ap.add_argument("--quick", action="store_true",
                    help="2 seeds, 5 timing repetitions (a few minutes)")
    args = ap.parse_args()
    if args.quick:
        args.seeds = min(args.seeds, 2)
        args.timing_reps = min(args.timing_reps, 5)
    args.budgets = [int(b) for b in args.budgets.split(",")]
    args.functions = [f for f in args.functions.replace(
        "multimodal", MULTIMODAL).replace("illscaled", ILLSCALED).replace(
            "hard", HARD).split(",") if f]
    args.cairn = [a for a in args.cairn.split(",") if a]
    args.optuna = [o for o in args.optuna.split(",") if o]
    args.timing_sizes = [int(n) for n in args.timing_sizes.split(",")]
    parts = set(args.parts.split(","))
    cairn = Cairn(args.server)
    rows = []
    if "regret" in parts:
        part_regret(cairn, args, rows)
    if "timing" in parts:
        part_timing(cairn, args, rows)
    if "mo" in parts:
        part_mo(cairn, args, rows)
    print_table(rows, args)


if __name__ == "__main__":
    main()
