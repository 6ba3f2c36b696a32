# Configuration for `jupyter nbconvert --execute --config=scripts/notebooks/nbconvert_config.py`, used by
# test/e2e/jupyter.e2e.ts. tslab answers a failed cell with status "error" but no ename, evalue
# or traceback (it writes the error to the cell's stderr), so nbclient's own message says only
# "<Error>:". This hook prints the cell's stderr, i.e. the actual error, before nbclient raises.
import os
import sys

# A kernel whose port another process took before it could bind it dies at once (tslab's guard,
# Deno's proxy); nbclient then starts it again on new ports (scripts/jupyter/port_safe.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jupyter"))
from nbclient.client import NotebookClient  # noqa: E402
from port_safe import start_again_on_new_ports  # noqa: E402

start_again_on_new_ports(NotebookClient)


def report_cell_error(cell, cell_index, execute_reply):
    stderr = "".join(
        output.get("text", "")
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream" and output.get("name") == "stderr"
    )
    first_line = next((line for line in cell.source.splitlines() if line.strip()), "")
    print(f"cell {cell_index + 1} ({first_line!r}) failed:\n{stderr.rstrip()}", file=sys.stderr, flush=True)


c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)
c.ExecutePreprocessor.on_cell_error = report_cell_error
