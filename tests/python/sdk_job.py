"""A training job for test_job.py: reports with cairn.job, no setup.

Reports loss = (x - 0.3)^2 + 1/step for steps 1..20 and completes the trial
with loss = (x - 0.3)^2, unless cairnd asks it to stop first."""
import sys

import cairn.job

args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
x = float(args["x"])
assert cairn.job.in_job() and cairn.job.job_dir() == args["job-dir"]
assert cairn.job.parameters() == {"x": x}
for step in range(1, 21):
    cairn.job.report(step, loss=(x - 0.3) ** 2 + 1.0 / step)
    if step % 5 == 0 and cairn.job.should_stop():
        break
cairn.job.complete(loss=(x - 0.3) ** 2)
print("completed", cairn.job.trial_name(), flush=True)
