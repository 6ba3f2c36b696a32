"""Kernel managers whose restarts after a failed start use new ports.

jupyter_client 7.4 picks a kernel's ports from a per-process cache (`cache_ports`, on for tcp)
and then records none of them as random, so `restart_kernel(newports=True)`, which the
restarter asks for while a kernel has never started (`random_ports_until_alive`), starts the
kernel again on the very ports it could not bind: a port another process took stays taken, and
the kernel dies five times and is given up. Without the cache the ports are picked when the
connection file is written, recorded as random, and a restart gets new ones.

The project's Jupyter servers load these by name (scripts/jupyter/portSafe.ts):
`--AsyncMappingKernelManager.kernel_manager_class=port_safe.PortSafeAsyncKernelManager` for
jupyter_server (JupyterLab), `--MappingKernelManager.kernel_manager_class=port_safe.PortSafeKernelManager`
for classic Notebook, with this folder on PYTHONPATH.
"""
from jupyter_client.ioloop import AsyncIOLoopKernelManager, IOLoopKernelManager
from traitlets import default


class PortSafeKernelManager(IOLoopKernelManager):
    @default("cache_ports")
    def _default_cache_ports(self):
        return False


class PortSafeAsyncKernelManager(AsyncIOLoopKernelManager):
    @default("cache_ports")
    def _default_cache_ports(self):
        return False
