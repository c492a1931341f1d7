#!/usr/bin/python3
"""Distributed training with torch.distributed over gloo, as on AI Platform.

Every replica of a trial (master + workers) runs this program. AI Platform,
and Cairn with job_template.replicas, set MASTER_ADDR, MASTER_PORT,
WORLD_SIZE and RANK (master 0, workers 1..N), so init_method="env://" finds
the group. Each rank fits a tiny linear model y = 3x + 1 on its own shard of
data; gradients are averaged with all_reduce (what DistributedDataParallel
does), so every rank holds the same model.

Resilience: the master checkpoints the model, optimizer and step to
--job-dir every --checkpoint-every steps (written to a temp file, then
renamed). A restarted group (a replica died; Cairn restarts all of them)
resumes there: the master loads the checkpoint and broadcasts it to every
rank.

Reporting: the master (rank 0) writes the cloudml-hypertune file
(CLOUD_ML_HP_METRIC_FILE, tag CLOUD_ML_HP_METRIC_TAG); Cairn collects only
the master's.

Run with Cairn: see study.yaml next to this file.
"""
import argparse
import json
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--job-dir", required=True)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--checkpoint-every", type=int, default=5)
    p.add_argument("--step-seconds", type=float, default=0.1,
                   help="pause per step, so the run lasts long enough to watch")
    return p.parse_args()


class HypertuneFile:
    """cloudml-hypertune's file protocol: the whole file rewritten per report,
    newline-delimited JSON, the last 100 entries."""

    def __init__(self):
        self.path = os.environ.get("CLOUD_ML_HP_METRIC_FILE",
                                   "/tmp/hypertune/output.metrics")
        self.tag = (os.environ.get("CLOUD_ML_HP_METRIC_TAG")
                    or "training/hptuning/metric")
        self.trial = os.environ.get("CLOUD_ML_TRIAL_ID", "0")
        self.entries = []

    def report(self, value, step):
        self.entries.append({"global_step": str(step), self.tag: str(value),
                             "timestamp": time.time(), "trial": self.trial})
        self.entries = self.entries[-100:]
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            for e in self.entries:
                f.write(json.dumps(e, sort_keys=True) + "\n")
        os.replace(tmp, self.path)


def shard(rank, n=64):
    g = torch.Generator().manual_seed(1000 + rank)
    x = torch.rand(n, 1, generator=g) * 2 - 1
    y = 3 * x + 1 + 0.01 * torch.randn(n, 1, generator=g)
    return x, y


def checkpoint_path(job_dir):
    return os.path.join(job_dir, "checkpoint.pt")


def load_and_broadcast(model, opt, job_dir, rank):
    """Step to resume from (0 for a fresh start), the same on every rank."""
    step = torch.zeros(1, dtype=torch.int64)
    if rank == 0 and os.path.exists(checkpoint_path(job_dir)):
        state = torch.load(checkpoint_path(job_dir))
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step[0] = state["step"]
    dist.broadcast(step, src=0)
    for p in model.parameters():
        dist.broadcast(p.data, src=0)
    return int(step[0])


def save(model, opt, step, job_dir):
    tmp = checkpoint_path(job_dir) + ".tmp"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                "step": step}, tmp)
    os.replace(tmp, checkpoint_path(job_dir))


def main():
    args = parse_args()
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", init_method="env://", rank=rank,
                            world_size=world, timeout=timedelta(seconds=60))
    tf_config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    task = tf_config.get("task", {})
    print(f"rank {rank}/{world}: task {task.get('type')} {task.get('index')}, "
          f"trial {task.get('trial')}", flush=True)

    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    start = load_and_broadcast(model, opt, args.job_dir, rank)
    if start > 0:
        print(f"rank {rank}: resumed from step {start}", flush=True)
    x, y = shard(rank)
    hypertune = HypertuneFile() if rank == 0 else None
    loss = torch.zeros(1)
    for step in range(start + 1, args.steps + 1):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        for p in model.parameters():  # Average gradients across ranks.
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world
        opt.step()
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss, op=dist.ReduceOp.SUM)
        mean_loss = float(mean_loss) / world
        if step % args.checkpoint_every == 0 or step == args.steps:
            if rank == 0:
                save(model, opt, step, args.job_dir)
                hypertune.report(mean_loss, step)
                print(f"step {step}: loss {mean_loss:.6f} (checkpointed)",
                      flush=True)
        time.sleep(args.step_seconds)
    dist.barrier()
    if rank == 0:
        w, b = model.weight.item(), model.bias.item()
        print(f"done: y = {w:.3f} x + {b:.3f}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
