"""cairn.Client against a real cairnd: studies, trials, reports, errors and
where the server and token come from."""
import os

import grpc
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

SPEC = {
    "parameters": [
        {"parameter_id": "lr", "type": "DOUBLE", "min_value": 1e-4,
         "max_value": 1.0, "scale_type": "UNIT_LOG_SCALE"},
        {"parameter_id": "units", "type": "INTEGER", "min_value": 8,
         "max_value": 64},
        {"parameter_id": "opt", "type": "CATEGORICAL",
         "categorical_values": ["adam", "sgd"]},
    ],
    "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
    "algorithm": "RANDOM_SEARCH",
    "max_trials": 3,
}


def test_study_trials_reports_and_best(client):
    import cairn
    study = client.create_study("sdk-basic", SPEC)
    assert study.name.startswith("studies/") and study.state == "ACTIVE"
    assert client.study(study.name).id == study.id
    assert client.study(study.id).display_name == "sdk-basic"
    assert client.study("sdk-basic").name == study.name

    trials = study.suggest(count=2)
    assert len(trials) == 2
    t = trials[0]
    assert isinstance(t, cairn.Trial) and t.state == "ACTIVE"
    assert set(t.parameters) == {"lr", "units", "opt"}
    assert isinstance(t.parameters["units"], int)
    assert isinstance(t.parameters["lr"], float)
    assert t.parameters["opt"] in ("adam", "sgd")
    assert t.final_metrics == {}

    for step in range(1, 2001):
        t.report(step, loss=1.0 / step, acc=step / 2000.0)
    assert not t.should_stop()  # Flushes: every point is durable now.
    history = t.history("loss")
    assert len(history) == 2000
    assert history[0] == (1, 1.0) and history[-1] == (2000, 1.0 / 2000)

    t.complete(loss=0.25)
    assert t.state == "SUCCEEDED" and t.final_metrics == {"loss": 0.25}
    trials[1].report(1, loss=0.5)
    trials[1].complete()  # The last report becomes final.
    assert trials[1].final_metrics == {"loss": 0.5}

    third = study.suggest()[0]
    third.complete(infeasible="diverged")
    assert third.state == "INFEASIBLE" and third.infeasible_reason == "diverged"
    assert study.suggest() == []  # max_trials reached.

    listed = study.trials()
    assert [x.id for x in listed] == sorted(x.id for x in listed)
    assert {x.state for x in listed} == {"SUCCEEDED", "INFEASIBLE"}
    best = study.best_trials()
    assert [b.id for b in best] == [t.id] and best[0].final_metrics["loss"] == 0.25
    assert study.wait(timeout=10).state == "COMPLETED"
    assert study.proto.infeasible_count == 1


def test_spec_from_yaml_file_and_json(client, tmp_path):
    study = client.create_study("sdk-branin",
                                os.path.join(ROOT, "examples/studies/branin.yaml"))
    assert [p.parameter_id for p in study.spec.parameters] == ["x1", "x2"]
    assert study.spec.max_trials == 30
    path = tmp_path / "s.json"
    path.write_text('{"parameters": [{"parameterId": "x", "type": "DOUBLE", '
                    '"minValue": 0, "maxValue": 1}], "metrics": '
                    '[{"metricId": "y", "goal": "MAXIMIZE"}]}')
    assert client.create_study("sdk-json", path).spec.metrics[0].metric_id == "y"
    # YAML 1.2 numbers as the CLI reads them: 1e-3 is a number.
    yaml_path = tmp_path / "s.yaml"
    yaml_path.write_text("parameters:\n- parameter_id: x\n  type: DOUBLE\n"
                         "  min_value: 1e-3\n  max_value: 1\n"
                         "metrics:\n- metric_id: y\n  goal: MINIMIZE\n")
    assert client.create_study("sdk-yaml", str(yaml_path)).spec.parameters[0] \
        .min_value == pytest.approx(1e-3)


def test_errors_carry_code_and_message(client, server, tmp_path):
    import cairn
    with pytest.raises(cairn.NotFoundError) as e:
        client.study("studies/999999")
    assert e.value.code == grpc.StatusCode.NOT_FOUND
    assert "999999" in e.value.message
    with pytest.raises(cairn.NotFoundError):
        client.study("no-such-study")

    bad = dict(SPEC, paramters=[])
    with pytest.raises(cairn.InvalidArgumentError) as e:
        client.create_study("sdk-bad", bad)
    assert "paramters" in e.value.message
    with pytest.raises(cairn.InvalidArgumentError) as e:
        client.create_study("sdk-bad", dict(SPEC, algorithm="SIMULATED"))
    assert "SIMULATED" in e.value.message
    with pytest.raises(cairn.NotFoundError) as e:
        client.create_study("sdk-bad", str(tmp_path / "missing.yaml"))
    assert "missing.yaml" in e.value.message
    # Aliases that spell out 10^8 values from 400 bytes, and an endless file,
    # are refused as cairn refuses them, not expanded or read on.
    bomb = tmp_path / "bomb.yaml"
    lines = ["a: &a [x,x,x,x,x,x,x,x,x,x]"]
    for prev, name in zip("abcdefg", "bcdefgh"):
        lines.append("%s: &%s [%s]" % (name, name, ",".join(["*" + prev] * 10)))
    bomb.write_text("\n".join(lines + ["parameters: *h"]) + "\n")
    with pytest.raises(cairn.InvalidArgumentError) as e:
        client.create_study("sdk-bomb", str(bomb))
    assert "expands to more than 2000000 values" in e.value.message
    with pytest.raises(cairn.InvalidArgumentError) as e:
        client.create_study("sdk-zero", "/dev/zero")
    assert "is over 16777216 bytes" in e.value.message

    client.create_study("sdk-dup", SPEC)
    with pytest.raises(cairn.AlreadyExistsError) as e:
        client.create_study("sdk-dup", SPEC)
    assert e.value.code == grpc.StatusCode.ALREADY_EXISTS

    # cairnd refuses the metric id: the batch's error surfaces on flush.
    trial = client.study("sdk-dup").suggest()[0]
    trial.report(1, **{"bad metric": 1.0})
    with pytest.raises(cairn.InvalidArgumentError) as e:
        trial.flush()
    assert "bad metric" in e.value.message
    with pytest.raises(cairn.InvalidArgumentError) as e:
        trial.report(1, loss="low")  # Checked at once, before queueing.
    assert "'low'" in e.value.message
    trial.complete(loss=1.0)
    trial.report(2, loss=0.5)  # The trial is finished now.
    with pytest.raises(cairn.CairnError) as e:
        trial.flush()
    assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION

    with cairn.Client(server.address, token="not-a-token") as anonymous:
        with pytest.raises(cairn.UnauthenticatedError):
            anonymous.studies()
    with pytest.raises(cairn.InvalidArgumentError) as e:
        cairn.Client("localhost")
    assert "localhost" in str(e.value)


def test_unset_algorithm_and_seed_are_recorded(client):
    """What runs is what the stored spec says: GP_BANDIT, a random seed."""
    from cairn.v1 import study_pb2
    spec = {"parameters": SPEC["parameters"], "metrics": SPEC["metrics"]}
    first = client.create_study("sdk-defaults-1", spec)
    second = client.create_study("sdk-defaults-2", spec)
    for study in (first, second):
        assert study.spec.algorithm == study_pb2.StudySpec.GP_BANDIT
        assert study.spec.seed != 0
    assert first.spec.seed != second.spec.seed
    assert client.study(first.name).spec.seed == first.spec.seed


def test_create_study_load_if_exists_returns_the_existing_study(client):
    """As Optuna's create_study(load_if_exists=True): a rerun of a script
    gets the study it made, trials included; the default still refuses."""
    import cairn
    first = client.create_study("sdk-load", SPEC)
    first.suggest()[0].complete(loss=1.0)
    other = dict(SPEC, max_trials=9)
    again = client.create_study("sdk-load", other, load_if_exists=True)
    assert again.name == first.name and again.display_name == "sdk-load"
    assert again.spec.max_trials == 3  # Its own spec, not `other`'s.
    assert [t.state for t in again.trials()] == ["SUCCEEDED"]
    with pytest.raises(cairn.AlreadyExistsError):
        client.create_study("sdk-load", SPEC)
    with pytest.raises(cairn.AlreadyExistsError):
        client.create_study("sdk-load", SPEC, load_if_exists=False)
    # A new name is created as without it; a bad spec is refused either way.
    fresh = client.create_study("sdk-load-new", SPEC, load_if_exists=True)
    assert fresh.name != first.name and fresh.state == "ACTIVE"
    with pytest.raises(cairn.InvalidArgumentError):
        client.create_study("sdk-load", {"parameters": "x"},
                            load_if_exists=True)
    # Display names that look like ids are looked up as display names.
    digits = client.create_study("12345", SPEC)
    assert client.create_study("12345", SPEC,
                               load_if_exists=True).name == digits.name


def test_stop_makes_should_stop_true(client):
    study = client.create_study("sdk-stop", SPEC)
    trial = study.suggest()[0]
    trial.report(1, loss=1.0)
    assert not trial.should_stop()
    trial.stop()
    assert trial.state == "STOPPING" and trial.should_stop()


def test_server_and_token_from_environment(server, monkeypatch, tmp_path):
    import cairn
    monkeypatch.setenv("CAIRN_SERVER", server.address)
    token_file = tmp_path / "token"
    token_file.write_text(server.token + "\n")
    monkeypatch.setenv("CAIRN_TOKEN_FILE", str(token_file))
    with cairn.Client() as c:
        assert c.server == server.address
        c.studies()
    monkeypatch.setenv("CAIRN_TOKEN", "wrong")  # Wins over the file.
    with cairn.Client() as c:
        with pytest.raises(cairn.UnauthenticatedError):
            c.studies()
    monkeypatch.delenv("CAIRN_TOKEN")
    monkeypatch.setenv("CAIRN_TOKEN_FILE", str(tmp_path / "absent"))
    with pytest.raises(cairn.NotFoundError) as e:
        cairn.Client()
    assert "absent" in e.value.message
    # An endless file is no token file: refused after 4 KB, not read on.
    monkeypatch.setenv("CAIRN_TOKEN_FILE", "/dev/zero")
    with pytest.raises(cairn.InvalidArgumentError) as e:
        cairn.Client()
    assert "no token: '/dev/zero' is over 4096 bytes" in e.value.message
    monkeypatch.delenv("CAIRN_TOKEN_FILE")
    with pytest.raises(cairn.InvalidArgumentError) as e:
        cairn.Client(server=server.address, token=server.token,
                     tls_ca="/dev/zero")
    assert "not a PEM file" in e.value.message
