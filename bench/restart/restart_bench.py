#!/usr/bin/python3
"""Restart benchmark driver (run it through bench/restart/run.sh).

For each store size: fills a store with cairn_bench_restart_fill, starts
cairnd on it once (the first start of a store from before the c/ summary
records builds them: timed apart), then restarts it ROUNDS times and takes
the median time from exec to serving (the port file, written once the store,
the controller and the gRPC server are up) and cairnd's resident memory
(VmRSS) SETTLE seconds after it serves. With --before BIN, a second cairnd
binary (e.g. one built before this change) is measured on the same stores in
the same run. Prints one table with the ratios large/small.
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def start_once(cairnd, data_dir, settle):
    """Starts cairnd on data_dir; returns (seconds to serving, RSS MB, log)."""
    port_file = os.path.join(data_dir, "port")
    if os.path.exists(port_file):
        os.unlink(port_file)
    log_path = os.path.join(data_dir, "cairnd.log")
    with open(log_path, "w") as log:
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [cairnd, "--data-dir", data_dir, "--listen", "127.0.0.1:0",
             "--metrics-listen", "", "--http-listen", "", "--gpus", "0",
             "--port-file", port_file],
            stdout=log, stderr=subprocess.STDOUT)
        while not os.path.exists(port_file):
            if proc.poll() is not None:
                sys.exit(f"cairnd exited with {proc.returncode}; see {log_path}")
            if time.monotonic() - t0 > 120:
                proc.kill()
                sys.exit("cairnd did not serve within 120 s")
            time.sleep(0.0005)
        seconds = time.monotonic() - t0
        time.sleep(settle)
        rss = rss_mb(proc.pid)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    with open(log_path) as f:
        return seconds, rss, f.read()


def measure(cairnd, data_dir, rounds, settle):
    """First start, then the median of `rounds` restarts."""
    first, _, log = start_once(cairnd, data_dir, settle)
    times, rsss = [], []
    for _ in range(rounds):
        t, r, log = start_once(cairnd, data_dir, settle)
        times.append(t)
        rsss.append(r)
    return {"first": first, "time": statistics.median(times),
            "rss": statistics.median(rsss), "log": log.strip().splitlines()}


def fill(fill_bin, store_dir, trials, studies):
    t0 = time.monotonic()
    subprocess.run([fill_bin, store_dir, str(trials), str(studies)],
                   check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--before", default="")
    ap.add_argument("--small", type=int, default=2000)
    ap.add_argument("--large", type=int, default=200000)
    ap.add_argument("--studies", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--settle", type=float, default=0.3)
    args = ap.parse_args()
    binaries = [("Cairn", os.path.join(args.bin, "cairnd"))]
    if args.before:
        binaries.append(("before", args.before))
    work = tempfile.mkdtemp(prefix="cairn-bench-restart.")
    # A root cairnd checks that its job user (nobody) reaches the jobs root.
    os.chmod(work, 0o755)
    try:
        results = {}
        for trials in (args.small, args.large):
            base = os.path.join(work, str(trials))
            secs = fill(os.path.join(args.bin, "cairn_bench_restart_fill"),
                        os.path.join(base, "store"), trials, args.studies)
            print(f"filled {trials:,} trials in {args.studies} studies "
                  f"in {secs:.1f} s", file=sys.stderr)
            if args.before:
                # Its own copy: Cairn's first start moves the store to schema
                # version 2, which an older cairnd refuses.
                shutil.copytree(base, base + "-before")
            for label, cairnd in binaries:
                data = base if label == "Cairn" else base + "-before"
                results[(label, trials)] = measure(cairnd, data, args.rounds,
                                                   args.settle)
                started = [x for x in results[(label, trials)]["log"] if "started" in x]
                print(f"{label} at {trials:,}: {started[-1] if started else '?'}",
                      file=sys.stderr)
        report(results, binaries, args)
        ok = all(results[("Cairn", args.large)][k] <=
                 2 * results[("Cairn", args.small)][k] for k in ("time", "rss"))
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(results, binaries, args):
    s, l = args.small, args.large
    print(f"\nrestart of cairnd (median of {args.rounds} restarts; "
          f"RSS {args.settle} s after serving; {args.studies} studies)\n")
    print(f"| binary | figure | {s:,} trials | {l:,} trials | ratio | target |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, _ in binaries:
        a, b = results[(label, s)], results[(label, l)]
        rows = [("time to serving", a["time"] * 1e3, b["time"] * 1e3, "ms", "<= 2x"),
                ("RSS after restart", a["rss"], b["rss"], "MB", "<= 2x"),
                ("first start", a["first"] * 1e3, b["first"] * 1e3, "ms", "")]
        for name, x, y, unit, target in rows:
            ratio = y / x if x > 0 else float("nan")
            verdict = ""
            if target and label == "Cairn":
                verdict = "met" if ratio <= 2 else "MISSED"
            print(f"| {label} | {name} | {x:.1f} {unit} | {y:.1f} {unit} | "
                  f"{ratio:.2f}x | {target} {verdict} |")


if __name__ == "__main__":
    sys.exit(main())
