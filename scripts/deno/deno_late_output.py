"""Reproduces Deno's Jupyter kernel publishing a cell's printed output after `status: idle`.

    JUPYTER_PATH=<folder holding kernels/deno> /usr/bin/python3 scripts/deno/deno_late_output.py [LINES] [RUNS]

Each run starts the kernel named "deno", executes one cell that prints LINES lines (default 200)
with console.log, and counts the stream lines published with that cell as parent before and after
the cell's `status: idle`. The Jupyter protocol says idle comes after every IOPub message of a
request, so a client stops listening there (nbclient, JupyterLab): lines after idle are lost.
Exits 1 if any run published a line after idle. docs/deno.md explains the cause.
"""
import sys
import time

from jupyter_client.manager import start_new_kernel

lines = int(sys.argv[1]) if len(sys.argv) > 1 else 200
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
late_runs = 0
for run in range(runs):
    km, kc = start_new_kernel(kernel_name="deno")
    try:
        msg_id = kc.execute(f"for (let i = 0; i < {lines}; i++) console.log(`line ${{i}}`);")
        before = after = 0
        idle_at = None
        # Read everything for 2 s past idle: a late line would be dropped by a real client.
        while idle_at is None or time.monotonic() - idle_at < 2:
            try:
                msg = kc.get_iopub_msg(timeout=0.2)
            except Exception:  # queue.Empty
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                idle_at = time.monotonic()
            elif msg["msg_type"] == "stream":
                count = msg["content"]["text"].count("\n")
                if idle_at is None:
                    before += count
                else:
                    after += count
        late_runs += after > 0
        print(f"run {run + 1}: {before} lines before idle, {after} after idle, {lines - before - after} never")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        del kc, km  # while logging still works (jupyter_client logs in __del__)
print(f"{late_runs} of {runs} runs published lines after idle")
sys.exit(1 if late_runs else 0)
