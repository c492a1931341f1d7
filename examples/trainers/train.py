#!/usr/bin/python3
"""A small training program for Cairn, the way AI Platform trainers are written.

* Hyperparameters arrive as --name=value arguments, plus --job-dir=DIR.
* Checkpoints go into --job-dir after every epoch (written to a temp file,
  fsynced and renamed, so a kill never leaves a torn checkpoint); on start the
  program resumes from the latest checkpoint if there is one (cairnd sets
  CAIRN_RESUME=1 when it restarts a trial).
* Metrics are reported through the cloudml-hypertune file protocol: JSON lines
  in $CLOUD_ML_HP_METRIC_FILE, the whole file rewritten on each report, the
  last 100 reports kept, values as strings except "timestamp".
* SIGTERM (early stop, cancellation, preemption) writes a checkpoint and exits.

The model is a softmax regression on a synthetic, seeded 3-class problem,
trained with minibatch SGD in numpy, so it starts in a fraction of a second.
"""
import json
import os
import signal
import sys
import time

import numpy as np


def parse_args(argv):
    args = {"learning_rate": "0.1", "batch_size": "32", "l2": "0.0",
            "epochs": "20", "seed": "0", "job-dir": "."}
    for a in argv:
        if not a.startswith("--") or "=" not in a:
            sys.exit("train.py: expected --name=value, got %r" % a)
        key, value = a[2:].split("=", 1)
        if key not in args:
            sys.exit("train.py: unknown flag --%s" % key)
        args[key] = value
    return args


class Hypertune:
    """The cloudml-hypertune reporting protocol."""

    def __init__(self):
        self.path = os.environ.get("CLOUD_ML_HP_METRIC_FILE", "/tmp/hypertune/output.metrics")
        self.trial = os.environ.get("CLOUD_ML_TRIAL_ID", "0")
        self.reports = []

    def report(self, tag, value, step):
        self.reports.append({tag: str(value), "global_step": str(step),
                             "timestamp": time.time(), "trial": self.trial})
        self.reports = self.reports[-100:]
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            for r in self.reports:
                f.write(json.dumps(r, sort_keys=True) + "\n")
        os.replace(tmp, self.path)


def make_data(seed):
    rng = np.random.default_rng(1234)  # The data set is fixed; `seed` is for SGD.
    centers = rng.normal(size=(3, 10)) * 0.45
    x = np.concatenate([c + rng.normal(size=(400, 10)) for c in centers])
    y = np.repeat(np.arange(3), 400)
    order = rng.permutation(len(y))
    x, y = x[order], y[order]
    return (x[:900], y[:900]), (x[900:], y[900:])


def loss_and_grad(w, b, x, y, l2):
    logits = x @ w + b
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    n = len(y)
    loss = -np.log(p[np.arange(n), y] + 1e-12).mean() + 0.5 * l2 * (w * w).sum()
    p[np.arange(n), y] -= 1
    return loss, x.T @ p / n + l2 * w, p.sum(axis=0) / n, None


def save_checkpoint(path, state):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.savez(f, **state)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    args = parse_args(sys.argv[1:])
    lr, batch, l2 = float(args["learning_rate"]), int(args["batch_size"]), float(args["l2"])
    epochs, seed, job_dir = int(args["epochs"]), int(args["seed"]), args["job-dir"]
    os.makedirs(job_dir, exist_ok=True)
    ckpt = os.path.join(job_dir, "checkpoint.npz")
    (xt, yt), (xv, yv) = make_data(seed)
    rng = np.random.default_rng(seed)
    w, b, epoch = np.zeros((10, 3)), np.zeros(3), 0
    if os.path.exists(ckpt):
        state = np.load(ckpt)
        w, b, epoch = state["w"], state["b"], int(state["epoch"])
        rng = np.random.default_rng(seed + epoch)
        print("resumed from epoch %d (CAIRN_RESUME=%s)" % (epoch, os.environ.get("CAIRN_RESUME", "")), flush=True)

    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    hypertune = Hypertune()
    val_loss = val_acc = float("nan")
    while epoch < epochs and not stop["now"]:
        order = rng.permutation(len(yt))
        for i in range(0, len(yt), batch):
            idx = order[i:i + batch]
            _, gw, gb, _ = loss_and_grad(w, b, xt[idx], yt[idx], l2)
            w -= lr * gw
            b -= lr * gb
        epoch += 1
        val_loss = loss_and_grad(w, b, xv, yv, 0.0)[0]
        val_acc = float(((xv @ w + b).argmax(axis=1) == yv).mean())
        save_checkpoint(ckpt, {"w": w, "b": b, "epoch": epoch})
        rng = np.random.default_rng(seed + epoch)
        hypertune.report("val_accuracy", val_acc, epoch)
        print("epoch %d val_loss %.4f val_accuracy %.4f" % (epoch, val_loss, val_acc), flush=True)
    if stop["now"]:
        print("SIGTERM: checkpoint at epoch %d written, exiting" % epoch, flush=True)
        sys.exit(143)
    print(json.dumps({"epochs": epoch, "val_loss": float(val_loss), "val_accuracy": val_acc}))


if __name__ == "__main__":
    main()
