"""A small DDP job on gloo, for torchrun: a few steps of a linear model on
random data, every rank the same. Prints one line per rank at the end."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.utils.data.TensorDataset(torch.randn(64, 32), torch.randn(64, 4))
    loader = torch.utils.data.DataLoader(data, batch_size=16)
    for x, y in loader:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    dist.barrier()
    print(f"rank {rank} of {world} (local {os.environ.get('LOCAL_RANK')}) done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
