"""Kernels that start again on new ports when a port they were given was taken.

jupyter_client 7.4 picks a kernel's ports from a per-process cache (`cache_ports`, on for tcp)
and then records none of them as random, so `restart_kernel(newports=True)`, which the
restarter asks for while a kernel has never started (`random_ports_until_alive`), starts the
kernel again on the very ports it could not bind: a port another process took stays taken, and
the kernel dies five times and is given up. Without the cache the ports are picked when the
connection file is written, recorded as random, and a restart gets new ones.

A second change, for jupyter_server 1.23's kernel listing: `AsyncMappingKernelManager.start_kernel`
registers a kernel when its process is up and gives it `last_activity` and `execution_state` only
after awaiting the rest of its start. A `GET /api/kernels` handled in between (JupyterLab polls it)
fails with a 500 (AttributeError in `kernel_model`), which a page logs as an error: it happened
in a stressed CI run on 2026-12-04 while a Deno kernel started. Upstream reports the same trace
(jupyter-server/enterprise_gateway#1395). These managers carry the markers from construction.

The project's Jupyter servers load these by name (scripts/jupyter/portSafe.ts):
`--AsyncMappingKernelManager.kernel_manager_class=port_safe.PortSafeAsyncKernelManager` for
jupyter_server (JupyterLab), `--MappingKernelManager.kernel_manager_class=port_safe.PortSafeKernelManager`
for classic Notebook, with this folder on PYTHONPATH.
"""
import datetime
import sys

from jupyter_client.ioloop import AsyncIOLoopKernelManager, IOLoopKernelManager
from traitlets import HasTraits, default


class NoPortCache(HasTraits):
    """The one change, for both managers: classic Notebook's server needs the blocking one,
    jupyter_server's the async one."""

    @default("cache_ports")
    def _default_cache_ports(self):
        return False


class StartingMarkers:
    """The markers the server's kernel listing reads, as the server itself sets them at a start
    (it overwrites them with the same values once the start is done)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.execution_state = "starting"
        self.reason = ""
        self.last_activity = datetime.datetime.now(datetime.timezone.utc)


class PortSafeKernelManager(StartingMarkers, NoPortCache, IOLoopKernelManager):
    pass


class PortSafeAsyncKernelManager(StartingMarkers, NoPortCache, AsyncIOLoopKernelManager):
    pass


# nbclient (nbconvert --execute) has no restarter: a kernel that dies before it answers fails
# the run with "Kernel died before replying to kernel_info". A fresh manager picks fresh ports.
KERNEL_STARTS = 3


def start_again_on_new_ports(client_class):
    """Makes `client_class` (nbclient's NotebookClient) start a kernel that died before it
    answered again, on new ports, up to KERNEL_STARTS times in all."""
    from nbclient.util import run_sync

    start_client = client_class.async_start_new_kernel_client

    async def start_client_on_new_ports(self):
        for attempt in range(1, KERNEL_STARTS + 1):
            try:
                return await start_client(self)
            except RuntimeError as e:
                if "Kernel died" not in str(e) or attempt == KERNEL_STARTS:
                    raise
                print(f"port_safe: the kernel died before it answered (start {attempt} of {KERNEL_STARTS}); starting it again on new ports", file=sys.stderr, flush=True)
                # nbclient's failed start shut the kernel down and dropped its manager.
                self.km = self.create_kernel_manager()
                await self.async_start_new_kernel()

    client_class.async_start_new_kernel_client = start_client_on_new_ports
    client_class.start_new_kernel_client = run_sync(start_client_on_new_ports)
