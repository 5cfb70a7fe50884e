"""The digits MLP trained with DistributedDataParallel: same accuracy on 1 or 2 processes.

Each rank builds the model (DDP copies rank 0's weights to the others), reads its share of
every batch through ``DistributedSampler`` and averages gradients in backward. The global
batch stays 64 whatever the number of ranks (32 per rank on 2), so one process and two
processes take the same steps and reach the same test accuracy. Rank 0 saves a checkpoint;
after a barrier every rank loads it and checks that it holds the weights it trained.

Run:
    python -m ember.distributed.run --nproc-per-node 2 examples/ddp_digits.py   # 2 ranks
    python examples/ddp_digits.py                # one process (same accuracy)
    python examples/ddp_digits.py --steps 2      # smoke run (CI)
"""
import argparse

import ember as torch
import ember.distributed as dist
from ember import nn
from ember.datasets import DigitsDataset
from ember.nn.parallel.distributed import DistributedDataParallel as DDP
from ember.utils.data import DataLoader
from ember.utils.data.distributed import DistributedSampler

EPOCHS = 10
GLOBAL_BATCH = 64
LEARNING_RATE = 3e-3
SEED = 0
CHECKPOINT = "ddp_digits.pt"


def evaluate(model, dataset):
    model.eval()
    with torch.no_grad():
        predictions = model(dataset.data).argmax(dim=1)
    model.train()
    return (predictions == dataset.targets).float().mean().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=None, help="stop after N optimizer steps")
    parser.add_argument("--save", default=CHECKPOINT, help="where rank 0 saves the weights")
    args = parser.parse_args()
    # one process without mpi4py; under mpiexec (or the launcher) one rank per process
    distributed = dist.is_mpi_available()
    if distributed:
        dist.init_process_group("mpi")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    assert GLOBAL_BATCH % world == 0, "the global batch must split evenly between ranks"

    torch.manual_seed(SEED)
    train_set, test_set = DigitsDataset(train=True), DigitsDataset(train=False)
    sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, seed=SEED)
    loader = DataLoader(train_set, batch_size=GLOBAL_BATCH // world, sampler=sampler,
                        drop_last=True)
    net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    model = DDP(net) if distributed else net
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    print("%d process(es), %d samples per rank per step" % (world, GLOBAL_BATCH // world))

    step = 0
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)        # a new order each epoch, the same on every rank
        for images, labels in loader:
            loss = loss_fn(model(images), labels)
            optimizer.zero_grad()
            loss.backward()             # DDP: gradients averaged across ranks here
            optimizer.step()
            step += 1
            if args.steps is not None and step >= args.steps:
                break
        print("epoch %2d  loss %.4f  test accuracy %.2f%%"
              % (epoch + 1, loss.item(), 100 * evaluate(net, test_set)))
        if args.steps is not None and step >= args.steps:
            break

    # checkpoint: rank 0 writes the plain model's weights; every rank then reads them back
    if rank == 0:
        torch.save(net.state_dict(), args.save)
        print("rank 0 saved the weights to", args.save)
    if distributed:
        dist.barrier()                  # the file is complete before anyone reads it
    state = torch.load(args.save)
    fresh = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    fresh.load_state_dict(state)
    same = all(torch.equal(a, b) for a, b in zip(fresh.parameters(), net.parameters()))
    print("rank %d loaded the checkpoint: %s" % (rank, "same weights" if same else "DIFFERENT"))
    if distributed:
        flags = [None] * world
        dist.all_gather_object(flags, same)
        assert all(flags), "a rank loaded different weights"
        if rank == 0:
            print("all %d ranks loaded the same weights" % world)
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
