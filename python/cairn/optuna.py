"""An Optuna sampler backed by Cairn studies (the GP bandit by default):

    import optuna, cairn, cairn.optuna
    sampler = cairn.optuna.CairnSampler(cairn.Client())
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=30)

How Optuna's sampler contract maps onto Cairn:

- Relative search space. `infer_relative_search_space` returns what Optuna's
  own relative samplers return: the intersection of the finished trials'
  distributions, without single-valued ones (so nothing before the first
  trial completed: that one is sampled independently, i.e. at random).
  `sample_relative` samples exactly the space it is given, which a wrapper
  such as PartialFixedSampler may have narrowed: each distinct space has its
  own Cairn study, created on first use and told every completed Optuna
  trial that evaluated a point of it, so its designer starts from the
  history. Single-valued distributions, and grids Cairn cannot hold (over
  1000 steps), are sampled by the independent sampler there. Parameters
  outside the relative space go to `sample_independent` (Optuna's rule).
- Cairn study names: the first space's study is "optuna-<Optuna study
  name>" (or `study_name`), the next spaces' "<that>-2", "<that>-3", ...
  An Optuna name that already starts with "optuna-" or "optuna_" (or is
  "optuna") is used as it is, so no name carries "optuna-optuna-". An
  existing study of that name is reused only if its spec is the one this
  space makes; otherwise the next name is tried.
- What Cairn stores is what the objective evaluated. When Optuna finishes a
  trial, the Cairn trial suggested for it is completed (pruned and failed
  trials as infeasible) only if the objective used every suggested value.
  If it did not (its search space changed: a range moved past the value, a
  parameter disappeared), the Cairn trial is deleted with a warning. A
  completed trial is then told (a Cairn trial created with its evaluated
  values) to every Cairn study of this sampler whose space holds those
  values and that does not already have it.
- Finite spaces: Cairn studies are created with repeat_points_when_exhausted,
  so when pending trials cover a finite space (more trials asked at once
  than it has points) cairnd suggests points again, as Optuna's own samplers
  do, instead of completing the study: Optuna decides when to stop.

Mapping of distributions: FloatDistribution -> DOUBLE (log -> UNIT_LOG_SCALE;
with step -> DISCRETE), IntDistribution -> INTEGER (log -> UNIT_LOG_SCALE;
step > 1 -> DISCRETE), CategoricalDistribution -> CATEGORICAL (the choices'
str(); their index when those collide). One objective is the metric "value",
several "value0", "value1", ...
"""
import itertools
import re
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import optuna
from optuna.distributions import (BaseDistribution, CategoricalDistribution,
                                  IntDistribution)
from optuna.samplers import BaseSampler, IntersectionSearchSpace, RandomSampler
from optuna.study import Study as OptunaStudy
from optuna.trial import FrozenTrial, TrialState

from cairn.errors import AlreadyExistsError, CairnError
from cairn.v1 import study_pb2

_P = study_pb2.ParameterSpec
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_OPTUNA_PREFIXED = re.compile(r"^optuna(?:[-_]|$)", re.IGNORECASE)
_ATTR = "cairn:trial"     # Optuna system attr: the Cairn trial suggested.
_LABEL = "optuna_trial"   # Cairn trial label: the Optuna trial told.
# Cairn study label saying an Optuna study drives it: cairnd exports it as
# cairn_study_info{driver="optuna"}, which the CairnStudyStalled alert skips
# (monitoring/study_summary.h's kDriverLabelKey).
_DRIVER_LABEL = "cairn.driver"
_LOG = optuna.logging.get_logger(__name__)
# DISCRETE parameters hold at most this many values (kMaxParameterValues).
_MAX_DISCRETE = 1000
_MISSING = object()


def _steps(d: BaseDistribution) -> int:
    return int(round((d.high - d.low) / d.step)) + 1


def _cairn_can_hold(d: BaseDistribution) -> bool:
    """Whether a Cairn parameter can stand for `d` (several values, and a
    grid of at most _MAX_DISCRETE steps)."""
    if d.single():
        return False
    if isinstance(d, CategoricalDistribution) or d.step is None or (
            isinstance(d, IntDistribution) and d.step == 1):
        return True
    return _steps(d) <= _MAX_DISCRETE


class _Param:
    """One Optuna distribution as a Cairn parameter, both ways."""

    def __init__(self, cairn_id: str, distribution: BaseDistribution):
        self.cairn_id = cairn_id
        self.distribution = distribution
        self.spec = _P(parameter_id=cairn_id)
        self.choices: Optional[List[str]] = None
        self.grid: Optional[List[float]] = None
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
            self.grid = [d.low + i * d.step for i in range(_steps(d))]
            self.spec.type = _P.DISCRETE
            self.spec.discrete_values.extend(self.grid)
        else:
            self.spec.type = (_P.INTEGER if isinstance(d, IntDistribution)
                              else _P.DOUBLE)
            self.spec.min_value = d.low
            self.spec.max_value = d.high
            if d.log:
                self.spec.scale_type = _P.UNIT_LOG_SCALE

    def to_optuna(self, value: Any) -> Any:
        d = self.distribution
        if self.choices is not None:
            return d.choices[self.choices.index(value)]
        if isinstance(d, IntDistribution):
            return int(round(value))
        return float(value)

    def to_cairn(self, value: Any) -> Any:
        """The Cairn value (str or float) of an Optuna value, or None when the
        value is not a point of this parameter's distribution."""
        d = self.distribution
        try:
            internal = d.to_internal_repr(value)
        except (ValueError, TypeError):
            return None
        if not d._contains(internal):
            return None
        if self.choices is not None:
            return self.choices[int(internal)]
        if self.grid is not None:  # On the grid within 1e-8 steps: snap.
            return self.grid[int(round((internal - d.low) / d.step))]
        return float(internal)


def _metrics(values: Sequence[float]) -> Dict[str, float]:
    if len(values) == 1:
        return {"value": float(values[0])}
    return {"value%d" % i: float(v) for i, v in enumerate(values)}


def _evaluated(params: Dict[str, Any], suggested: Dict[str, Any]) -> bool:
    """Whether a finished trial's params used every suggested value."""
    for name, value in suggested.items():
        got = params.get(name, _MISSING)
        if got is _MISSING or type(got) is not type(value) or got != value:
            return False
    return True


class _Space:
    """One relative search space and the Cairn study that samples it.
    Immutable once built; its Cairn calls are thread-safe."""

    def __init__(self, cairn_study, params: Dict[str, _Param]):
        self.study = cairn_study
        self.params = params

    def values_of(self, params: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """Cairn values of a trial's params that hold a point of this space
        (extra params ignored), else None."""
        out = {}
        for name, p in self.params.items():
            value = p.to_cairn(params[name]) if name in params else None
            if value is None:
                return None
            out[p.cairn_id] = value
        return out

    def suggest(self) -> Tuple[Any, Dict[str, Any]]:
        """A Cairn trial and its values as Optuna params; (None, {}) when the
        Cairn study suggests nothing (a user stopped it)."""
        suggested = self.study.suggest(count=1)
        if not suggested:
            self.study.refresh()
            _LOG.warning("CairnSampler: %s suggests nothing (%s: %s); the "
                         "independent sampler samples this trial",
                         self.study.name, self.study.state,
                         self.study.proto.inactive_reason)
            return None, {}
        cairn_trial = suggested[0]
        by_id = {}
        for parameter in cairn_trial.proto.parameters:
            v = parameter.value
            by_id[parameter.parameter_id] = (
                v.string_value if v.WhichOneof("kind") == "string_value"
                else v.number_value)
        return cairn_trial, {name: p.to_optuna(by_id[p.cairn_id])
                             for name, p in self.params.items()}

    def tell(self, number: int, params: Dict[str, Any],
             values: Sequence[float]) -> None:
        """Creates a completed Cairn trial for Optuna trial `number` if its
        params hold a point of this space."""
        cairn_values = self.values_of(params)
        if cairn_values is None:
            return
        try:
            trial = self.study.add_trial(cairn_values,
                                         labels={_LABEL: str(number)})
            trial.complete(**_metrics(values))
        except CairnError as e:
            _LOG.warning("CairnSampler: %s was not told of trial %d: %s",
                         self.study.name, number, e)


def _same_spec(stored, requested) -> bool:
    """Whether a stored Cairn study is the one `requested` would make:
    equal but for the seed cairnd picked when `requested` left it 0."""
    if requested.seed == 0:
        stored = type(stored).FromString(stored.SerializeToString())
        stored.seed = 0
    return stored == requested


def _cairn_name(optuna_study_name: str) -> str:
    """The first Cairn study's display name for an Optuna study:
    "optuna-<name>", or the name itself when it already says optuna (so
    "optuna-cancer" stays "optuna-cancer", not "optuna-optuna-cancer")."""
    if _OPTUNA_PREFIXED.match(optuna_study_name):
        return optuna_study_name
    return "optuna-" + optuna_study_name


class CairnSampler(BaseSampler):
    """Samples Optuna trials from Cairn studies (see the module docstring).
    Safe for Optuna's n_jobs threads.

    Args:
      client: a cairn.Client.
      seed: the Cairn studies' seed (and the independent sampler's).
      algorithm: the Cairn designer ("GP_BANDIT", "RANDOM_SEARCH", ...).
      study_name: the first Cairn study's display name (default
        "optuna-<Optuna study name>", or the Optuna name itself when it
        already starts with "optuna-"); later spaces add "-2", "-3", ...
      independent_sampler: samples what Cairn does not (default
        RandomSampler(seed)).
    """

    def __init__(self, client, seed: Optional[int] = None, *,
                 algorithm: str = "GP_BANDIT",
                 study_name: Optional[str] = None,
                 independent_sampler: Optional[BaseSampler] = None):
        self._client = client
        self._seed = seed
        self._algorithm = algorithm
        self._study_name = study_name
        self._independent = independent_sampler or RandomSampler(seed=seed)
        self._intersection = IntersectionSearchSpace(include_pruned=False)
        self._create_lock = threading.Lock()  # Serializes study creation.
        # State below is protected by _lock.
        self._lock = threading.Lock()
        self._spaces: Dict[frozenset, _Space] = {}  # In creation order.
        self._last: Optional[_Space] = None
        # Optuna trial number -> (space, Cairn trial, suggested params).
        self._pending: Dict[int, Tuple[_Space, Any, Dict[str, Any]]] = {}

    @property
    def cairn_study(self):
        """The Cairn study of the last relative space sampled, or None
        before the first."""
        with self._lock:
            return self._last.study if self._last is not None else None

    @property
    def cairn_studies(self) -> list:
        """Every Cairn study this sampler used, in the order it made them."""
        with self._lock:
            return [s.study for s in self._spaces.values()]

    def reseed_rng(self) -> None:
        self._independent.reseed_rng()

    def infer_relative_search_space(
            self, study: OptunaStudy,
            trial: FrozenTrial) -> Dict[str, BaseDistribution]:
        space = self._intersection.calculate(study)
        return {name: d for name, d in space.items() if not d.single()}

    def sample_relative(self, study: OptunaStudy, trial: FrozenTrial,
                        search_space: Dict[str, BaseDistribution]
                        ) -> Dict[str, Any]:
        held = {name: d for name, d in search_space.items()
                if _cairn_can_hold(d)}
        params = {name: self._independent.sample_independent(study, trial,
                                                             name, d)
                  for name, d in search_space.items() if name not in held}
        if not held:
            return params
        space = self._space_for(study, held)
        cairn_trial, suggested = space.suggest()
        if cairn_trial is None:
            params.update({name: self._independent.sample_independent(
                study, trial, name, d) for name, d in held.items()})
            return params
        with self._lock:
            self._pending[trial.number] = (space, cairn_trial, suggested)
        study._storage.set_trial_system_attr(trial._trial_id, _ATTR,
                                             cairn_trial.name)
        params.update(suggested)
        return params

    def sample_independent(self, study: OptunaStudy, trial: FrozenTrial,
                           param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        return self._independent.sample_independent(study, trial, param_name,
                                                     param_distribution)

    def after_trial(self, study: OptunaStudy, trial: FrozenTrial,
                    state: TrialState,
                    values: Optional[Sequence[float]]) -> None:
        with self._lock:
            entry = self._pending.pop(trial.number, None)
            spaces = list(self._spaces.values())
        told = None
        if entry is not None:
            space, cairn_trial, suggested = entry
            if _evaluated(trial.params, suggested):
                told = space
                if state == TrialState.COMPLETE and values is not None:
                    cairn_trial.complete(**_metrics(values))
                else:
                    cairn_trial.complete(
                        infeasible="optuna: trial %s" % state.name)
            else:
                _LOG.warning(
                    "CairnSampler: trial %d did not evaluate %s's suggestion "
                    "%s (it evaluated %s): deleted from Cairn", trial.number,
                    cairn_trial.name, suggested, trial.params)
                cairn_trial.delete()
        if state != TrialState.COMPLETE or values is None:
            return
        for space in spaces:
            if space is not told:
                space.tell(trial.number, trial.params, values)

    # --- helpers ------------------------------------------------------------

    def _space_for(self, study: OptunaStudy,
                   distributions: Dict[str, BaseDistribution]) -> _Space:
        """The _Space of these distributions, made on first use."""
        key = frozenset(distributions.items())
        with self._lock:
            space = self._spaces.get(key)
            if space is not None:
                self._last = space
                return space
        with self._create_lock:
            with self._lock:
                space = self._spaces.get(key)
            if space is None:
                space = self._open_space(study, distributions)
            with self._lock:
                self._spaces.setdefault(key, space)
                self._last = space
            return space

    def _open_space(self, study: OptunaStudy,
                    distributions: Dict[str, BaseDistribution]) -> _Space:
        """Creates (or reuses) the Cairn study of a space and tells it the
        completed trials it does not have."""
        params = {}
        for i, (name, d) in enumerate(sorted(distributions.items())):
            cairn_id = name if _ID.match(name) and \
                name.lower().replace("-", "_") != "job_dir" else "p%d" % i
            params[name] = _Param(cairn_id, d)
        spec = study_pb2.StudySpec(
            algorithm=study_pb2.StudySpec.Algorithm.Value(self._algorithm),
            seed=self._seed or 0, repeat_points_when_exhausted=True,
            labels={_DRIVER_LABEL: "optuna"})
        spec.parameters.extend(p.spec for p in params.values())
        for metric, direction in zip(_metrics([0.0] * len(study.directions)),
                                     study.directions):
            spec.metrics.add(
                metric_id=metric,
                goal=(study_pb2.MetricSpec.MAXIMIZE
                      if direction == optuna.study.StudyDirection.MAXIMIZE
                      else study_pb2.MetricSpec.MINIMIZE))
        base = self._study_name or _cairn_name(study.study_name)
        for version in itertools.count(1):
            name = base if version == 1 else "%s-%d" % (base, version)
            try:
                space = _Space(self._client.create_study(name, spec), params)
                break
            except AlreadyExistsError:
                existing = self._client.study(name)
                if _same_spec(existing.spec, spec):
                    space = _Space(existing, params)
                    break
        self._tell_history(study, space)
        return space

    @staticmethod
    def _tell_history(study: OptunaStudy, space: _Space) -> None:
        """Tells `space` the completed Optuna trials it does not have (all of
        them for a new study; for a reused one, those neither suggested by it
        nor labelled with their number)."""
        known = set()
        if space.study.proto.trial_count:
            known = {t.proto.labels.get(_LABEL) for t in space.study.trials()}
        prefix = space.study.name + "/trials/"
        for t in study.get_trials(deepcopy=False,
                                  states=(TrialState.COMPLETE,)):
            if str(t.number) in known or \
                    str(t.system_attrs.get(_ATTR, "")).startswith(prefix):
                continue
            space.tell(t.number, t.params, t.values)
