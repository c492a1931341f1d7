"""CairnSampler for Optuna's own sampler tests (fetch_suite.sh applies
cairn_sampler.patch, which imports this module): every instance is backed
by one real cairnd for the whole run (build/bin/cairnd on 127.0.0.1 with a
temp data dir, started on first use and stopped at exit). Processes that
the suite spawns (test_reproducible_in_other_process) use the same cairnd:
its address and token pass through the environment.

Cases of the suite left out for CairnSampler: none. Every list of the
suite that names samplers has CairnSampler (parametrize_sampler,
parametrize_relative_sampler, parametrize_multi_objective_sampler,
sampler_class_with_seed); the lists it is not in name specific samplers by
their internals (test_sampler_reseed_rng reads their attributes,
test_raise_error_for_samplers_during_multi_objectives is for samplers
without multi-objective support, which CairnSampler has).
"""
import atexit
import os
import threading
from typing import Optional

import cairn
import cairn.optuna
from cairn_testenv import Server

_ADDRESS_ENV = "CAIRN_OPTUNA_SUITE_SERVER"
_TOKEN_ENV = "CAIRN_OPTUNA_SUITE_TOKEN"
_lock = threading.Lock()
_client: Optional[cairn.Client] = None


def _shared_client() -> cairn.Client:
    """A client of the run's cairnd, started here unless a parent process
    did."""
    global _client
    with _lock:
        if _client is None:
            if not os.environ.get(_ADDRESS_ENV):
                # The suite checks that a seed reproduces a run, also in
                # other processes (test_reproducible_in_other_process); that
                # holds only where no GP suggestion answers from the
                # quasi-random design past the deadline, which a slow build
                # (asan) or a loaded machine reaches: docs/study-config.md.
                server = Server(extra_args=["--gp-suggest-deadline", "0"])
                atexit.register(server.stop)
                os.environ[_ADDRESS_ENV] = server.address
                os.environ[_TOKEN_ENV] = server.token
            _client = cairn.Client(os.environ[_ADDRESS_ENV],
                                   token=os.environ[_TOKEN_ENV])
        return _client


def CairnSampler(seed: Optional[int] = None) -> cairn.optuna.CairnSampler:
    """A cairn.optuna.CairnSampler on the run's cairnd. (Named as a class
    so that pytest's test ids read "CairnSampler".)"""
    return cairn.optuna.CairnSampler(_shared_client(), seed=seed)
