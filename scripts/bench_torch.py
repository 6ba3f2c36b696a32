"""PyTorch peer of scripts/bench.ts: the same models and steps, timed on this machine.

Run by `npm run bench` with /usr/bin/python3 (Debian's python3-torch). Reads a JSON config as
its only argument and prints one JSON object on stdout:

    {"available": true, "torch": "1.13.0", "threads": 1,
     "steps": [{"model": "mlp", "batch": 64, "msPerStep": 1.6, "reps": 200}, ...],
     "windows": [{"model": "mlp", "windowMs": 3.1, "stepMs": 1.4, "ratio": 2.2}, ...]}

When torch cannot be imported it prints {"available": false, "reason": "..."} and exits 0.
The models mirror src/models.ts: simpleNet (dense 10 -> 1, MSE), mlp 784-256-256-10 (no
normalization) and cnn (conv16+BN+ReLU+pool, conv32+BN+ReLU+pool, dense 10) with
softmax cross-entropy, SGD at learning rate 0.01, NCHW (PyTorch's native layout).
"""
import json
import sys
import time

CONFIG = {
    # Seconds to spend timing each measurement (after warm-up).
    "seconds": 1.0,
    # Warm-up steps before timing.
    "warmup": 3,
    # Micro-batches per window and their size, against one step of their product.
    "accumulationSteps": 4,
    "microBatchSize": 16,
    # Threads: 1 by default, to compare with single-threaded WebAssembly.
    "threads": 1,
    "cases": [["simpleNet", 64], ["mlp", 64], ["cnn", 16], ["cnn", 64]],
    "windowModels": ["simpleNet", "mlp", "cnn"],
}


def main():
    config = dict(CONFIG)
    if len(sys.argv) > 1:
        config.update(json.loads(sys.argv[1]))
    try:
        import torch
        from torch import nn
    except Exception as e:  # noqa: BLE001 - any import failure means "no peer"
        print(json.dumps({"available": False, "reason": f"import torch failed: {e}".splitlines()[0]}))
        return

    torch.manual_seed(0)
    torch.set_num_threads(config["threads"])

    def build(name):
        if name == "simpleNet":
            return nn.Linear(10, 1), (10,), "mse"
        if name == "mlp":
            return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)), (1, 28, 28), "ce"
        if name == "cnn":
            # BatchNorm momentum 0.01 in PyTorch's convention is Keras's 0.99; epsilon as tfjs (1e-3).
            return nn.Sequential(
                nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16, eps=1e-3, momentum=0.01), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32, eps=1e-3, momentum=0.01), nn.ReLU(), nn.MaxPool2d(2),
                nn.Flatten(), nn.Linear(7 * 7 * 32, 10),
            ), (1, 28, 28), "ce"
        raise ValueError(name)

    def data(shape, kind, batch):
        xs = torch.randn((batch,) + shape)
        ys = torch.randn(batch, 1) if kind == "mse" else torch.randint(0, 10, (batch,))
        return xs, ys

    def loss_fn(kind):
        return nn.MSELoss() if kind == "mse" else nn.CrossEntropyLoss()

    def timed(fn):
        # Process CPU time per call, as scripts/bench.ts measures tfjs: the machine's cores are
        # shared with other processes, and these runs are single-threaded.
        for _ in range(config["warmup"]):
            fn()
        reps = 0
        start = time.perf_counter()
        cpu_start = time.process_time()
        while True:
            fn()
            reps += 1
            elapsed = time.perf_counter() - start
            if elapsed >= config["seconds"] and reps >= 3:
                return (time.process_time() - cpu_start) * 1000 / reps, reps

    def plain_step(model, opt, crit, xs, ys):
        def step():
            opt.zero_grad(set_to_none=True)
            loss = crit(model(xs), ys)
            loss.backward()
            opt.step()
            loss.item()
        return step

    def window(model, opt, crit, micro):
        steps = len(micro)

        def run():
            opt.zero_grad(set_to_none=True)
            for xs, ys in micro:
                loss = crit(model(xs), ys) / steps
                loss.backward()
                loss.item()
            opt.step()
        return run

    result = {"available": True, "torch": torch.__version__, "threads": torch.get_num_threads(), "steps": [], "windows": []}
    for name, batch in config["cases"]:
        model, shape, kind = build(name)
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        xs, ys = data(shape, kind, batch)
        ms, reps = timed(plain_step(model, opt, loss_fn(kind), xs, ys))
        result["steps"].append({"model": name, "batch": batch, "msPerStep": ms, "reps": reps})
    for name in config["windowModels"]:
        model, shape, kind = build(name)
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        k, b = config["accumulationSteps"], config["microBatchSize"]
        micro = [data(shape, kind, b) for _ in range(k)]
        big = data(shape, kind, k * b)
        crit = loss_fn(kind)
        window_ms, _ = timed(window(model, opt, crit, micro))
        step_ms, _ = timed(plain_step(model, opt, crit, *big))
        result["windows"].append({"model": name, "windowMs": window_ms, "stepMs": step_ms, "ratio": window_ms / step_ms})
    print(json.dumps(result))


if __name__ == "__main__":
    main()
