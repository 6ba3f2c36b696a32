"""Deno's Jupyter kernel behind a proxy that keeps every cell's output in its cell.

    kernel_proxy.py DENO_BINARY CONNECTION_FILE

The "deno" kernelspec of `npm run kernel:install -- --deno` runs this (with Debian's Python,
which has pyzmq and jupyter_client). Deno 2.9.6's kernel sends a cell's `status: idle` before
the last lines the cell printed (docs/deno.md, "Late output"); front ends stop listening to a
cell at its idle, so JupyterLab and classic Notebook drop those lines, or show them under the
next cell. The proxy listens where Jupyter asked the kernel to, starts Deno on ports of its own,
and forwards every message unchanged except:

- an `execute_request` waits until the cell before it is finished, so the kernel never starts a
  cell while the one before still has output queued (a front end's Run All sends all at once);
- a cell's `idle` is held back; the proxy runs a barrier, a silent cell printing a unique marker.
  Everything the cell printed entered Deno's queue before the marker, and the queue is forwarded
  in order, so when the marker arrives the cell's output is complete. Late output stamped with
  the barrier's id is given back its cell's id; then the held `idle` goes out;
- when a cell fails, the requests that waited behind it are answered `aborted`, as the kernel
  itself does with `stop_on_error` (Run All stops at the failing cell), and so are those that
  arrive in the next KERNEL_PROXY_STOP_ON_ERROR_TIMEOUT seconds (default 0.2). A front end's
  Run All is one burst, but it leaves the browser over several milliseconds per cell, more on a
  busy machine, so its tail can reach the proxy after a quick failing cell is done. ipykernel
  (`stop_on_error_timeout`) and tslab (200 ms) close the same gap with the same kind of window.
"""
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import zmq
from jupyter_client.connect import write_connection_file
from jupyter_client.session import Session

DELIM = b"<IDS|MSG>"
OUTPUT_TYPES = {"stream", "display_data", "execute_result", "error", "clear_output", "update_display_data"}


def split(frames):
    """(identities, [hmac, header, parent, metadata, content, *buffers])."""
    i = frames.index(DELIM)
    return frames[:i], frames[i + 1 :]


def stops_on_error(parts):
    """Whether an execute_request's content asks that an error stop what follows (the protocol's default)."""
    return json.loads(parts[4]).get("stop_on_error", True)


def url(cfg, name):
    return f"{cfg['transport']}://{cfg['ip']}:{cfg[name + '_port']}"


# The five channels of a connection file, in the order KERNEL_PROXY_FIRST_PORTS lists them.
CHANNELS = ("shell", "iopub", "stdin", "control", "hb")


class KernelStartError(RuntimeError):
    """Deno exited before it answered, on every set of ports tried."""


class Proxy:
    def __init__(self, deno, outer_file):
        with open(outer_file, encoding="utf-8") as f:
            outer = json.load(f)
        key = outer["key"].encode()
        self.session = Session(key=key, signature_scheme=outer["signature_scheme"], username="kernel_proxy")
        self.deno = deno
        ctx = zmq.Context.instance()
        self.ctx = ctx
        self.outer = outer
        self.inner_file = None
        self.kernel = None
        self.back = {}
        self.barrier_socket = None
        # The proxy's own requests (the start-up probe): their replies and IOPub are not forwarded.
        self.private = set()

        def bind(kind, name):
            s = ctx.socket(kind)
            s.linger = 0
            s.bind(url(outer, name))
            return s

        # The front ports are bound before Deno's are picked: Jupyter chose them free and let them
        # go, so a free-port pick made before this bind could hand the same numbers to Deno.
        self.front = {n: bind(zmq.ROUTER, n) for n in ("shell", "control", "stdin")}
        self.front["iopub"] = bind(zmq.PUB, "iopub")
        self.front["hb"] = bind(zmq.REP, "hb")

        # Who asked what: replies are routed by their parent's msg_id, whatever identities the
        # kernel copies back.
        self.routes = {}
        self.waiting = collections.deque()
        self.cell = None
        self.clock = time.monotonic
        self.stop_on_error_timeout = float(os.environ.get("KERNEL_PROXY_STOP_ON_ERROR_TIMEOUT", "0.2"))
        # Until when (self.clock) requests with stop_on_error are answered aborted: a failure's window.
        self.aborting_until = None
        # KERNEL_PROXY_TRACE=FILE appends one JSON line per decision (docs/deno.md, "Tracing the
        # proxy"): the order things reached the proxy is what a race under load is made of.
        trace = os.environ.get("KERNEL_PROXY_TRACE")
        self.trace_file = open(trace, "a", encoding="utf-8") if trace else None

    def trace(self, event, **fields):
        if self.trace_file is not None:
            self.trace_file.write(json.dumps({"t": round(self.clock(), 4), "event": event, **fields}) + "\n")
            self.trace_file.flush()

    # -- start-up ----------------------------------------------------------------------------

    def start_kernel(self):
        """Starts Deno on free ports and waits until it answers, with new ports while it cannot bind.

        A port picked free can be taken before Deno binds it (by another kernel starting, or any
        process): Deno then exits with AddrInUse. jupyter_client's own restarter answers that with
        new ports (`random_ports_until_alive`); behind the proxy the ports are the proxy's to pick,
        so it does the same. Any other early exit is retried too, and the last error is reported.
        """
        attempts = int(os.environ.get("KERNEL_PROXY_ATTEMPTS", "5"))
        # For tests: the first attempt's ports (shell, iopub, stdin, control, hb), to force a clash.
        first = os.environ.get("KERNEL_PROXY_FIRST_PORTS")
        for attempt in range(1, attempts + 1):
            ports = [int(p) for p in first.split(",")] if first and attempt == 1 else None
            code = self.launch(ports)
            if code is None:
                return
            print(f"kernel_proxy: Deno exited with code {code} during start-up on ports {self.inner_ports()} (attempt {attempt} of {attempts})" + (", retrying on new ports" if attempt < attempts else ""), file=sys.stderr, flush=True)
        raise KernelStartError(f"Deno did not start in {attempts} attempts; its last error is above")

    def inner_ports(self):
        return ",".join(str(self.inner[n + "_port"]) for n in CHANNELS)

    def launch(self, ports):
        """One start: returns None once Deno answers a kernel_info_request, or its exit code."""
        self.close_back()
        fd, self.inner_file = tempfile.mkstemp(prefix="deno-inner-", suffix=".json")
        os.close(fd)
        os.remove(self.inner_file)
        names = dict(zip((n + "_port" for n in CHANNELS), ports)) if ports else {}
        outer = self.outer
        write_connection_file(self.inner_file, ip=outer["ip"], key=outer["key"].encode(), transport=outer["transport"], signature_scheme=outer["signature_scheme"], **names)
        with open(self.inner_file, encoding="utf-8") as f:
            self.inner = json.load(f)
        self.kernel = subprocess.Popen([self.deno, "jupyter", "--kernel", "--conn", self.inner_file])
        ctx = self.ctx

        def connect(kind, name, identity=None):
            s = ctx.socket(kind)
            s.linger = 0
            if identity:
                s.identity = identity
            s.connect(url(self.inner, name))
            return s

        # The kernel sends input_request to the identity of the shell request's sender, so the
        # proxy's shell and stdin sockets share one identity.
        me = f"kernel_proxy-{uuid.uuid4().hex}".encode()
        self.back = {"shell": connect(zmq.DEALER, "shell", me), "control": connect(zmq.DEALER, "control"), "stdin": connect(zmq.DEALER, "stdin", me)}
        self.back["iopub"] = connect(zmq.SUB, "iopub")
        self.back["iopub"].setsockopt(zmq.SUBSCRIBE, b"")
        self.barrier_socket = connect(zmq.DEALER, "shell")
        probe = self.session.msg("kernel_info_request", {})
        self.private.add(probe["header"]["msg_id"])
        self.session.send(self.barrier_socket, probe)
        deadline = time.monotonic() + float(os.environ.get("KERNEL_PROXY_START_TIMEOUT", "60"))
        while time.monotonic() < deadline:
            if self.barrier_socket.poll(100):
                self.barrier_socket.recv_multipart()
                return None
            if self.kernel.poll() is not None:
                return self.kernel.returncode
        # Alive but slow: let the front end wait for it, as it would without the proxy.
        return None

    def close_back(self):
        for s in [*self.back.values(), self.barrier_socket]:
            if s is not None:
                s.close(0)
        self.back = {}
        self.barrier_socket = None
        if self.kernel is not None and self.kernel.poll() is None:
            self.kernel.kill()
            self.kernel.wait()
        if self.inner_file and os.path.exists(self.inner_file):
            os.remove(self.inner_file)

    # -- shell, control, stdin ---------------------------------------------------------------

    def from_front(self, channel, frames):
        idents, parts = split(frames)
        header = json.loads(parts[1])
        self.routes[header["msg_id"]] = idents
        if channel == "stdin":
            self.back["stdin"].send_multipart([DELIM, *parts])
        elif channel == "shell" and header["msg_type"] == "execute_request":
            self.trace("request", msg_id=header["msg_id"], date=header.get("date"), busy=self.cell is not None, waiting=len(self.waiting))
            self.waiting.append((header, parts))
            if self.cell is None and self.aborting_until is not None and self.clock() < self.aborting_until and stops_on_error(parts):
                self.abort_waiting()
            self.next_cell()
        else:
            self.back[channel].send_multipart([DELIM, *parts])

    def from_back(self, channel, frames):
        _, parts = split(frames)
        parent = json.loads(parts[2])
        idents = self.routes.get(parent.get("msg_id"))
        if channel == "stdin" and self.cell is not None:
            idents = self.routes.get(self.cell["msg_id"])
        if idents is None:
            return
        self.front[channel].send_multipart([*idents, DELIM, *parts])
        if channel != "stdin" and json.loads(parts[1])["msg_type"].endswith("_reply"):
            self.routes.pop(parent.get("msg_id"), None)
            cell = self.cell
            if cell is not None and parent.get("msg_id") == cell["msg_id"]:
                cell["failed"] = json.loads(parts[4]).get("status") == "error"
                self.trace("reply", msg_id=cell["msg_id"], failed=cell["failed"])
                cell["replied"] = True
                self.finish_cell()

    def next_cell(self):
        if self.cell is not None or not self.waiting:
            return
        header, parts = self.waiting.popleft()
        self.trace("release", msg_id=header["msg_id"])
        self.cell = {"msg_id": header["msg_id"], "header": header, "barrier": None, "idle": None, "marker": None, "marker_seen": False, "barrier_idle": False, "replied": False, "failed": False, "stop_on_error": stops_on_error(parts)}
        self.back["shell"].send_multipart([DELIM, *parts])

    def abort_waiting(self):
        while self.waiting:
            header, _ = self.waiting.popleft()
            self.trace("abort", msg_id=header["msg_id"])
            idents = self.routes.pop(header["msg_id"], [])
            self.session.send(self.front["iopub"], "status", {"execution_state": "busy"}, parent=header)
            self.session.send(self.front["shell"], "execute_reply", {"status": "aborted", "execution_count": None}, parent=header, ident=idents)
            self.session.send(self.front["iopub"], "status", {"execution_state": "idle"}, parent=header)

    # -- iopub -------------------------------------------------------------------------------

    def publish(self, parts, parent=None):
        """Forwards an IOPub message, re-signed under `parent` when given."""
        if parent is not None:
            parts = list(parts)
            parts[2] = json.dumps(parent).encode()
            parts[0] = self.session.sign(parts[1:5])
        self.front["iopub"].send_multipart([DELIM, *parts])

    def from_iopub(self, frames):
        idents, parts = split(frames)
        header, parent = json.loads(parts[1]), json.loads(parts[2])
        msg_type, parent_id = header["msg_type"], parent.get("msg_id")
        if parent_id in self.private:
            return
        cell = self.cell
        if cell is None or parent_id not in (cell["msg_id"], cell["barrier"]):
            self.publish(parts)
            return
        content = json.loads(parts[4])
        idle = msg_type == "status" and content.get("execution_state") == "idle"
        if parent_id == cell["msg_id"]:
            if idle and cell["barrier"] is None:
                cell["idle"] = parts
                cell["marker"] = f"kernel_proxy barrier {uuid.uuid4().hex}"
                msg = self.session.msg("execute_request", {"code": f"console.log({json.dumps(cell['marker'])})", "silent": True, "store_history": False, "allow_stdin": False, "stop_on_error": False, "user_expressions": {}})
                cell["barrier"] = msg["header"]["msg_id"]
                self.session.send(self.barrier_socket, msg)
            else:
                self.publish(parts)
            return
        # The barrier's messages: late output of the cell (re-stamped), the marker, the rest dropped.
        if idle:
            cell["barrier_idle"] = True
        elif msg_type == "stream" and cell["marker"] in content.get("text", ""):
            cell["marker_seen"] = True
            before = content["text"].split(cell["marker"], 1)[0].rstrip("\n")
            if before:
                content["text"] = before + "\n"
                parts = list(parts)
                parts[4] = json.dumps(content).encode()
                self.publish(parts, cell["header"])
        elif msg_type in OUTPUT_TYPES and not cell["marker_seen"]:
            self.publish(parts, cell["header"])
        self.finish_cell()

    def finish_cell(self):
        """Releases the cell's held idle, and the next request, once the cell is wholly done.

        Done means three things, which reach the proxy on two sockets in no fixed order: the
        barrier's marker and idle (all output is in) on IOPub, and the cell's execute_reply (did it
        fail?) on shell. Deciding on the IOPub pair alone sent the request after a failing cell to
        Deno whenever its reply came in late, as under load it did (a CI run on 2026-12-04).
        """
        cell = self.cell
        if cell is None or not (cell["marker_seen"] and cell["barrier_idle"] and cell["replied"]):
            return
        self.publish(cell["idle"])
        self.cell = None
        stops = cell["failed"] and cell["stop_on_error"]
        if stops:
            self.aborting_until = self.clock() + self.stop_on_error_timeout
        self.trace("finish", msg_id=cell["msg_id"], failed=cell["failed"], waiting=len(self.waiting), aborting_until=round(self.aborting_until, 4) if stops else None)
        if stops:
            self.abort_waiting()
        self.next_cell()

    # -- loop --------------------------------------------------------------------------------

    def run(self):
        poller = zmq.Poller()
        sockets = {}
        for name, s in self.front.items():
            poller.register(s, zmq.POLLIN)
            sockets[s] = ("front", name)
        for name, s in self.back.items():
            poller.register(s, zmq.POLLIN)
            sockets[s] = ("back", name)
        poller.register(self.barrier_socket, zmq.POLLIN)
        sockets[self.barrier_socket] = ("barrier", None)
        while self.kernel.poll() is None:
            for s, _ in poller.poll(500):
                side, name = sockets[s]
                frames = s.recv_multipart()
                if side == "barrier":
                    continue  # the barrier's execute_reply
                if name == "hb":
                    s.send_multipart(frames)
                elif side == "front":
                    self.from_front(name, frames)
                elif name == "iopub":
                    self.from_iopub(frames)
                else:
                    self.from_back(name, frames)
        return self.kernel.returncode

    def stop(self, *_):
        if self.kernel is None:
            return
        if self.kernel.poll() is None:
            self.kernel.terminate()
            try:
                self.kernel.wait(10)
            except subprocess.TimeoutExpired:
                self.kernel.kill()
        if self.inner_file and os.path.exists(self.inner_file):
            os.remove(self.inner_file)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: kernel_proxy.py DENO_BINARY CONNECTION_FILE")
    # Jupyter stops a kernel with SIGTERM (or SIGKILL) and interrupts it with SIGINT, sent to
    # this process: the interrupt is Deno's. A stop during start-up stops the Deno being tried.
    holder = {}

    def terminate(*_):
        proxy = holder.get("proxy")
        if proxy is not None:
            proxy.stop()
        sys.exit(0)

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, lambda *_: holder["proxy"].kernel.send_signal(signal.SIGINT) if holder.get("proxy") and holder["proxy"].kernel else None)
    # The constructor only binds the front ports; Deno starts once the handlers can stop it.
    proxy = Proxy(sys.argv[1], sys.argv[2])
    holder["proxy"] = proxy
    try:
        proxy.start_kernel()
    except KernelStartError as e:
        proxy.close_back()
        sys.exit(f"kernel_proxy: {e}")
    try:
        code = proxy.run()
    finally:
        proxy.stop()
    sys.exit(code or 0)


if __name__ == "__main__":
    main()
