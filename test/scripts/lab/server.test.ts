import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { freePort, labCommand } from '../../../scripts/lab/server';

describe('the JupyterLab server command', () => {
  const args = { root: '/repo', port: 8123, token: 'abc' };

  it('listens on loopback only, with the token, on the given port and no other', () => {
    for (const frontEnd of ['jupyter-lab', 'lab-app'] as const) {
      const command = labCommand(frontEnd, args);
      assert.ok(command.includes('--ServerApp.ip=127.0.0.1'));
      assert.ok(command.includes('--ServerApp.token=abc'));
      assert.ok(command.includes('--ServerApp.port=8123') && command.includes('--ServerApp.port_retries=0'));
      assert.ok(command.includes('--ServerApp.root_dir=/repo'));
      assert.ok(command.includes('--no-browser'));
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

  it('finds a free port', async () => {
    const port = await freePort();
    assert.ok(Number.isInteger(port) && port > 0 && port < 65536);
  });
});
