"""The explicit API of the gprof_dl package, as a user puts it in a script
that must also run without gprof-dl: steps with their samples, RecordEvent as
a context manager and as a decorator, start()/stop() around a region.

Without `gprof-dl run` (the package on PYTHONPATH, no collector) every call
is a no-op and the output is the same."""
import sys

import gprof_dl
import torch

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 6
BATCH = 32


@gprof_dl.RecordEvent("decorated")
def augment(x):
    return x.flip(0)


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(STEPS, BATCH, 16)
    y = torch.randint(0, 4, (STEPS, BATCH))
    for i in range(STEPS):
        opt.zero_grad()
        with gprof_dl.RecordEvent("block"):
            xb = augment(augment(x[i]))
        loss = torch.nn.functional.cross_entropy(model(xb), y[i])
        loss.backward()
        opt.step()
        gprof_dl.step(num_samples=BATCH)
    print(f"{STEPS} steps, loss {loss.item():.4f}")

    gprof_dl.stop()
    with gprof_dl.RecordEvent("while_stopped"):
        augment(x[0])
    gprof_dl.start()
    with gprof_dl.RecordEvent("after_start"):
        z = augment(x[0])
    gprof_dl.stop()
    print(f"after start: {float(z.sum()):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
