"""cairn.optuna.CairnSampler: Optuna's study.optimize driven by a Cairn study
(the GP bandit)."""
import pytest

optuna = pytest.importorskip("optuna")


def test_sampler_optimizes_with_a_cairn_study(client):
    import cairn.optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = cairn.optuna.CairnSampler(client, seed=7)
    study = optuna.create_study(sampler=sampler, study_name="sdk-optuna")

    def objective(trial):
        x = trial.suggest_float("x", -4.0, 4.0)
        n = trial.suggest_int("n", 1, 8)
        kind = trial.suggest_categorical("kind", ["a", "b"])
        lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
        return (x - 1.0) ** 2 + (n - 3) ** 2 + (0 if kind == "b" else 2) + \
            abs(lr - 0.01)

    study.optimize(objective, n_trials=14)
    cairn_study = sampler.cairn_study
    assert cairn_study is not None
    assert cairn_study.display_name == "optuna-sdk-optuna"
    assert [p.parameter_id for p in cairn_study.spec.parameters] == \
        ["kind", "lr", "n", "x"]
    assert cairn_study.spec.algorithm == cairn_study.spec.GP_BANDIT
    trials = cairn_study.trials()
    # Every Optuna trial is in Cairn: the first one told, the rest suggested.
    assert len(trials) == 14 and all(t.state == "SUCCEEDED" for t in trials)
    values = sorted(t.final_metrics["value"] for t in trials)
    assert values == pytest.approx(sorted(t.value for t in study.trials))
    # Cairn's suggestions honour Optuna's distributions.
    for t in study.trials:
        assert -4 <= t.params["x"] <= 4 and isinstance(t.params["n"], int)
        assert t.params["kind"] in ("a", "b") and 1e-4 <= t.params["lr"] <= 1
    best = cairn_study.best_trials()[0]
    assert best.final_metrics["value"] == pytest.approx(study.best_value)


def test_pruned_trials_are_infeasible_in_cairn(client):
    import cairn.optuna
    sampler = cairn.optuna.CairnSampler(client, algorithm="RANDOM_SEARCH")
    study = optuna.create_study(sampler=sampler, direction="maximize",
                                study_name="sdk-optuna-prune")

    def objective(trial):
        y = trial.suggest_float("y", 0.0, 1.0)
        if trial.number == 2:
            raise optuna.TrialPruned()
        return y

    study.optimize(objective, n_trials=4)
    states = [t.state for t in sampler.cairn_study.trials()]
    assert states.count("INFEASIBLE") == 1 and states.count("SUCCEEDED") == 3
