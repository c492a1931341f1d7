"""cairn.job inside a real trial job that cairnd runs: the job reports and
completes with no setup (server, trial and token from its environment)."""
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def test_job_reports_through_cairn_job(client, cairn_lib):
    # Beside the package: the job user (nobody, under root) can read it.
    script = os.path.join(cairn_lib, "sdk_job.py")
    shutil.copy(os.path.join(HERE, "sdk_job.py"), script)
    os.chmod(script, 0o755)
    study = client.create_study("sdk-job", {
        "parameters": [{"parameter_id": "x", "type": "DOUBLE",
                        "min_value": 0, "max_value": 1}],
        "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
        "algorithm": "RANDOM_SEARCH",
        "max_trials": 2,
        "job_template": {
            "command": [sys.executable, script],
            "env": {"PYTHONPATH": cairn_lib},
        },
    })
    study.wait(timeout=60, interval=0.2)
    trials = study.trials()
    logs = {t.name: t.proto.job.log_path for t in trials}
    assert len(trials) == 2, logs
    for t in trials:
        assert t.state == "SUCCEEDED", open(logs[t.name]).read()[-2000:]
        x = t.parameters["x"]
        assert t.final_metrics["loss"] == pytest.approx((x - 0.3) ** 2)
        history = t.history("loss")
        assert [s for s, _ in history] == list(range(1, 21))
        assert history[-1][1] == pytest.approx((x - 0.3) ** 2 + 1 / 20)


def test_outside_a_job_is_a_clear_error(cairn_lib):
    import cairn
    import cairn.job
    assert not cairn.job.in_job()
    with pytest.raises(cairn.FailedPreconditionError) as e:
        cairn.job.report(1, loss=1.0)
    assert "CAIRN_TRIAL_ID" in e.value.message
