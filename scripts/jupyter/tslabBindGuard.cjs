// Preloaded into tslab by the kernelspec of scripts/installKernel.ts (`node --require`).
//
// Jupyter picks a kernel's five ports free, lets them go, and writes them to the connection file;
// another process can take one before the kernel binds it. tslab's bind then rejects, tslab only
// logs the rejection, and the kernel stays up with a channel that never answers: the front end
// waits on it until its ceiling. Exiting instead lets the server's restarter start the kernel on
// new ports (scripts/jupyter/port_safe.py makes sure the ports are new).
'use strict';

/** Exit code of a kernel that could not bind a port Jupyter gave it (EX_TEMPFAIL: try again). */
const BIND_CLASH_EXIT = 75;

process.on('unhandledRejection', (reason) => {
  if (!reason || reason.code !== 'EADDRINUSE') return;
  process.stderr.write(`tslab: ${reason.address ?? 'a port of the connection file'} was taken before the kernel could bind it (EADDRINUSE); exiting with ${BIND_CLASH_EXIT} so that Jupyter starts the kernel again on new ports.\n`);
  process.exit(BIND_CLASH_EXIT);
});
