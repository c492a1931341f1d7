#!/usr/bin/python3
"""The trainer of the container tests' image (ENTRYPOINT).

Arguments --name=value; the trial's parameters (e.g. --x=0.5) and
--job-dir=DIR come last, as cairnd appends them. It prints one line
"whoami uid=U tf_config=T" and writes DIR/result.json, then reports
objective = x * x through the cloudml-hypertune protocol to
/tmp/hypertune/output.metrics (--metric-path=default, cloudml-hypertune's
default when CLOUD_ML_HP_METRIC_FILE is ignored), to $CLOUD_ML_HP_METRIC_FILE
(--metric-path=env) or through cairn.job (--metric-path=sdk). Switches:
--sleep=S (seconds before reporting; SIGTERM ends it with 143),
--ignore-term=1 (SIGTERM ignored), --alloc-mb=N (touch N MiB), --exit=N,
--wait-workers=N (the master waits up to 60 s for N workers' result files,
as a real distributed trainer waits for its workers: the master's exit ends
the trial and stops them).
"""
import json
import os
import signal
import sys
import time

args = {}
for a in sys.argv[1:]:
    if a.startswith("--") and "=" in a:
        k, v = a[2:].split("=", 1)
        args[k] = v

if args.get("ignore-term") == "1":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
else:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

print("whoami uid=%d tf_config=%s" % (os.getuid(), os.environ.get("TF_CONFIG", "")), flush=True)
job_dir = args.get("job-dir", "")
if job_dir:
    with open(os.path.join(job_dir, "result-%s.json" % os.environ.get("CAIRN_REPLICA", "")), "w") as f:
        json.dump({"uid": os.getuid(), "args": sys.argv[1:],
                   "cluster_spec": os.environ.get("CLUSTER_SPEC")}, f)
if "alloc-mb" in args:
    block = bytearray(int(args["alloc-mb"]) * 1024 * 1024)
    for i in range(0, len(block), 4096):
        block[i] = 1
if job_dir and os.environ.get("CAIRN_REPLICA", "master").startswith("master"):
    wait_until = time.time() + 60
    while time.time() < wait_until and sum(
            1 for n in os.listdir(job_dir)
            if n.startswith("result-worker-")) < int(args.get("wait-workers", "0")):
        time.sleep(0.05)
deadline = time.time() + float(args.get("sleep", "0"))
while time.time() < deadline:
    time.sleep(0.05)

x = float(args.get("x", "1"))
where = args.get("metric-path", "default")
tag = os.environ.get("CLOUD_ML_HP_METRIC_TAG", "objective") or "objective"
master = os.environ.get("CAIRN_REPLICA", "master").startswith("master")
if master and where == "sdk":
    import cairn.job
    cairn.job.report(1, {tag: x * x})
elif master:
    path = "/tmp/hypertune/output.metrics" if where == "default" else os.environ["CLOUD_ML_HP_METRIC_FILE"]
    with open(path, "w") as f:
        f.write(json.dumps({tag: str(x * x), "global_step": "1", "timestamp": time.time()}, sort_keys=True) + "\n")
sys.exit(int(args.get("exit", "0")))
