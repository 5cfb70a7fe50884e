"""torch.multiprocessing as CPU programs use it: set_start_method, Process + Queue workers
that each evaluate a model on a shard (the "multiprocessing best practices" pattern), a Pool
map, start_processes(fn, args, nprocs) and mp.spawn with a child's exception re-raised in
the parent."""
import importlib
import os

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
mp = importlib.import_module(LIB + ".multiprocessing")
nn = importlib.import_module(LIB + ".nn")


def build_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def evaluate(rank, state, shard, queue):
    model = build_model()
    model.load_state_dict(state)
    with torch.no_grad():
        out = model(shard).sum().item()
    queue.put((rank, round(out, 5)))


def square_sum(n):
    return int(torch.arange(n).pow(2).sum())


def spawned(rank, world, results):
    torch.manual_seed(rank)
    results.put((rank, world, torch.randint(0, 100, (3,)).tolist()))


def failing(rank):
    raise ValueError("worker %d failed" % rank)


def main():
    mp.set_start_method("fork", force=True)
    print("start method", mp.get_start_method(), mp.cpu_count() >= 1)
    model = build_model()
    state = model.state_dict()
    data = torch.randn(6, 4)
    queue = mp.Queue()
    processes = []
    for rank, shard in enumerate(data.chunk(3)):
        p = mp.Process(target=evaluate, args=(rank, state, shard, queue))
        p.start()
        processes.append(p)
    results = sorted(queue.get() for _ in processes)
    for p in processes:
        p.join()
    print("exitcodes", [p.exitcode for p in processes])
    print("results", results)
    with torch.no_grad():
        print("parent", [round(model(s).sum().item(), 5) for s in data.chunk(3)])
    with mp.Pool(2) as pool:
        print("pool", pool.map(square_sum, [3, 4, 5]))

    ctx = mp.get_context("fork")
    q = ctx.SimpleQueue()
    mp.start_processes(spawned, args=(2, q), nprocs=2, join=True, start_method="fork")
    print("start_processes", sorted([q.get(), q.get()]))
    try:
        mp.spawn(failing, nprocs=1)
    except mp.ProcessRaisedException as e:
        print("raised", type(e).__name__, e.error_index, "worker 0 failed" in str(e))
    print("sharing", mp.get_sharing_strategy() in mp.get_all_sharing_strategies())
    print("RESULT:", len(results))


if __name__ == "__main__":
    main()
