import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { NEEDS, STAGES } from '../../scripts/testAll';
import { orderProblems, type Part, type Stage } from '../../scripts/testLanes';

const ROOT = path.resolve(__dirname, '..', '..');
const part = (name: string): Part => ({ name, command: ['true'] });

describe('npm test (scripts/testAll.ts)', () => {
  it('runs every test:* and check:* script of package.json once, in an order that meets every need', () => {
    const scripts = Object.keys((require(path.join(ROOT, 'package.json')) as { scripts: Record<string, string> }).scripts).filter((k) => /^(test|check):/.test(k));
    const listed = STAGES.flat(2).map((p) => p.name);
    assert.deepEqual([...listed].filter((n) => n !== 'systemDeps' && n !== 'native:build').sort(), [...scripts].sort());
    assert.deepEqual(orderProblems(STAGES, NEEDS), []);
  });

  it('keeps test:unit in a stage of its own: it keeps both cores busy, and the others need its build', () => {
    const stage = STAGES.find((s) => s.flat().some((p) => p.name === 'test:unit'))!;
    assert.deepEqual(stage.flat().map((p) => p.name), ['test:unit']);
  });
});

describe('orderProblems (the negative cases)', () => {
  const needs = { site: ['runner'], browser: ['site'] };
  it('accepts a need met earlier in the same lane or in an earlier stage', () => {
    const stages: Stage[] = [[[part('runner'), part('site')], [part('other')]], [[part('browser')]]];
    assert.deepEqual(orderProblems(stages, needs), []);
  });

  it('names a need that runs beside its part, after it, or nowhere, and a part listed twice', () => {
    const beside: Stage[] = [[[part('runner')], [part('site')]], [[part('browser')]]];
    assert.deepEqual(orderProblems(beside, needs), ['site needs runner done before it starts, but runner runs beside or after it in the same stage']);
    const later: Stage[] = [[[part('browser')]], [[part('runner'), part('site')]]];
    assert.deepEqual(orderProblems(later, needs), ['browser needs site done before it starts, but site runs in a later stage']);
    const missing: Stage[] = [[[part('site'), part('site')]]];
    assert.deepEqual(orderProblems(missing, { site: ['runner'], browser: [] }), ['site is listed twice', 'site needs runner, which is in no stage', 'browser has needs but is in no stage']);
  });
});
