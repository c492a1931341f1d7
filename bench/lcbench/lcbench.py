"""The LCBench surrogate (YAHPO Gym's model.onnx) as an objective.

Reads the data from a directory (default ../shared/benchmarks/lcbench beside
the repository, or $CAIRN_LCBENCH_DIR) at run time; nothing of it is in this
repository (see that directory's LICENSE.md). find_data_dir() returns None
when it is absent, so callers can say so.

The search space is the one in config_space.json (7 hyperparameters; epoch
is the fidelity, 1..52, epoch 1 being the untrained network). The model's
inputs are x_cat = the task's code from encoding.json and x_cont = (epoch,
batch_size, learning_rate, momentum, weight_decay, num_layers, max_units,
max_dropout) in raw units; its six outputs are TARGETS below.
"""
import csv
import json
import math
import os

import numpy as np

from onnx_eval import Graph

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGETS = ["time", "val_accuracy", "val_cross_entropy", "val_balanced_accuracy",
           "test_cross_entropy", "test_balanced_accuracy"]
# x_cont's column order (the graph's Gather indices 0..7).
INPUTS = ["epoch", "batch_size", "learning_rate", "momentum", "weight_decay",
          "num_layers", "max_units", "max_dropout"]
HYPERPARAMETERS = INPUTS[1:]
# The six continuous hyperparameters (num_layers is an integer with 5 values).
CONTINUOUS = ["batch_size", "learning_rate", "momentum", "weight_decay",
              "max_units", "max_dropout"]
MAX_EPOCH = 52
DEV_TASKS = ["167152", "167149", "126026", "189873", "168330"]
FILES = ["model.onnx", "config_space.json", "encoding.json",
         "instance_target_statistics_lcbench.csv"]


def find_data_dir(path=None):
    """The data directory holding FILES, or None: `path` when given, else
    $CAIRN_LCBENCH_DIR when set, else ../shared/benchmarks/lcbench beside
    the repository's directory."""
    env = os.environ.get("CAIRN_LCBENCH_DIR")
    candidates = [path] if path else [env] if env else [
        os.path.join(os.path.dirname(ROOT), "shared", "benchmarks", "lcbench")]
    for c in candidates:
        if c and all(os.path.isfile(os.path.join(c, f)) for f in FILES):
            return c
    return None


class Space:
    """config_space.json's hyperparameters: name -> (lower, upper, log, int)."""

    def __init__(self, data_dir):
        with open(os.path.join(data_dir, "config_space.json")) as f:
            cs = json.load(f)
        self.params = {}
        self.tasks = []
        for hp in cs["hyperparameters"]:
            if hp["name"] == "OpenML_task_id":
                self.tasks = list(hp["choices"])
                continue
            self.params[hp["name"]] = (float(hp["lower"]), float(hp["upper"]),
                                       bool(hp.get("log")),
                                       hp["type"] == "uniform_int")
        for name in INPUTS:
            if name not in self.params:
                raise ValueError("config_space.json: hyperparameter %s missing"
                                 % name)

    def to_unit(self, name, value):
        """`value` of hyperparameter `name` in [0, 1] (log scale when log)."""
        lo, hi, log, _ = self.params[name]
        if log:
            return (math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return (value - lo) / (hi - lo)

    def from_unit(self, name, u):
        lo, hi, log, integer = self.params[name]
        v = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo))) if log \
            else lo + u * (hi - lo)
        v = min(max(v, lo), hi)
        return int(round(v)) if integer else v

    def clamp(self, config):
        """`config` with each value moved into its range (integers rounded):
        a tuner's value off a bound by a rounding error is that bound."""
        out = dict(config)
        for name, v in config.items():
            if name in self.params and isinstance(v, (int, float)):
                lo, hi, _, integer = self.params[name]
                v = min(max(v, lo), hi)
                out[name] = int(round(v)) if integer else float(v)
        return out

    def check(self, config):
        """Raises ValueError naming the hyperparameter and value when `config`
        is missing one, has an unknown one or one outside its range."""
        for name in HYPERPARAMETERS:
            if name not in config:
                raise ValueError("config: hyperparameter %s missing" % name)
        for name, v in config.items():
            if name not in self.params or name == "epoch":
                raise ValueError("config: unknown hyperparameter %r" % name)
            lo, hi, _, _ = self.params[name]
            if not (isinstance(v, (int, float)) and lo <= v <= hi):
                raise ValueError("config: %s = %r outside [%g, %g]"
                                 % (name, v, lo, hi))


def is_corner(space, config, share=0.02, count=3):
    """Whether `count` or more of the six continuous hyperparameters lie
    within `share` of the range (in the search space's own scale: log for
    batch_size, learning_rate and max_units) of a bound."""
    near = 0
    for name in CONTINUOUS:
        u = space.to_unit(name, config[name])
        if u <= share or u >= 1 - share:
            near += 1
    return near >= count


class Surrogate:
    """The surrogate in float64 (or `dtype`) for one or more tasks."""

    def __init__(self, data_dir, dtype=np.float64):
        self.space = Space(data_dir)
        with open(os.path.join(data_dir, "encoding.json")) as f:
            self.codes = {k: int(v) for k, v in
                          json.load(f)["OpenML_task_id"].items()}
        self.graph = Graph(os.path.join(data_dir, "model.onnx"), dtype)
        self.dtype = dtype

    def _code(self, task):
        task = str(task)
        if task not in self.space.tasks or task not in self.codes:
            raise ValueError("task %r is not an LCBench task" % task)
        return self.codes[task]

    def evaluate_rows(self, task, rows):
        """rows: n x 8 array in INPUTS order -> n x 6 array in TARGETS order."""
        rows = np.asarray(rows, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != len(INPUTS):
            raise ValueError("rows must be n x %d, got %s"
                             % (len(INPUTS), rows.shape))
        x_cat = np.full((rows.shape[0], 1), self._code(task), dtype=np.int64)
        out = self.graph.run({"x_cat": x_cat, "x_cont": rows})
        return np.asarray(out[self.graph.outputs[0]], dtype=np.float64)

    def curve(self, task, config, epochs=MAX_EPOCH):
        """{target: array of values at epochs 1..epochs} for one config."""
        self.space.check(config)
        if not 1 <= epochs <= MAX_EPOCH:
            raise ValueError("epochs = %r outside [1, %d]" % (epochs, MAX_EPOCH))
        rows = np.array([[e] + [float(config[h]) for h in HYPERPARAMETERS]
                         for e in range(1, epochs + 1)])
        out = self.evaluate_rows(task, rows)
        return {t: out[:, i] for i, t in enumerate(TARGETS)}


def target_statistics(data_dir):
    """{task: {target: (min, max)}} from instance_target_statistics_lcbench.csv."""
    stats = {}
    with open(os.path.join(data_dir, "instance_target_statistics_lcbench.csv")) as f:
        for row in csv.DictReader(f):
            if row["scenario"] != "lcbench":
                continue
            entry = stats.setdefault(row["instance"], {}).setdefault(
                row["metric"], [None, None])
            entry[0 if row["statistic"] == "min" else 1] = float(row["value"])
    return {t: {m: tuple(v) for m, v in d.items()} for t, d in stats.items()}
