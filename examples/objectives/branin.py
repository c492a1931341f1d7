#!/usr/bin/python3
"""Evaluates the Branin function for trials printed by `cairn trial suggest --json`.

Reads the JSON array on stdin and prints one line per trial: "<id> <loss>".
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


for trial in json.load(sys.stdin):
    p = trial["parameters"]
    print(trial["id"], repr(branin(float(p["x1"]), float(p["x2"]))))
