import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { HANG_MS } from '../../helpers/ceilings';

// A smoke run: every lever prints its row with both timings and their ratio (not the timings' values).
test('bench:levers prints one row per lever and call', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', '..', 'scripts', 'bench', 'benchLevers.ts'), '--seconds=0.05'], { encoding: 'utf8', timeout: HANG_MS });
  assert.equal(run.status, 0, run.stderr);
  const rows = run.stdout.split('\n').filter((l) => /^\| (lazy-fused-gradients|add-checked) \|/.test(l));
  assert.equal(rows.length, 7, run.stdout);
  for (const row of rows) assert.match(row, /\| [0-9.]+ ms \(min [0-9.]+, CPU [0-9.]+\) \| [0-9.]+ ms \(min [0-9.]+, CPU [0-9.]+\) \| [0-9.]+ \(min [0-9.]+, CPU [0-9.]+\) \|$/, row);
});
