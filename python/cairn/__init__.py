"""Cairn's Python SDK: studies and trials on a cairnd server.

    import cairn
    client = cairn.Client()
    study = client.create_study("demo", {"parameters": [...], "metrics": [...]})
    trial = study.suggest()[0]
    trial.report(1, loss=0.5)
    trial.complete(loss=0.4)

cairn.job reports from inside a trial job; cairn.optuna.CairnSampler plugs a
Cairn study into Optuna.
"""
from cairn.client import Client, Study
from cairn.errors import (AlreadyExistsError, CairnError,
                          DeadlineExceededError, FailedPreconditionError,
                          InvalidArgumentError, NotFoundError,
                          PermissionDeniedError, ResourceExhaustedError,
                          UnauthenticatedError, UnavailableError)
from cairn.trial import Trial

__all__ = [
    "AlreadyExistsError", "CairnError", "Client", "DeadlineExceededError",
    "FailedPreconditionError", "InvalidArgumentError", "NotFoundError",
    "PermissionDeniedError", "ResourceExhaustedError", "Study", "Trial",
    "UnauthenticatedError", "UnavailableError",
]
