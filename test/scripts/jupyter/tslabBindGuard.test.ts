import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { kernelJson } from '../../../scripts/installKernel';
import { TSLAB_BIND_GUARD } from '../../../scripts/jupyter/portSafe';
import { HANG_MS } from '../../helpers/ceilings';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bind-guard-'));
const held: net.Server[] = [];
after(() => {
  for (const s of held) s.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function listening(): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** A connection file whose shell port another process holds, the rest free when written. */
async function clashingConnectionFile(): Promise<{ file: string; busy: number }> {
  const taken = await listening();
  held.push(taken);
  const busy = (taken.address() as net.AddressInfo).port;
  const free: number[] = [];
  for (let i = 0; i < 4; i++) {
    const s = await listening();
    free.push((s.address() as net.AddressInfo).port);
    await new Promise((r) => s.close(r));
  }
  const [iopub, stdin, control, hb] = free;
  const file = path.join(tmp, `kernel-${busy}.json`);
  const info = { shell_port: busy, iopub_port: iopub, stdin_port: stdin, control_port: control, hb_port: hb, ip: '127.0.0.1', key: 'k', transport: 'tcp', signature_scheme: 'hmac-sha256', kernel_name: 'tslab' };
  fs.writeFileSync(file, JSON.stringify(info));
  return { file, busy };
}

describe('tslabBindGuard (scripts/jupyter/tslabBindGuard.cjs)', () => {
  it('makes the kernelspec’s tslab exit with 75, naming the port, when a port of its connection file is taken', async () => {
    const { file, busy } = await clashingConnectionFile();
    const [command, ...args] = (kernelJson('tslab') as { argv: string[] }).argv.map((a) => (a === '{connection_file}' ? file : a));
    assert.ok(args.includes(TSLAB_BIND_GUARD), 'the kernelspec preloads the guard');
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    const ceiling = setTimeout(() => child.kill('SIGKILL'), HANG_MS);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(ceiling);
    assert.equal(code, 75, stderr);
    assert.match(stderr, new RegExp(`tcp://127\\.0\\.0\\.1:${busy} was taken before the kernel could bind it \\(EADDRINUSE\\)`));
  });

  it('is what it takes: tslab alone, after the same failed bind, stays up with a port that never answers', async () => {
    const { file, busy } = await clashingConnectionFile();
    // A preload that only reports the rejection, so the test knows when tslab has seen it.
    const probe = path.join(tmp, 'probe.cjs');
    fs.writeFileSync(probe, "process.on('unhandledRejection', (r) => process.stderr.write(`probe: ${r && r.code} ${r && r.address}\\n`));\n");
    const tslab = path.join(ROOT, 'node_modules', '.bin', 'tslab');
    const child = spawn(process.execPath, ['--require', probe, tslab, 'kernel', '--config-path', file], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const ceiling = setTimeout(() => child.kill('SIGKILL'), HANG_MS);
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (b: Buffer) => {
        stderr += b;
        if (stderr.includes('probe:')) resolve();
      }),
    );
    assert.match(stderr, new RegExp(`probe: EADDRINUSE tcp://127\\.0\\.0\\.1:${busy}`));
    // tslab's own handler has run too (handlers run in order, at once); it logged and went on.
    await new Promise((r) => setImmediate(r));
    assert.equal(child.exitCode, null, 'tslab is still running');
    clearTimeout(ceiling);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
  });
});
