"""Reporting from inside a trial job that cairnd runs, with no setup:

    import cairn.job
    for step in range(epochs):
        ...
        cairn.job.report(step, loss=loss)
        if cairn.job.should_stop():
            break
    cairn.job.complete(loss=loss)   # optional: the job's exit completes it

cairnd sets the job's environment (jobs/job_command.cc): CAIRN_SERVER,
CAIRN_STUDY ("studies/N"), CAIRN_TRIAL_ID, CAIRN_TOKEN (good for this trial
only) and CAIRN_JOB_DIR. The trial's parameters also come as --name=value
arguments; the hypertune metric file (CLOUD_ML_HP_METRIC_FILE) keeps working
beside this module. Reports are batched in the background and flushed by
should_stop(), complete(), flush() and at exit.
"""
import os
import threading

import grpc

from cairn.client import Client
from cairn.errors import make_error

_lock = threading.Lock()
_client = None
_trial = None


def in_job():
    """Whether this process runs as a Cairn trial job."""
    return bool(os.environ.get("CAIRN_STUDY") and
                os.environ.get("CAIRN_TRIAL_ID"))


def trial_name():
    """"studies/N/trials/M" of this job's trial."""
    if not in_job():
        raise make_error(grpc.StatusCode.FAILED_PRECONDITION,
                         "cairn.job: not inside a Cairn trial job "
                         "($CAIRN_STUDY and $CAIRN_TRIAL_ID are not set)")
    return "%s/trials/%s" % (os.environ["CAIRN_STUDY"],
                             os.environ["CAIRN_TRIAL_ID"])


def job_dir():
    """The trial's job directory ($CAIRN_JOB_DIR), or None."""
    return os.environ.get("CAIRN_JOB_DIR") or None


def client():
    """The Client for this job (from $CAIRN_SERVER and $CAIRN_TOKEN)."""
    global _client
    with _lock:
        if _client is None:
            name = trial_name()  # Refuse outside a job before connecting.
            del name
            _client = Client()
        return _client


def trial():
    """This job's cairn.Trial, fetched once (parameter values as cairnd
    stores them: numbers as floats, categorical values as strings)."""
    global _trial
    c = client()
    with _lock:
        if _trial is None:
            _trial = c.trial(trial_name())
        return _trial


def parameters():
    """This trial's parameters, as a dict."""
    return dict(trial().parameters)


def report(step, metrics=None, **kwargs):
    """Reports metric values at `step`, e.g. report(3, loss=0.2); returns at
    once (batched in the background)."""
    if metrics:
        kwargs.update(metrics)
    if not kwargs:
        raise make_error(grpc.StatusCode.INVALID_ARGUMENT,
                         "report(step=%r) names no metric" % (step,))
    client().reporter().add(trial_name(), step, kwargs, None)


def flush():
    """Waits until the reports so far are durable."""
    client().flush()


def should_stop():
    """Whether cairnd asks this trial to stop early."""
    return trial().should_stop()


def complete(infeasible=None, **metrics):
    """Completes the trial (see cairn.Trial.complete). Without it, the job's
    exit completes the trial with its last report."""
    return trial().complete(infeasible, **metrics)
