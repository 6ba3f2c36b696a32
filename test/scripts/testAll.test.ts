import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { NEEDS, PARTS } from '../../scripts/testAll';
import { graphProblems, type Part } from '../../scripts/testGraph';

const ROOT = path.resolve(__dirname, '..', '..');
const part = (name: string): Part => ({ name, command: ['true'] });

describe('npm test (scripts/testAll.ts)', () => {
  it('runs every test:* and check:* script of package.json once, in an order that meets every need', () => {
    const scripts = Object.keys((require(path.join(ROOT, 'package.json')) as { scripts: Record<string, string> }).scripts).filter((k) => /^(test|check):/.test(k));
    const listed = PARTS.map((p) => p.name);
    assert.deepEqual(listed.filter((n) => !['systemDeps', 'build', 'native:build', 'lab:app'].includes(n)).sort(), [...scripts].sort());
    assert.deepEqual(graphProblems(PARTS, NEEDS), []);
  });

  it('starts every part that loads the library after the one build, so no two builds delete each other', () => {
    // Each of these runs `build:if-stale`, which rebuilds (and first deletes dist/) when the
    // sources changed since the last build: after `build` none is stale.
    const ends = (name: string, need: string, seen = new Set<string>()): boolean =>
      (NEEDS[name] ?? []).some((n) => n === need || (!seen.has(n) && (seen.add(n), ends(n, need, seen))));
    for (const name of ['test:unit', 'test:notebooks', 'test:jupyter', 'test:consumer', 'check:deno', 'test:classic', 'test:deno', 'test:lab']) {
      assert.ok(ends(name, 'build'), `${name} can start before the build ends`);
    }
  });
});

describe('graphProblems (the negative cases)', () => {
  const needs = { site: ['runner'], browser: ['site'] };
  it('accepts needs listed before their parts', () => {
    assert.deepEqual(graphProblems([part('runner'), part('other'), part('site'), part('browser')], needs), []);
  });

  it('names a need listed after its part or not at all, a part listed twice, and needs of no part', () => {
    assert.deepEqual(graphProblems([part('site'), part('runner'), part('browser')], needs), ['site needs runner, which is listed after it']);
    assert.deepEqual(graphProblems([part('site'), part('site')], { site: ['runner'], browser: [] }), ['site is listed twice', 'site needs runner, which is no part', 'browser has needs but is no part']);
  });
});
