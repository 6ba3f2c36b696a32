"""PyTorch peer of scripts/bench/bench.ts: the same models and steps, timed on request.

`npm run bench` starts this file with Debian's /usr/bin/python3 twice: once pinned to one thread
(OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS set to 1 in its environment, which
Debian's OpenBLAS needs: it ignores torch.set_num_threads) and once at every core. It reads one
JSON command per line on stdin and answers each with one JSON line on stdout, so the bench can
interleave blocks of PyTorch steps with blocks of tfjs steps and both sides see the same load.

Commands:

    {"op": "hello", "threads": 1}
        -> {"available": true, "torch": "1.13.0", "threads": 1, "pools": [...threadpoolctl...]}
    {"op": "time", "case": {"kind": "step", "model": "mlp", "batch": 64}, "seconds": 0.3, "warmup": 3}
    {"op": "time", "case": {"kind": "window", "model": "cnn", "steps": 4, "micro": 16}, ...}
    {"op": "time", "case": {"kind": "parts", "model": "cnn", "steps": 4, "micro": 16}, ...}
        -> {"ms": [wall ms of each call], "busyThreads": 1, "cpuPerWall": 0.99, "threadCpuMs": 0.8, "taskCount": 3,
            "faultsPerCall": 0.0}
    {"op": "gemm", "size": 512, "seconds": 0.3}
        -> {"gflops": [per call]}

`busyThreads` counts this process's threads that were on a CPU for at least 25% of the busiest
thread's time (from /proc/self/task/*/schedstat), `cpuPerWall` their CPU time over the wall time, and `threadCpuMs` the busiest thread's CPU
time per call (for a one-thread run, its time undisturbed by other processes): the pinning, verified rather than assumed.
`faultsPerCall` is the process's minor page faults per timed call (getrusage): a peer that maps
and zero-fills its buffers anew on each call pays for it here, whatever else the machine does.

When torch cannot be imported, "hello" answers {"available": false, "reason": "..."}.
The models mirror src/tutorial/models.ts: simpleNet (dense 10 -> 1, MSE), mlp 784-256-256-10 (no
normalization) and cnn (conv16+BN+ReLU+pool, conv32+BN+ReLU+pool, dense 10) with softmax
cross-entropy, SGD at learning rate 0.01, NCHW (PyTorch's native layout).
"""
import json
import os
import resource
import sys
import time

# Share of the busiest thread's CPU time a thread must run to count as busy (as scripts/bench/benchThreads.ts).
BUSY_SHARE = 0.25


def task_cpu_ns():
    """On-CPU nanoseconds of each thread of this process (first field of schedstat)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
        except OSError:
            pass  # the thread ended between listdir and open
    return out


def busy_threads(before, after):
    used = [ns - before.get(tid, 0) for tid, ns in after.items()]
    busiest = max(used, default=0)
    return 0 if busiest == 0 else sum(1 for ns in used if ns >= BUSY_SHARE * busiest)


def busiest_thread_ns(before, after):
    return max((ns - before.get(tid, 0) for tid, ns in after.items()), default=0)


def cpu_per_wall(before, after, wall_ns):
    return sum(ns - before.get(tid, 0) for tid, ns in after.items()) / wall_ns


def main():
    try:
        import torch
        from torch import nn
    except Exception as e:  # noqa: BLE001 - any import failure means "no peer"
        reason = f"import torch failed: {e}".splitlines()[0]
        for line in sys.stdin:
            print(json.dumps({"available": False, "reason": reason}), flush=True)
        return

    torch.manual_seed(0)

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

    def plain_step(model, opt, crit, xs, ys):
        def step():
            opt.zero_grad(set_to_none=True)
            loss = crit(model(xs), ys)
            loss.backward()
            opt.step()
            loss.item()
        return step

    def window(model, opt, crit, micro):
        # loss / steps and .grad accumulated in place by backward: PyTorch's usual window.
        steps = len(micro)

        def run():
            opt.zero_grad(set_to_none=True)
            for xs, ys in micro:
                loss = crit(model(xs), ys) / steps
                loss.backward()
                loss.item()
            opt.step()
        return run

    def parts(model, opt, crit, micro):
        # The window's parts without accumulation: each backward pass writes fresh .grad tensors
        # (set to None first, so nothing is added in place), the last one's feed the one step.
        def run():
            for xs, ys in micro:
                opt.zero_grad(set_to_none=True)
                loss = crit(model(xs), ys)
                loss.backward()
                loss.item()
            opt.step()
        return run

    calls = {}

    def call_for(case):
        key = json.dumps(case, sort_keys=True)
        if key not in calls:
            model, shape, kind = build(case["model"])
            model.train()
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            crit = loss_fn(kind)
            if case["kind"] == "step":
                calls[key] = plain_step(model, opt, crit, *data(shape, kind, case["batch"]))
            else:
                make = window if case["kind"] == "window" else parts
                calls[key] = make(model, opt, crit, [data(shape, kind, case["micro"]) for _ in range(case["steps"])])
        return calls[key]

    def timed(fn, seconds, warmup, min_reps=3):
        for _ in range(warmup):
            fn()
        samples = []
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        before = task_cpu_ns()
        start = time.perf_counter()
        while len(samples) < min_reps or time.perf_counter() - start < seconds:
            t = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - t) * 1000)
        wall_ns = (time.perf_counter() - start) * 1e9
        after = task_cpu_ns()
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        return {"ms": samples, "busyThreads": busy_threads(before, after), "cpuPerWall": cpu_per_wall(before, after, wall_ns),
                "threadCpuMs": busiest_thread_ns(before, after) / 1e6 / len(samples), "taskCount": len(after),
                "faultsPerCall": faults / len(samples)}

    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "hello":
            torch.set_num_threads(cmd["threads"])
            try:
                from threadpoolctl import threadpool_info
                pools = [{"api": p["internal_api"], "threads": p["num_threads"], "library": os.path.basename(p["filepath"]), "architecture": p.get("architecture")} for p in threadpool_info()]
            except Exception as e:  # noqa: BLE001 - threadpoolctl is optional
                pools = [{"api": "threadpoolctl", "error": str(e).splitlines()[0]}]
            env = {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GLIBC_TUNABLES")}
            answer = {"available": True, "torch": torch.__version__, "threads": torch.get_num_threads(), "pools": pools, "env": env}
        elif op == "time":
            answer = timed(call_for(cmd["case"]), cmd["seconds"], cmd.get("warmup", 0))
        elif op == "gemm":
            n = cmd["size"]
            a, b = torch.randn(n, n), torch.randn(n, n)
            result = timed(lambda: torch.mm(a, b), cmd["seconds"], 3)
            answer = {"gflops": [2 * n**3 / (ms * 1e6) for ms in result["ms"]], "busyThreads": result["busyThreads"]}
        else:
            answer = {"error": f"unknown op {op!r}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
