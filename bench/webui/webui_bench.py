#!/usr/bin/python3
"""Web UI bench: the study page's load time in headless chromium with
10,000 trials (target < 2 s), against a real cairnd.

Load time: from navigation start to the first frame painted after the
study view is fully drawn (every trial in the table, the history,
parallel-coordinates and slice charts), measured in the browser (the UI's
performance mark "cairn-painted"; 0 is navigation start). Printed beside the time of fetching the trials alone (the REST
API, in the same browser), the time of GET .../parameterImportance (the
forest fitted on the last 2,000 trials) and the same at 1,000 trials.

Usage: webui_bench.py --bin BUILD/bin [--trials 10000] [--rounds 3]"""
import argparse
import concurrent.futures
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "http"))
import webui  # noqa: E402

DRAWN_JS = """
const t = document.getElementById('trials');
const h = document.getElementById('history');
const p = document.getElementById('parallel');
if (!t || !h || !p || t.tBodies[0].rows.length !== arguments[0]) return -1;
if (h.dataset.points !== String(arguments[1])) return -1;
if (p.dataset.points !== String(arguments[1])) return -1;
const mark = (n) => { const e = performance.getEntriesByName(n); return e.length ? e[0].startTime : -1; };
return mark('cairn-painted') < 0 ? -1 :
  ['cairn-fetch-start', 'cairn-fetched', 'cairn-drawn', 'cairn-painted'].map(mark);"""

FETCH_JS = """
const done = arguments[arguments.length - 1];
const t0 = performance.now();
listAll('studies/' + arguments[0] + '/trials', 'trials', 10000)
  .then((ts) => done([ts.length, performance.now() - t0]), (e) => done(String(e)));"""


def fill(server, study, n):
    """Study `study` with n trials, all completed (8 clients at once)."""
    server.ok("POST", "studies", webui.study_spec("bench-%d" % n, n))
    trials = []
    while len(trials) < n:
        trials += server.ok("POST", "studies/%d/trials:suggest" % study, {
            "suggestionCount": min(1000, n - len(trials)),
            "clientId": "c%d" % len(trials)})["trials"]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda t: webui.complete(server, t), trials))


def load_ms(driver, server, study, n):
    driver.get(server.base + "/")  # Leave the page so the next load is fresh.
    driver.get(server.base + "/studies/%d" % study)
    deadline = time.time() + 60
    while time.time() < deadline:
        t = driver.execute_script(DRAWN_JS, n, n)
        if t != -1:
            return t  # [fetch start, fetched, drawn, painted] in ms.
        time.sleep(0.01)
    raise RuntimeError("study page with %d trials did not draw in 60 s" % n)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--trials", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    why = webui.browser_missing()
    if why:
        print("SKIPPED: " + why)
        return 0
    server = webui.Cairnd(args.bin)
    driver = None
    try:
        t0 = time.time()
        sizes = [1000, args.trials]
        for i, n in enumerate(sizes):
            fill(server, i + 1, n)
        print("made studies of %s trials in %.1f s" % (sizes, time.time() - t0))
        driver = webui.new_browser()
        driver.get(server.base + "/login?token=" + server.token)
        results = {}
        for i, n in enumerate(sizes):
            marks = [load_ms(driver, server, i + 1, n) for _ in range(args.rounds)]
            marks.sort(key=lambda m: m[3])
            loads = [m[3] for m in marks]
            median = marks[len(marks) // 2]
            print("%d trials, the median load's steps (ms from navigation "
                  "start): page ready %.0f, trials fetched %.0f, drawn %.0f, "
                  "painted %.0f" % (n, *median))
            fetches = []
            for _ in range(args.rounds):
                count, ms = driver.execute_async_script(FETCH_JS, i + 1)
                assert count == n, count
                fetches.append(ms)
            importance = []
            for _ in range(args.rounds):
                t = time.time()
                server.ok("GET", "studies/%d/parameterImportance" % (i + 1))
                importance.append((time.time() - t) * 1000)
            results[n] = (statistics.median(loads), statistics.median(fetches),
                          statistics.median(importance))
        print("\nstudy page load in headless chromium (median of %d; cairnd on "
              "loopback)" % args.rounds)
        print("%8s  %12s  %14s  %10s  %12s" % (
            "trials", "page load", "trials fetch", "vs 2 s", "importance"))
        for n, (load, fetch, imp) in results.items():
            print("%8d  %9.0f ms  %11.0f ms  %9.2fx  %9.0f ms" % (
                n, load, fetch, load / 2000.0, imp))
        load = results[args.trials][0]
        print("\n%d trials: %.2f s (target < 2 s): %s" % (
            args.trials, load / 1000, "OK" if load < 2000 else "OVER TARGET"))
        return 0
    finally:
        if driver is not None:
            driver.quit()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
