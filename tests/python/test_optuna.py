"""cairn.optuna.CairnSampler: Optuna's study.optimize driven by a Cairn study
(the GP bandit)."""
import re

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


def test_no_doubled_optuna_prefix(client):
    """An Optuna study already named optuna-... keeps its name in Cairn
    (it became "optuna-optuna-cancer", issue 33); others get the prefix."""
    import cairn.optuna

    def objective(trial):
        return trial.suggest_float("x", 0.0, 1.0)

    names = {}
    for optuna_name in ("optuna-cancer", "Optuna_iris", "optuna",
                        "optunafied"):
        sampler = cairn.optuna.CairnSampler(client, seed=2,
                                            algorithm="RANDOM_SEARCH")
        study = optuna.create_study(sampler=sampler, study_name=optuna_name)
        study.optimize(objective, n_trials=2)
        names[optuna_name] = sampler.cairn_study.display_name
    assert names == {"optuna-cancer": "optuna-cancer",
                     "Optuna_iris": "Optuna_iris", "optuna": "optuna",
                     "optunafied": "optuna-optunafied"}
    assert not [s.display_name for s in client.studies()
                if re.match(r"optuna-optuna(?:[-_]|$)", s.display_name,
                            re.IGNORECASE)]


def test_sampler_study_is_labelled_seeded_and_reused(client):
    """A CairnSampler study carries cairn.driver=optuna (so the stalled
    alert skips it); without a seed cairnd records a random one, and a
    rerun of the same Optuna study reuses that Cairn study all the same."""
    import cairn.optuna

    def objective(trial):
        return trial.suggest_float("x", 0.0, 1.0)

    used = []
    for _ in range(2):
        sampler = cairn.optuna.CairnSampler(client, algorithm="RANDOM_SEARCH")
        study = optuna.create_study(sampler=sampler, study_name="rerun")
        study.optimize(objective, n_trials=2)
        used.append(sampler.cairn_study.name)
    assert used[0] == used[1]
    spec = client.study(used[0]).spec
    assert spec.labels["cairn.driver"] == "optuna"
    assert spec.seed != 0


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


def _new_trial(study):
    """A RUNNING trial no sampler has seen (as Optuna's sampler tests make
    them)."""
    return study._storage.get_trial(
        study._storage.create_new_trial(study._study_id))


def _cairn_value(value):
    return value if isinstance(value, str) else float(value)


def _check_cairn_holds_what_optuna_evaluated(client, optuna_study, prefix):
    """Every trial of the Cairn studies named `prefix`... is one Optuna trial
    (the one it was suggested for, or the one it was told of) and holds
    exactly that trial's values; returns the Cairn trials."""
    def check(cairn_trial, t):
        assert cairn_trial.parameters == {
            k: _cairn_value(v) for k, v in t.params.items()
            if k in cairn_trial.parameters}, (cairn_trial, t.params)
        assert set(cairn_trial.parameters) <= set(t.params)
        if cairn_trial.state == "SUCCEEDED":
            assert cairn_trial.final_metrics["value"] == pytest.approx(t.value)

    # The trials Cairn suggested that are still in Cairn.
    by_cairn_name = {}
    for t in optuna_study.trials:
        name = t.system_attrs.get("cairn:trial")
        if name in by_cairn_name:
            raise AssertionError("%s suggested twice" % name)
        by_cairn_name[name] = t
    studies = [s for s in client.studies()
               if s.display_name == prefix or
               s.display_name.startswith(prefix + "-")]
    assert studies
    cairn_trials = [ct for s in studies for ct in s.trials()]
    for ct in cairn_trials:
        if ct.name in by_cairn_name:
            check(ct, by_cairn_name[ct.name])
    # The others: Optuna trials told to Cairn.
    by_number = {str(t.number): t for t in optuna_study.trials}
    for ct in cairn_trials:
        if ct.name not in by_cairn_name:
            t = by_number.get(ct.proto.labels.get("optuna_trial"))
            assert t is not None, "%s is no Optuna trial" % ct
            check(ct, t)
    return cairn_trials


def test_cairn_stores_only_values_the_objective_evaluated(client):
    """Define-by-run: a range moves, a parameter appears, one disappears.
    Every Cairn trial must hold the values its Optuna trial evaluated."""
    import cairn.optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sampler = cairn.optuna.CairnSampler(client, seed=3,
                                        algorithm="RANDOM_SEARCH")
    study = optuna.create_study(sampler=sampler, study_name="sdk-moving")

    def objective(trial):
        phase = trial.number // 4
        low = 0.0 if phase == 0 else 20.0  # The range of x moves.
        x = trial.suggest_float("x", low, low + 10) if phase < 2 else 0.0
        y = trial.suggest_int("y", 0, 5)
        if phase >= 1:  # z appears.
            y += trial.suggest_categorical("z", ["a", "b"]) == "a"
        return x + y

    study.optimize(objective, n_trials=12)
    checked = _check_cairn_holds_what_optuna_evaluated(
        client, study, "optuna-sdk-moving")
    assert len([t for t in checked if t.state == "SUCCEEDED"]) >= 11


def test_a_finite_space_keeps_serving_more_trials_than_points(client):
    """3 x 3 categorical, 10 trials asked at once: each gets a Cairn
    suggestion (points repeat) and the Cairn study stays ACTIVE."""
    import cairn.optuna
    sampler = cairn.optuna.CairnSampler(client, seed=5)
    study = optuna.create_study(sampler=sampler, study_name="sdk-3x3")

    def objective(trial):
        a = trial.suggest_categorical("a", ["p", "q", "r"])
        b = trial.suggest_categorical("b", ["u", "v", "w"])
        return "pqr".index(a) + "uvw".index(b)

    study.optimize(objective, n_trials=1)  # Optuna learns the space.
    asked = [study.ask() for _ in range(10)]
    for trial in asked:
        study.tell(trial, objective(trial))
    study.optimize(objective, n_trials=3)
    cairn_study = sampler.cairn_study.refresh()
    assert cairn_study.state == "ACTIVE"
    later = study.trials[1:]
    assert len(later) == 13
    assert all("cairn:trial" in t.system_attrs for t in later), \
        "a trial fell back to the independent sampler"
    checked = _check_cairn_holds_what_optuna_evaluated(
        client, study, "optuna-sdk-3x3")
    assert len(checked) == 14
    repeats = [t for t in cairn_study.trials()
               if t.proto.metadata.get("repeated_point") == "true"]
    assert repeats


def test_sample_relative_samples_exactly_the_space_it_is_given(client):
    """Each distinct relative space has its own Cairn study; a study of the
    same name is reused only for the same space."""
    import cairn.optuna
    from optuna.distributions import (CategoricalDistribution,
                                      FloatDistribution, IntDistribution)
    sampler = cairn.optuna.CairnSampler(client, seed=1,
                                        algorithm="RANDOM_SEARCH")
    study = optuna.create_study(sampler=sampler, study_name="sdk-spaces")
    full = {"x": FloatDistribution(-1, 1), "n": IntDistribution(1, 9),
            "c": CategoricalDistribution(["a", "b"]),
            "one": IntDistribution(4, 4)}
    study.tell(study.ask(full), 1.0)
    assert sampler.infer_relative_search_space(study, study.trials[0]) == {
        k: v for k, v in full.items() if k != "one"}
    for space in (full, {"x": full["x"]}, {"n": full["n"], "c": full["c"]},
                  full):
        params = sampler.sample_relative(study, _new_trial(study), space)
        assert set(params) == set(space)
        for name, value in params.items():
            assert space[name]._contains(space[name].to_internal_repr(value))
    names = [s.display_name for s in sampler.cairn_studies]
    assert names == ["optuna-sdk-spaces", "optuna-sdk-spaces-2",
                     "optuna-sdk-spaces-3"]
    first = sampler.cairn_studies[0]
    assert len(first.trials()) == 3  # Told trial 0, suggested twice.
    # Another sampler of the same Optuna study reuses the studies whose
    # space it samples.
    again = cairn.optuna.CairnSampler(client, seed=1,
                                      algorithm="RANDOM_SEARCH")
    again.sample_relative(study, _new_trial(study),
                          {"x": full["x"]})
    assert again.cairn_study.name == sampler.cairn_studies[1].name
    # ... but not a study of that name with another space.
    other = cairn.optuna.CairnSampler(client, seed=1, study_name="sdk-spaces-x")
    client.create_study("sdk-spaces-x", {
        "parameters": [{"parameterId": "x", "type": "DOUBLE",
                        "minValue": 0, "maxValue": 1}],
        "metrics": [{"metricId": "value", "goal": "MINIMIZE"}]})
    other.sample_relative(study, _new_trial(study),
                          {"x": full["x"]})
    assert other.cairn_study.display_name == "sdk-spaces-x-2"
