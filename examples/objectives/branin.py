#!/usr/bin/python3
"""Evaluates the Branin function for trials printed by `cairn trial suggest --json`.

Reads the SuggestTrialsResponse on stdin (the protobuf JSON mapping:
{"trials": [{"id": "7", "parameters": [{"parameterId": "x1", "value": 1.5},
...]}, ...], ...}) and prints one line per trial: "<id> <loss>" (nothing
once the study is done).
Branin has its global minimum 0.397887 at three points.
"""
import json
import math
import sys


def branin(x1: float, x2: float) -> float:
    b = 5.1 / (4 * math.pi ** 2)
    c = 5 / math.pi
    t = 1 / (8 * math.pi)
    return (x2 - b * x1 ** 2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


for trial in json.load(sys.stdin)["trials"]:
    p = {q["parameterId"]: q["value"] for q in trial["parameters"]}
    print(trial["id"], repr(branin(float(p["x1"]), float(p["x2"]))))
