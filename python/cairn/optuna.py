"""An Optuna sampler backed by a Cairn study (the GP bandit by default):

    import optuna, cairn, cairn.optuna
    sampler = cairn.optuna.CairnSampler(cairn.Client())
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=30)

Optuna's search space is define-by-run, so the sampler learns it the way
Optuna's own relative samplers do: the first trial is sampled by the
independent sampler (random), and once a trial completed, the intersection
of the completed trials' distributions becomes the Cairn study's search
space. The Cairn study is created then (display name "optuna-<study name>",
or `study_name`), told every trial completed so far (CreateTrial with its
final values), and from then on each Optuna trial is a Cairn suggestion,
completed with the objective value(s) when Optuna finishes it (pruned and
failed trials are completed as infeasible). Parameters outside the Cairn
study's space (added later by the objective) are sampled independently.

Mapping of distributions: FloatDistribution -> DOUBLE (log -> UNIT_LOG_SCALE;
with step -> DISCRETE), IntDistribution -> INTEGER (log -> UNIT_LOG_SCALE;
step > 1 -> DISCRETE), CategoricalDistribution -> CATEGORICAL (the choices'
str(); their index when those collide). One objective is the metric "value",
several "value0", "value1", ...
"""
import re
import threading

import grpc
import optuna
from optuna.distributions import (CategoricalDistribution, FloatDistribution,
                                  IntDistribution)
from optuna.samplers import BaseSampler, IntersectionSearchSpace, RandomSampler
from optuna.trial import TrialState

from cairn.errors import AlreadyExistsError, CairnError, make_error
from cairn.v1 import study_pb2

_P = study_pb2.ParameterSpec
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_ATTR = "cairn:trial"
_LOG = optuna.logging.get_logger(__name__)
# DISCRETE parameters hold at most this many values (kMaxParameterValues).
_MAX_DISCRETE = 1000


class _Param:
    """One Optuna distribution as a Cairn parameter, both ways."""

    def __init__(self, cairn_id, distribution):
        self.cairn_id = cairn_id
        self.distribution = distribution
        self.spec = _P(parameter_id=cairn_id)
        self.choices = None
        d = distribution
        if isinstance(d, CategoricalDistribution):
            names = [str(c) for c in d.choices]
            if len(set(names)) != len(names) or "" in names:
                names = [str(i) for i in range(len(d.choices))]
            self.choices = names
            self.spec.type = _P.CATEGORICAL
            self.spec.categorical_values.extend(names)
        elif d.step is not None and not (isinstance(d, IntDistribution) and
                                         d.step == 1):
            values = self._grid(d)
            self.spec.type = _P.DISCRETE
            self.spec.discrete_values.extend(values)
        else:
            self.spec.type = (_P.INTEGER if isinstance(d, IntDistribution)
                              else _P.DOUBLE)
            self.spec.min_value = d.low
            self.spec.max_value = d.high
            if d.log:
                self.spec.scale_type = _P.UNIT_LOG_SCALE

    @staticmethod
    def _grid(d):
        n = int(round((d.high - d.low) / d.step)) + 1
        if n > _MAX_DISCRETE:
            raise make_error(grpc.StatusCode.INVALID_ARGUMENT,
                             "CairnSampler: %r has %d steps, more than %d"
                             % (d, n, _MAX_DISCRETE))
        return [d.low + i * d.step for i in range(n)]

    def to_optuna(self, value):
        d = self.distribution
        if self.choices is not None:
            return d.choices[self.choices.index(value)]
        if isinstance(d, IntDistribution):
            return int(round(value))
        return float(value)

    def to_cairn(self, value):
        """A google.protobuf.Value-ready Python value for an Optuna value."""
        if self.choices is not None:
            return self.choices[self.distribution.choices.index(value)]
        return float(value)


class CairnSampler(BaseSampler):
    """Samples Optuna trials from a Cairn study.

    Args:
      client: a cairn.Client.
      seed: the Cairn study's seed (and the independent sampler's).
      algorithm: the Cairn designer ("GP_BANDIT", "RANDOM_SEARCH", ...).
      study_name: the Cairn study's display name (default
        "optuna-<Optuna study name>"); an existing one is reused.
      independent_sampler: samples what Cairn does not (default
        RandomSampler(seed)).
    """

    def __init__(self, client, seed=None, *, algorithm="GP_BANDIT",
                 study_name=None, independent_sampler=None):
        self._client = client
        self._seed = seed
        self._algorithm = algorithm
        self._study_name = study_name
        self._independent = independent_sampler or RandomSampler(seed=seed)
        self._space = IntersectionSearchSpace(include_pruned=False)
        self._lock = threading.Lock()
        self._study = None  # The Cairn study, once the space is known.
        self._params = {}   # Optuna name -> _Param.
        self._trials = {}   # Optuna trial number -> cairn.Trial.

    @property
    def cairn_study(self):
        """The Cairn study, or None before the first trial completed."""
        return self._study

    def reseed_rng(self):
        self._independent.reseed_rng()

    def infer_relative_search_space(self, study, trial):
        if self._study is not None:
            return {name: p.distribution for name, p in self._params.items()}
        space = {name: d for name, d in self._space.calculate(study).items()
                 if not d.single()}
        if space:
            self._start(study, space)
        return space if self._study is not None else {}

    def sample_relative(self, study, trial, search_space):
        if not search_space or self._study is None:
            return {}
        suggested = self._study.suggest(count=1)
        if not suggested:
            return {}  # The study is done; Optuna samples independently.
        cairn_trial = suggested[0]
        with self._lock:
            self._trials[trial.number] = cairn_trial
        study._storage.set_trial_system_attr(trial._trial_id, _ATTR,
                                             cairn_trial.name)
        by_id = {}
        for parameter in cairn_trial.proto.parameters:
            v = parameter.value
            by_id[parameter.parameter_id] = (
                v.string_value if v.WhichOneof("kind") == "string_value"
                else v.number_value)
        return {name: p.to_optuna(by_id[p.cairn_id])
                for name, p in self._params.items() if p.cairn_id in by_id}

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self._independent.sample_independent(study, trial, param_name,
                                                    param_distribution)

    def after_trial(self, study, trial, state, values):
        with self._lock:
            cairn_trial = self._trials.pop(trial.number, None)
        if cairn_trial is None:
            if self._study is not None and state == TrialState.COMPLETE:
                self._tell_new(trial.params, values)
            return
        if state == TrialState.COMPLETE and values is not None:
            cairn_trial.complete(**self._metrics(values))
        else:
            cairn_trial.complete(infeasible="optuna: trial %s" % state.name)

    # --- helpers ------------------------------------------------------------

    def _metrics(self, values):
        if len(values) == 1:
            return {"value": float(values[0])}
        return {"value%d" % i: float(v) for i, v in enumerate(values)}

    def _start(self, study, space):
        """Creates (or reuses) the Cairn study and tells it the trials
        completed so far."""
        with self._lock:
            if self._study is not None:
                return
            params = {}
            for i, (name, d) in enumerate(sorted(space.items())):
                cairn_id = name if _ID.match(name) and \
                    name.lower().replace("-", "_") != "job_dir" else "p%d" % i
                params[name] = _Param(cairn_id, d)
            spec = study_pb2.StudySpec(
                algorithm=study_pb2.StudySpec.Algorithm.Value(self._algorithm),
                seed=self._seed or 0)
            spec.parameters.extend(p.spec for p in params.values())
            metrics = self._metrics([0.0] * len(study.directions))
            for metric, direction in zip(metrics, study.directions):
                spec.metrics.add(
                    metric_id=metric,
                    goal=(study_pb2.MetricSpec.MAXIMIZE
                          if direction == optuna.study.StudyDirection.MAXIMIZE
                          else study_pb2.MetricSpec.MINIMIZE))
            name = self._study_name or "optuna-%s" % study.study_name
            try:
                cairn_study = self._client.create_study(name, spec)
            except AlreadyExistsError:
                cairn_study = self._client.study(name)
            self._params = params
            self._study = cairn_study
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
            if _ATTR not in t.system_attrs:
                self._tell_new(t.params, t.values)

    def _tell_new(self, params, values):
        """Adds a completed trial Cairn did not suggest, so the designer
        learns from it."""
        if not all(name in params for name in self._params):
            return
        try:
            values_in = {p.cairn_id: p.to_cairn(params[name])
                         for name, p in self._params.items()}
        except ValueError:  # A value outside the Cairn space.
            return
        try:
            trial = self._study.add_trial(values_in)
            trial.complete(**self._metrics(values))
        except CairnError as e:  # E.g. a value off the Cairn grid.
            _LOG.warning("CairnSampler: Cairn was not told of trial %s: %s",
                         params, e)
