# Configuration for `jupyter nbconvert --execute --config=scripts/deno/nbconvert_deno.py`: executes a
# notebook with the "deno" kernelspec (`npm run kernel:install -- --deno`) without losing output.
# test/e2e/deno.e2e.ts uses it; docs/deno.md explains it.
#
# Deno's kernel (2.9.6) can publish a cell's last printed lines after the cell's `status: idle`:
# console.log, Deno.jupyter.display and the cell's result go from the REPL thread into a queue
# that another task forwards to IOPub, while the reply and `idle` are sent as soon as evaluation
# ends. nbclient stops reading a cell's output at `idle`, so the tail is dropped, and a line
# forwarded after the next request arrives is even stamped with that request's id.
#
# The fix here is a barrier: after a cell's `idle`, run a silent cell that prints a unique marker.
# Everything the cell printed entered the queue before the marker, and the queue is forwarded in
# order, so once the marker arrives every late line of the cell has been published; late lines
# stamped with the barrier's id are put back into the cell. The barrier stores no history and
# takes no execution count, so outputs and counts are those of a plain run.
import os
import re
import sys
import uuid

from nbclient.client import NotebookClient
from nbclient.util import ensure_async

# The shared settings (the failed-cell report) of the tslab run.
load_subconfig(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "notebooks", "nbconvert_config.py"))  # noqa: F821 (traitlets)

_OUTPUT_TYPES = {"stream", "display_data", "execute_result", "error", "clear_output", "update_display_data"}
_poll_until_idle = NotebookClient._async_poll_output_msg


async def _poll_through_barrier(self, parent_msg_id, cell, cell_index):
    await _poll_until_idle(self, parent_msg_id, cell, cell_index)
    marker = f"nbconvert_deno barrier {uuid.uuid4().hex}"
    # stop_on_error=False: after a failing cell, the kernel proxy (kernel_proxy.py) answers
    # `aborted` to requests that may not run after an error, and an aborted barrier never prints.
    barrier_id = self.kc.execute(f"console.log({marker!r})", silent=True, store_history=False, stop_on_error=False)
    marker_seen = barrier_idle = False
    while not (marker_seen and barrier_idle):
        msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=None))
        parent = msg["parent_header"].get("msg_id")
        msg_type = msg["msg_type"]
        if parent == parent_msg_id and msg_type in _OUTPUT_TYPES:
            self.process_message(msg, cell, cell_index)
        elif parent == barrier_id:
            if msg_type == "status" and msg["content"]["execution_state"] == "idle":
                barrier_idle = True
            elif msg_type == "stream" and marker in msg["content"].get("text", ""):
                marker_seen = True
            elif msg_type in _OUTPUT_TYPES and not marker_seen:
                self.process_message(msg, cell, cell_index)


NotebookClient._async_poll_output_msg = _poll_through_barrier


def report_cell_error(cell, cell_index, execute_reply):
    """Prints the failed cell and its error: Deno sends it as an `error` output (tslab as stderr)."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            parts.append(output.get("text", "").rstrip())
        elif output.get("output_type") == "error":
            # Deno's traceback repeats "name: message" after a "Stack trace:" line; colours go.
            trace = "\n".join(line for line in output.get("traceback", []) if line != "Stack trace:")
            parts.append(re.sub(r"\x1b\[[0-9;]*m", "", trace) or f"{output.get('ename')}: {output.get('evalue')}")
    first_line = next((line for line in cell.source.splitlines() if line.strip()), "")
    print(f"cell {cell_index + 1} ({first_line!r}) failed:\n" + "\n".join(parts), file=sys.stderr, flush=True)

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)
c.ExecutePreprocessor.kernel_name = "deno"
c.ExecutePreprocessor.on_cell_error = report_cell_error
# nbclient waits this long for a cell's output after its reply, then cancels the poll; the
# barrier adds a round trip, so wait long enough on a busy machine, and fail rather than go on.
c.ExecutePreprocessor.iopub_timeout = 120
c.ExecutePreprocessor.raise_on_iopub_timeout = True
