"""A training loop with no gprof-dl code, shaped by its options the ways real
loops are: a DataLoader (with worker processes or not) or none, gradient
accumulation, an evaluation loop after training, an exception in the loop, a
torch.compile'd model. Its stdout is deterministic, so that a run under
gprof-dl can be compared byte for byte with a bare run.

--torch-profiler OUT runs the same training loop under torch.profiler (CPU
activity) and writes to OUT {"counts": {operator name: count}} from
key_averages(), the reference the operator counts of gprof-dl are checked
against, and with --record-shapes {"shapes": {name: [[input shapes, count]]}}."""
import argparse
import builtins
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

IN, HIDDEN, CLASSES = 32, 64, 10
LINEAR_LAYERS = 3  # aten::addmm calls per forward


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=8, help="training batches per epoch")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--workers", type=int, default=0, help="DataLoader num_workers")
    ap.add_argument("--accum", type=int, default=1, help="batches per optimizer step")
    ap.add_argument("--no-loader", action="store_true", help="index tensors instead of a DataLoader")
    ap.add_argument("--eval", type=int, default=0, metavar="M", help="then M evaluation batches")
    ap.add_argument("--raise-at", type=int, default=-1, metavar="K", help="raise after fetching batch K")
    ap.add_argument("--compile", default="", metavar="BACKEND", help="torch.compile the model")
    ap.add_argument("--loader-sleep-ms", type=float, default=0, metavar="MS",
                    help="the DataLoader sleeps MS in each batch's collate (a slow input pipeline)")
    ap.add_argument("--dropout", type=float, default=0, metavar="P",
                    help="a torch.nn.Dropout(P) after each ReLU (training mode: aten::dropout calls aten::div_)")
    ap.add_argument("--torch-profiler", default="", metavar="OUT")
    ap.add_argument("--record-shapes", action="store_true", help="with --torch-profiler: record_shapes=True")
    return ap.parse_args()


def model_and_data(a):
    torch.manual_seed(0)
    n = a.batches * a.batch_size
    x = torch.randn(n, IN)
    y = torch.randint(0, CLASSES, (n,))
    drop = [torch.nn.Dropout(a.dropout)] if a.dropout else []
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), *drop,
                                torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(), *drop,
                                torch.nn.Linear(HIDDEN, CLASSES))
    return model, x, y


def sleepy_collate(ms):
    from torch.utils.data.dataloader import default_collate
    import time

    def collate(batch):
        time.sleep(ms / 1000)
        return default_collate(batch)
    return collate


def batches(a, x, y, loader):
    if loader is not None:
        return loader
    return ((x[i * a.batch_size:(i + 1) * a.batch_size], y[i * a.batch_size:(i + 1) * a.batch_size])
            for i in range(a.batches))


def train(a, model, x, y, loader):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    fwd = torch.compile(model, backend=a.compile) if a.compile else model
    n = 0
    for epoch in range(a.epochs):
        for xb, yb in batches(a, x, y, loader):
            if n == a.raise_at:
                raise RuntimeError(f"raised inside the loop at batch {n}")
            if n % a.accum == 0:
                opt.zero_grad()
            loss = F.cross_entropy(fwd(xb), yb)
            loss.backward()
            if (n + 1) % a.accum == 0:
                opt.step()
            n += 1
        print(f"epoch {epoch}: {n} batches, loss {loss.item():.4f}", flush=True)
    return n


def evaluate(a, model, x, y):
    loader = DataLoader(TensorDataset(x, y), batch_size=a.batch_size)
    model.eval()
    correct = 0
    with torch.no_grad():
        for i, (xb, yb) in enumerate(loader):
            if i == a.eval:
                break
            correct += int((model(xb).argmax(1) == yb).sum())
    print(f"eval: {correct} correct")


def main():
    a = parse()
    if hasattr(builtins, "USER_SITECUSTOMIZE"):
        print("user sitecustomize ran in this process:", builtins.USER_SITECUSTOMIZE == os.getpid())
    model, x, y = model_and_data(a)
    loader = None if a.no_loader else DataLoader(
        TensorDataset(x, y), batch_size=a.batch_size, shuffle=True, num_workers=a.workers,
        generator=torch.Generator().manual_seed(1),
        **({"collate_fn": sleepy_collate(a.loader_sleep_ms)} if a.loader_sleep_ms else {}))
    if a.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU], record_shapes=a.record_shapes) as prof:
            train(a, model, x, y, loader)
        out = {"counts": {e.key: e.count for e in prof.key_averages()}, "shapes": {}}
        if a.record_shapes:
            for e in prof.key_averages(group_by_input_shape=True):
                out["shapes"].setdefault(e.key, []).append([e.input_shapes, e.count])
        with open(a.torch_profiler, "w") as f:
            json.dump(out, f)
    else:
        train(a, model, x, y, loader)
    if a.eval:
        evaluate(a, model, x, y)
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
