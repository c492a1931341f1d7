"""Trial jobs in container images through a real cairnd and real podman:
the job user, the job dir, hypertune metrics from the in-container default
path and from $CLOUD_ML_HP_METRIC_FILE, exit codes, a missing image, OOM,
stop, kill -9 of cairnd, and no runtime."""
import os
import signal
import time

import pytest

from conftest import (IMAGE, Server, container_study, containers_of, job_log,
                      restart)


def test_hyperparameter_trials_report_from_the_default_path(client):
    study = container_study(client, "in-image", ["--metric-path=default"],
                            trials=4, parallel=2)
    study.wait(timeout=120, interval=0.2)
    trials = study.trials()
    assert len(trials) == 4
    for t in trials:
        assert t.state == "SUCCEEDED", job_log(t)
        x = t.parameters["x"]
        assert t.final_metrics["loss"] == pytest.approx(x * x)
        log = job_log(t)
        # The job user (nobody under root), never root.
        assert "whoami uid=%d " % os.stat(t.proto.job.job_dir).st_uid in log
        assert "whoami uid=0 " not in log or os.getuid() != 0
        result = os.path.join(t.proto.job.job_dir, "result-master-replica-0.json")
        assert os.path.exists(result), log


def test_metrics_from_the_env_path_and_exit_codes(client):
    study = container_study(client, "env-path", ["--metric-path=env"])
    study.wait(timeout=60, interval=0.2)
    (t,) = study.trials()
    assert t.state == "SUCCEEDED", job_log(t)
    assert t.final_metrics["loss"] == pytest.approx(t.parameters["x"] ** 2)
    failing = container_study(client, "exit-7", ["--exit=7"])
    failing.wait(timeout=60, interval=0.2)
    (t,) = failing.trials()
    assert t.state == "FAILED"
    assert "exit code 7" in t.proto.job.message


def test_missing_image_fails_fast_naming_it(client):
    started = time.monotonic()
    study = client.create_study("no-image", {
        "parameters": [{"parameter_id": "x", "type": "DOUBLE",
                        "min_value": 1, "max_value": 3}],
        "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
        "max_trials": 1,
        "job_template": {"container": {"image": "localhost/nothing:here"}}})
    study.wait(timeout=30, interval=0.1)
    (t,) = study.trials()
    assert t.state == "FAILED"
    assert "localhost/nothing:here" in t.proto.job.message
    assert t.proto.job.attempts == 1
    assert time.monotonic() - started < 10


def test_memory_limit_reports_out_of_memory(client):
    study = container_study(client, "oom", ["--alloc-mb=400"],
                            memory_bytes=str(64 << 20))
    study.wait(timeout=60, interval=0.2)
    (t,) = study.trials()
    assert t.state == "FAILED"
    assert "out of memory" in t.proto.job.message, t.proto.job.message


def test_stop_removes_the_container_within_the_grace(client, server):
    study = container_study(client, "stop", ["--sleep=120", "--ignore-term=1"])
    deadline = time.monotonic() + 30
    while not containers_of(server.data_dir):
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.1)
    (t,) = study.trials()
    t.stop()
    stopped = time.monotonic()
    while containers_of(server.data_dir):
        # --grace-seconds 2, then podman kill.
        assert time.monotonic() - stopped < 6, server.log()
        time.sleep(0.1)
    study.wait(timeout=30, interval=0.2)


def test_kill_9_of_cairnd_leaves_no_duplicate_and_no_orphan(cairn_lib):
    import cairn
    first = Server(["--grace-seconds", "2"])
    c = cairn.Client(first.address, token=first.token)
    study = container_study(c, "crash", ["--sleep=4"])
    deadline = time.monotonic() + 30
    while not containers_of(first.data_dir):
        assert time.monotonic() < deadline, first.log()
        time.sleep(0.1)
    c.close()
    first.process.send_signal(signal.SIGKILL)
    first.process.wait()
    # conmon keeps the container running without cairnd.
    old = containers_of(first.data_dir)
    assert len(old) == 1
    second = restart(first, ["--grace-seconds", "2"])
    try:
        c = cairn.Client(second.address, token=second.token)
        study = c.study(study.name)
        seen = set()
        deadline = time.monotonic() + 90
        while study.refresh().state == "ACTIVE" or study.proto.pending_count:
            now = containers_of(first.data_dir)
            assert len(now) <= 1, now
            seen.update(now)
            assert time.monotonic() < deadline, second.log()
            time.sleep(0.1)
        (t,) = study.trials()
        assert t.state == "SUCCEEDED", job_log(t)
        assert t.proto.job.attempts == 2
        assert old[0] not in seen
        assert containers_of(first.data_dir) == []
        c.close()
    finally:
        second.stop()


def test_no_runtime_refuses_at_submission(cairn_lib):
    import cairn
    s = Server(["--container-runtime", "none"])
    try:
        c = cairn.Client(s.address, token=s.token)
        with pytest.raises(cairn.FailedPreconditionError) as e:
            container_study(c, "refused", [])
        assert "container runtime" in e.value.message
        assert IMAGE in e.value.message
        c.close()
    finally:
        s.stop()


def test_mounts_outside_the_job_roots_are_refused(client):
    import cairn
    with pytest.raises(cairn.InvalidArgumentError) as e:
        container_study(client, "etc", [], mounts=[
            {"host_path": "/etc", "container_path": "/mnt/etc",
             "read_only": True}])
    assert "job_template.container.mounts.host_path" in e.value.message
    assert "'/etc'" in e.value.message


def test_study_config_image_shorthand_through_the_cli(server):
    import subprocess
    from conftest import BIN, ROOT
    env = dict(os.environ, CAIRN_SERVER=server.address,
               CAIRN_TOKEN_FILE=os.path.join(server.data_dir, "admin.token"))
    cairn = os.path.join(BIN, "cairn")
    out = subprocess.run(
        [cairn, "study", "create", "--config",
         os.path.join(ROOT, "examples", "studies", "container-trainer.yaml")],
        env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([cairn, "study", "wait", "studies/1"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    out = subprocess.run([cairn, "trial", "list", "studies/1"], env=env,
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.count("SUCCEEDED") == 4, out.stdout


def test_a_runtime_that_is_not_executable_stops_cairnd(cairn_lib, tmp_path):
    runtime = tmp_path / "podman"
    runtime.write_text("not a program")
    runtime.chmod(0o644)
    with pytest.raises(RuntimeError) as e:
        Server(["--container-runtime", str(runtime)])
    assert "--container-runtime: '%s' is not an executable file" % runtime \
        in str(e.value)
