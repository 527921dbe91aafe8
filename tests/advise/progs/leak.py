"""A small CPU training loop for `gprof-dl advise`'s memory-growth rule:
STEPS steps of an MLP with SGD; with --leak, each step keeps its output
(about 2 MiB: 512 x 1024 floats) in a list, as a program that appends
outputs without .detach() would; without it nothing outlives its step."""
import argparse

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=40)
ap.add_argument("--leak", action="store_true")
a = ap.parse_args()
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x, y = torch.randn(512, 256), torch.randint(0, 10, (512,))
kept = []
for step in range(a.steps):
    hidden = net[1](net[0](x))
    loss = torch.nn.functional.cross_entropy(net[2](hidden), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if a.leak:
        kept.append(hidden.detach().clone())
print(f"steps {a.steps} kept {len(kept)}")
