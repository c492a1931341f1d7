"""PyTorch CPU reference for bench/train: samples/s of the same MLP training
step (Linear-ReLU stack, softmax cross-entropy, Adam, float32, batch 128).
Usage: torch_mlp.py THREADS BATCH LAYERS SECONDS  -> one JSON line."""
import json
import sys
import time

import torch

threads, batch = int(sys.argv[1]), int(sys.argv[2])
sizes = [int(s) for s in sys.argv[3].split(",")]
seconds = float(sys.argv[4])
torch.set_num_threads(threads)
torch.manual_seed(1)
layers = []
for i in range(len(sizes) - 1):
    layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
    if i + 2 < len(sizes):
        layers.append(torch.nn.ReLU())
model = torch.nn.Sequential(*layers)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = torch.nn.CrossEntropyLoss()
xs = torch.randn(16, batch, sizes[0])
ys = torch.randint(0, sizes[-1], (16, batch))


def step(i):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(xs[i % 16]), ys[i % 16])
    loss.backward()
    opt.step()


for i in range(20):
    step(i)
steps = 0
t0 = time.perf_counter()
while time.perf_counter() - t0 < seconds:
    for i in range(10):
        step(steps + i)
    steps += 10
elapsed = time.perf_counter() - t0
print(json.dumps({"bench": "pytorch_cpu", "torch": torch.__version__,
                  "threads": threads, "batch": batch, "steps": steps,
                  "samples_per_s": round(steps * batch / elapsed)}))
