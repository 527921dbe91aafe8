"""Python's garbage collections in a torch loop, for case_gc: the automatic
collector off once torch is imported (gc.disable()), so that the only
collections are these: in each of the 4 steps, after the forward, gc.collect(0)
twice, gc.collect(1) once, and in step 2 gc.collect(2); a thread "collector"
that runs gc.collect(1) once; DataLoader workers (2) that run gc.collect(0) in
every __getitem__. The program's own gc.callbacks (two, appended in order)
note every phase they see. Prints what its callbacks saw and exits with
status 3, so that a run under gprof-dl can be compared with a bare one."""
import gc
import sys
import threading

import torch
from torch.utils.data import DataLoader, Dataset

gc.disable()
seen = []
gc.callbacks.append(lambda phase, info: seen.append(("a", phase, info["generation"])))
gc.callbacks.append(lambda phase, info: seen.append(("b", phase, info["generation"])))


class Data(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        gc.collect(0)
        return torch.full((4,), float(i))


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for k, x in enumerate(DataLoader(Data(), batch_size=2, num_workers=2)):
        opt.zero_grad()
        loss = model(x).sum()
        gc.collect(0)
        gc.collect(0)
        gc.collect(1)
        if k == 2:
            gc.collect(2)
        loss.backward()
        opt.step()
    t = threading.Thread(target=gc.collect, args=(1,), name="collector")
    t.start()
    t.join()
    mine = [c for c in gc.callbacks if c.__name__ == "<lambda>"]
    print(f"{len(mine)} callbacks of the program, {len(seen)} calls: {seen[:6]} ...")
    print("order kept:", all(seen[i][0] == "a" and seen[i + 1][0] == "b" for i in range(0, len(seen), 2)))
    sys.exit(3)


if __name__ == "__main__":
    main()
