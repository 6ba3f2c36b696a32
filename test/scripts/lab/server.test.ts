import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { installKernel } from '../../../scripts/installKernel';
import { descendants } from '../../../scripts/notebooks/processTree';
import { freePort, isRoot, labCommand, LabRootError, refuseRoot, startLabServer, type LabServer } from '../../../scripts/lab/server';
import { tokenConfigText, TokenConfigError, writeTokenConfig } from '../../../scripts/lab/tokenConfig';
import { isolatedJupyterEnv } from '../../helpers/jupyter';
import { processesHolding, readableProcesses } from '../../helpers/procSecrets';

describe('the JupyterLab server command', () => {
  const args = { root: '/repo', port: 8123, configFile: '/private/jupyter_token_config.py' };

  it('listens on loopback only, reads its token from the config file, on the given port and no other', () => {
    for (const frontEnd of ['jupyter-lab', 'lab-app'] as const) {
      const command = labCommand(frontEnd, args);
      assert.ok(command.includes('--ServerApp.ip=127.0.0.1'));
      assert.ok(command.includes('--config=/private/jupyter_token_config.py'));
      assert.deepEqual(command.filter((a) => /token/i.test(a) && !a.startsWith('--config=')), [], 'no token option on the command line');
      assert.ok(command.includes('--ServerApp.port=8123') && command.includes('--ServerApp.port_retries=0'));
      assert.ok(command.includes('--ServerApp.root_dir=/repo'));
      assert.ok(command.includes('--no-browser'));
      assert.ok(!command.includes('--allow-root'), 'only when asked for');
      assert.ok(labCommand(frontEnd, { ...args, allowRoot: true }).includes('--allow-root'));
    }
  });

  it('runs `jupyter lab`, or lab/server.py with Debian\'s Python and the given state folders', () => {
    assert.deepEqual(labCommand('jupyter-lab', args).slice(0, 2), ['jupyter', 'lab']);
    const app = labCommand('lab-app', { ...args, settingsDir: '/s', workspacesDir: '/w' });
    assert.equal(app[0], '/usr/bin/python3');
    assert.equal(app[1], path.resolve(__dirname, '..', '..', '..', 'lab', 'server.py'));
    assert.ok(app.includes('--TutorialLab.user_settings_dir=/s') && app.includes('--TutorialLab.workspaces_dir=/w'));
    assert.ok(!labCommand('lab-app', args).some((a) => a.startsWith('--TutorialLab.')));
  });

  it('refuses to run as root unless asked for, naming the option', () => {
    assert.throws(() => refuseRoot(false, true), (e: Error) => e instanceof LabRootError && /--allow-root/.test(e.message));
    assert.doesNotThrow(() => refuseRoot(true, true));
    assert.doesNotThrow(() => refuseRoot(false, false));
  });

  it('finds a free port', async () => {
    const port = await freePort();
    assert.ok(Number.isInteger(port) && port > 0 && port < 65536);
  });
});

describe("the token's config file", () => {
  it('is readable by this user only, in a folder only this user can enter, and holds the token for the named app', () => {
    const config = writeTokenConfig('0123456789abcdef0123456789abcdef', 'NotebookApp');
    try {
      assert.equal(fs.statSync(config.file).mode & 0o777, 0o600);
      assert.equal(fs.statSync(config.dir).mode & 0o777, 0o700);
      assert.match(fs.readFileSync(config.file, 'utf8'), /^c\.NotebookApp\.token = '0123456789abcdef0123456789abcdef'$/m);
    } finally {
      config.remove();
    }
    assert.equal(fs.existsSync(config.dir), false, 'removed with its folder');
  });

  it('refuses a token that could break out of the Python string', () => {
    for (const bad of ["abc'; import os; os.system('x') #", 'short', '']) assert.throws(() => tokenConfigText(bad, 'ServerApp'), TokenConfigError, bad);
  });
});

describe("a running lab server's token", () => {
  let tmp: string | undefined;
  let server: LabServer | undefined;
  after(async () => {
    await server?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('is in no command line and no environment of any process, with a tslab kernel running', { timeout: 900_000 }, async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-token-'));
    installKernel({ prefix: path.join(tmp, 'prefix') });
    const env = isolatedJupyterEnv(tmp);
    // Root in CI (the refusal itself is tested above); the server runs as its caller here.
    server = await startLabServer({ root: tmp, frontEnd: 'lab-app', env, allowRoot: isRoot(), settingsDir: path.join(tmp, 'settings'), workspacesDir: path.join(tmp, 'workspaces') });
    const auth = { Authorization: `token ${server.token}` };
    assert.equal((await fetch(`${server.base}/api/kernels`)).status, 403, 'refused without the token');
    const started = await fetch(`${server.base}/api/kernels`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'tslab' }) });
    assert.equal(started.status, 201, await started.text());
    // The kernel's process, once the server has started it: the tree then holds server and kernel.
    const kernelRuns = (): boolean => descendants(server!.process.pid!).some((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('tslab');
      } catch {
        return false;
      }
    });
    while (!kernelRuns()) await new Promise((r) => setTimeout(r, 200));
    assert.ok(readableProcesses() > 3, 'the scan reads the process table');
    assert.deepEqual(processesHolding(server.token), [], 'processes that hold the token');
    // jupyter-server writes the token into its runtime files (jpserver-PID.json, and -open.html
    // with mode 0644 in 1.23): they are safe only inside a folder that others cannot enter.
    const runtime = path.join(tmp, 'runtime');
    const holding = fs.readdirSync(runtime).filter((f) => fs.readFileSync(path.join(runtime, f), 'utf8').includes(server!.token));
    assert.ok(holding.length > 0, 'the runtime files the check is about');
    assert.equal(fs.statSync(runtime).mode & 0o077, 0, `the runtime folder holding ${holding.join(', ')} is open to others`);
  });

  it('would be found by the scan on a command line or in an environment (the negative case)', async () => {
    const secret = `scan-negative-${process.pid}-${Date.now()}`;
    const holders = [spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', secret]), spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { env: { ...process.env, SOME_TOKEN: secret } })];
    try {
      await Promise.all(holders.map((h) => new Promise((r) => h.once('spawn', r))));
      const found = processesHolding(secret);
      assert.deepEqual(found.filter((f) => f.pid === holders[0].pid).map((f) => f.where), ['cmdline']);
      assert.deepEqual(found.filter((f) => f.pid === holders[1].pid).map((f) => f.where), ['environ']);
    } finally {
      for (const h of holders) h.kill('SIGKILL');
    }
  });
});
