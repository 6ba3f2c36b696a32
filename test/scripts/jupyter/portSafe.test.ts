import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { kernelJson } from '../../../scripts/installKernel';
import { portSafeArgs, portSafeEnv } from '../../../scripts/jupyter/portSafe';
import { HANG_MS } from '../../helpers/ceilings';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'jupyter', 'restart_on_clash.py');
const LIST_WHILE_STARTING = path.join(ROOT, 'test', 'fixtures', 'jupyter', 'list_while_starting.py');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'port-safe-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// The kernelspec kernel:install writes, under a JUPYTER_PATH of this test's own.
fs.mkdirSync(path.join(tmp, 'kernels', 'tslab'), { recursive: true });
fs.writeFileSync(path.join(tmp, 'kernels', 'tslab', 'kernel.json'), JSON.stringify(kernelJson('tslab')));

type Event = { executed?: string; failed?: string; busy?: number; started_on?: number; restarting_from?: number; ready?: number; dead?: boolean; shell_port?: number };

/** Runs restart_on_clash.py with `args` and returns its events. */
async function restartOnClash(...args: string[]): Promise<Event[]> {
  const env = portSafeEnv({ ...process.env, JUPYTER_PATH: tmp, JUPYTER_RUNTIME_DIR: path.join(tmp, 'runtime'), PYDEVD_DISABLE_FILE_VALIDATION: '1' });
  const child = spawn('/usr/bin/python3', [SCRIPT, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b));
  child.stderr.on('data', (b: Buffer) => (err += b));
  const ceiling = setTimeout(() => child.kill('SIGKILL'), HANG_MS);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(ceiling);
  assert.equal(code, 0, `${out}\n${err}`);
  return out.trim().split('\n').map((l) => JSON.parse(l) as Event);
}

describe('port_safe (scripts/jupyter/port_safe.py)', () => {
  it('names the managers on the servers’ command lines and puts their folder on PYTHONPATH', () => {
    assert.deepEqual(portSafeArgs('jupyter-server'), ['--AsyncMappingKernelManager.kernel_manager_class=port_safe.PortSafeAsyncKernelManager']);
    assert.deepEqual(portSafeArgs('classic'), ['--MappingKernelManager.kernel_manager_class=port_safe.PortSafeKernelManager']);
    assert.equal(portSafeEnv({ PYTHONPATH: '/a' }).PYTHONPATH, `${path.join(ROOT, 'scripts', 'jupyter')}${path.delimiter}/a`);
  });

  it('turns the port cache off in both managers, which jupyter_client’s own keeps on', () => {
    // The restart below exercises the async manager only; classic Notebook's server uses the other.
    const code = 'import port_safe\nfrom jupyter_client.ioloop import IOLoopKernelManager as K\nprint(port_safe.PortSafeKernelManager().cache_ports, port_safe.PortSafeAsyncKernelManager().cache_ports, K().cache_ports)';
    const out = execFileSync('/usr/bin/python3', ['-c', code], { env: portSafeEnv({ ...process.env }), encoding: 'utf8' });
    assert.equal(out.trim(), 'False False True');
  });

  it('restarts a tslab kernel whose port was taken on new ports, and it answers', async () => {
    const events = await restartOnClash('port_safe.PortSafeAsyncKernelManager', 'tslab');
    const busy = events[0].busy;
    assert.equal(events[0].started_on, busy, 'the first start clashed');
    assert.equal(events[1].restarting_from, busy);
    const ready = events.find((e) => e.ready !== undefined);
    assert.ok(ready, JSON.stringify(events));
    assert.notEqual(ready.ready, busy);
  });

  it('is needed: jupyter_client’s own manager restarts it on the same taken port until it gives up', async () => {
    const events = await restartOnClash('jupyter_client.ioloop.AsyncIOLoopKernelManager', 'tslab');
    const busy = events[0].busy;
    // The script allows two restarts; both were on the taken port, so the kernel never came up.
    assert.equal(events.filter((e) => e.restarting_from !== undefined).length, 2, JSON.stringify(events));
    assert.deepEqual(events.at(-1), { dead: true, shell_port: busy });
    assert.ok(!events.some((e) => e.ready !== undefined));
  });

  it('makes nbconvert’s client start a kernel that died before it answered again on new ports, and the cell runs', async () => {
    const events = await restartOnClash('nbclient', 'tslab');
    assert.deepEqual(events.at(-1), { executed: '42\n' });
  });

  it('is needed there too: nbclient alone fails the notebook', async () => {
    const events = await restartOnClash('nbclient', 'tslab', 'stock');
    assert.deepEqual(events.at(-1), { failed: 'Kernel died before replying to kernel_info' });
  });

  // jupyter_server 1.23 lists a starting kernel before marking it: a stressed CI run (L,
  // 2026-12-04) got a 500 from GET /api/kernels while a Deno kernel started. The fixture lists
  // the kernels at exactly that point of a start, with each manager class.
  const listWhileStarting = (manager: 'port_safe' | 'jupyter_client') =>
    JSON.parse(
      execFileSync('/usr/bin/python3', [LIST_WHILE_STARTING, manager], { env: portSafeEnv({ ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: '1' }), encoding: 'utf8', timeout: HANG_MS }).trim(),
    ) as unknown;

  it('lists a kernel that is still starting as starting, where jupyter_client’s manager makes the listing fail', () => {
    assert.deepEqual(listWhileStarting('port_safe'), [{ execution_state: 'starting', has_last_activity: true }]);
    assert.deepEqual(listWhileStarting('jupyter_client'), { error: "AttributeError: 'AsyncIOLoopKernelManager' object has no attribute 'last_activity'" });
  });
});
