#!/usr/bin/python3
"""Mixed load on cairnd: many concurrent clients, GP_BANDIT studies among them.

Each client owns a connection and a client_id and loops on one study:
SuggestTrials(count=1), two AddTrialMeasurement, CompleteTrial, and every
fifth round a ListTrials. With --trial-seconds S a client "trains" between
calls, as a real one does: it sleeps S/3 before each AddTrialMeasurement
and before CompleteTrial; with 0 (the default) it calls back to back, so
64 clients saturate a small machine and the figures measure CPU queueing
as much as the service. A quarter of the clients (rounded up) work on
GP_BANDIT studies (6-D, Hartmann6, 4 clients per study, each study first
given --gp-history completed trials), the rest on RANDOM_SEARCH studies.
Clients run in --procs processes (threads inside each), so the client
side's GIL does not serialize them. Prints operations/s, errors and
p50/p99 per RPC, for GP and other studies separately, and how many GP
suggestions were of each suggestion_kind (quasi_random_deadline: the
deadline fallback; pure_exploration: later members of a batch).

Usage: load_bench.py --server HOST:PORT [--clients 64] [--duration 60]
                     [--procs 4] [--gp-history 60] [--trial-seconds 0]
"""
import argparse
import math
import multiprocessing
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gp"))
import gp_bench  # noqa: E402  (stubs, token, Hartmann6)

GP_CLIENTS_PER_STUDY = 4


def make_client(server):
    import grpc
    pb, spb, grpc_mod = gp_bench.load_stubs()
    channel = grpc.insecure_channel(server)
    grpc.channel_ready_future(channel).result(timeout=30)
    stub = gp_bench.Authed(grpc_mod.StudyServiceStub(channel), gp_bench.cairn_token())
    return pb, spb, stub


def create_study(pb, spb, stub, algorithm, name, dims):
    spec = pb.StudySpec(algorithm=pb.StudySpec.Algorithm.Value(algorithm), seed=1)
    for i in range(dims):
        spec.parameters.add(parameter_id="x%d" % i, type=pb.ParameterSpec.DOUBLE,
                            min_value=0.0, max_value=1.0)
    spec.metrics.add(metric_id="value", goal=pb.MetricSpec.MINIMIZE)
    return stub.CreateStudy(spb.CreateStudyRequest(
        study=pb.Study(display_name=name, spec=spec))).name


def fill(pb, spb, stub, study, n):
    rng = random.Random(n)
    for _ in range(n):
        t = pb.Trial()
        x = [rng.random() for _ in range(6)]
        for i, v in enumerate(x):
            t.parameters.add(parameter_id="x%d" % i).value.number_value = v
        t.final_measurement.metrics.add(metric_id="value", value=gp_bench.hartmann6(x))
        stub.CreateTrial(spb.CreateTrialRequest(parent=study, trial=t))


def timed(lat, key, fn):
    start = time.perf_counter()
    try:
        out = fn()
    except Exception:  # noqa: BLE001  (counted, the run goes on)
        lat.setdefault(key + " errors", []).append(0.0)
        return None
    lat.setdefault(key, []).append(time.perf_counter() - start)
    return out


def client_loop(server, study, group, client_id, window, lat):
    pb, spb, stub = make_client(server)
    start_at, stop_at, step_seconds = window
    time.sleep(max(0.0, start_at - time.time()))
    rounds = 0
    while time.time() < stop_at:
        resp = timed(lat, group + " SuggestTrials", lambda: stub.SuggestTrials(
            spb.SuggestTrialsRequest(parent=study, suggestion_count=1, client_id=client_id)))
        if resp is None or not resp.trials:
            continue
        trial = resp.trials[0]
        kind = trial.metadata.get("suggestion_kind", "none")
        lat.setdefault(group + " kind " + kind + " count", []).append(0.0)
        x = [p.value.number_value for p in sorted(trial.parameters, key=lambda p: p.parameter_id)]
        y = gp_bench.hartmann6(x) if len(x) == 6 else sum(v * v for v in x)
        for step in (1, 2):
            time.sleep(step_seconds)
            m = pb.Measurement(step_count=step)
            m.metrics.add(metric_id="value", value=y)
            timed(lat, group + " AddTrialMeasurement", lambda: stub.AddTrialMeasurement(
                spb.AddTrialMeasurementRequest(trial_name=trial.name, measurement=m)))
        time.sleep(step_seconds)
        final = pb.Measurement()
        final.metrics.add(metric_id="value", value=y)
        timed(lat, group + " CompleteTrial", lambda: stub.CompleteTrial(
            spb.CompleteTrialRequest(name=trial.name, final_measurement=final)))
        rounds += 1
        if rounds % 5 == 0:
            timed(lat, group + " ListTrials", lambda: stub.ListTrials(
                spb.ListTrialsRequest(parent=study)))


def process_main(server, assignments, window, queue):
    import threading
    lat = {}
    threads = [threading.Thread(target=client_loop, args=(server, study, group, cid, window, lat))
               for study, group, cid in assignments]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put(lat)


def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(math.ceil(q * len(v))) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--gp-history", type=int, default=60)
    ap.add_argument("--trial-seconds", type=float, default=0.0,
                    help="a client's training time per trial (0: none)")
    args = ap.parse_args()
    pb, spb, stub = make_client(args.server)
    gp_clients = int(math.ceil(args.clients / 4))
    tag = "%d-%d" % (os.getpid(), int(time.time()))
    assignments = []
    for k in range(int(math.ceil(gp_clients / GP_CLIENTS_PER_STUDY))):
        study = create_study(pb, spb, stub, "GP_BANDIT", "load-gp-%s-%d" % (tag, k), 6)
        fill(pb, spb, stub, study, args.gp_history)
        for j in range(GP_CLIENTS_PER_STUDY):
            if len(assignments) < gp_clients:
                assignments.append((study, "gp", "gp-%d-%d" % (k, j)))
    for k in range(args.clients - gp_clients):
        study = create_study(pb, spb, stub, "RANDOM_SEARCH", "load-rs-%s-%d" % (tag, k), 2)
        assignments.append((study, "other", "rs-%d" % k))
    random.Random(0).shuffle(assignments)
    # Clients start together once every process has connected.
    start_at = time.time() + 10
    window = (start_at, start_at + args.duration, args.trial_seconds / 3)
    # spawn, not fork: gRPC's threads in this process do not survive a fork.
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=process_main,
                                     args=(args.server, assignments[i::args.procs], window, queue))
             for i in range(args.procs)]
    for p in procs:
        p.start()
    merged = {}
    for _ in procs:
        for key, values in queue.get().items():
            merged.setdefault(key, []).extend(values)
    for p in procs:
        p.join()
    ops = sum(len(v) for k, v in merged.items() if not k.endswith(("errors", "count")))
    errors = sum(len(v) for k, v in merged.items() if k.endswith("errors"))
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print("%d clients (%d on GP_BANDIT studies), %.0f s, %.2f s training per trial: "
          "%.0f operations/s, %d errors; load average at the end %s"
          % (args.clients, gp_clients, args.duration, args.trial_seconds,
             ops / args.duration, errors, load))
    print("%-32s %8s %10s %10s" % ("studies / RPC", "calls", "p50 ms", "p99 ms"))
    for key in sorted(k for k in merged if not k.endswith(("errors", "count"))):
        v = merged[key]
        print("%-32s %8d %10.1f %10.1f" % (key, len(v), 1e3 * percentile(v, 0.5),
                                            1e3 * percentile(v, 0.99)))
    # Model-based kinds: ucb (the first of a designer run), pure_exploration
    # (later members of a batch, i.e. calls answered by a shared run),
    # quasi_random_deadline (the deadline fallback).
    kinds = sorted((k.split(" ")[2], len(v)) for k, v in merged.items()
                   if k.startswith("gp kind "))
    print("GP suggestion kinds: " + ", ".join("%s %d" % kv for kv in kinds))


if __name__ == "__main__":
    main()
