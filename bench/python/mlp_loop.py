"""An op-heavy training loop, the one issue 30 compares: a 4-layer MLP of
width 32 (Linear + ReLU, then Linear to 1), batch 8, MSE loss, SGD, one CPU
thread. After 200 warm-up steps it times STEPS steps and prints

    us/step thread T process P wall W

T: the main thread's CPU time a step (time.thread_time: what the loop spent,
not what other processes took from it), P: the process's CPU time, W: wall.
Not a benchmark on its own: run it bare, under `gprof-dl run` and under
torch.profiler, rounds interleaved, and compare per round, e.g.

    python3 bench/python/mlp_loop.py 2000
    build/bin/gprof-dl run -q -f -o /tmp/m.gpdl -- python3 bench/python/mlp_loop.py 2000

To find which of the package's hooks costs what, run copies of the built
package (build/lib/gprof-dl/python) with one hook taken out through
GPROF_DL_PYTHON_DIR=COPY."""
import sys
import time

import torch


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    torch.set_num_threads(1)
    torch.manual_seed(0)
    width, batch = 32, 8
    layers = [torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU()) for _ in range(4)]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(batch, width), torch.randn(batch, 1)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(200):
        step()
    t0, c0, w0 = time.thread_time(), time.process_time(), time.perf_counter()
    for _ in range(steps):
        step()
    t1, c1, w1 = time.thread_time(), time.process_time(), time.perf_counter()
    print("us/step thread %.1f process %.1f wall %.1f" %
          ((t1 - t0) / steps * 1e6, (c1 - c0) / steps * 1e6, (w1 - w0) / steps * 1e6))


if __name__ == "__main__":
    main()
