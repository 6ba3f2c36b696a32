import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';

/**
 * One concept per file keeps files short: a source or script file over MAX_LINES must say why in
 * a comment that starts "Length: about N lines, because".
 */

const ROOT = join(__dirname, '..', '..');
const MAX_LINES = 400;
const REASON = /Length: about \d+ lines, because /;

/** The files over the limit that give no reason, as "path (lines)". */
export function unexplainedLongFiles(files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    const lines = text.split('\n').length;
    if (lines > MAX_LINES && !REASON.test(text)) found.push(`${file} (${lines} lines)`);
  }
  return found;
}

function sourceFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const folder of ['src', 'scripts']) {
    for (const entry of readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.(ts|js|py|sh|css)$/.test(entry.name)) continue;
      const full = join(entry.parentPath, entry.name);
      files.set(relative(ROOT, full).split(sep).join('/'), readFileSync(full, 'utf8'));
    }
  }
  return files;
}

describe(`files in src/ and scripts/ over ${MAX_LINES} lines`, () => {
  it('say why they are longer', () => {
    assert.deepEqual(unexplainedLongFiles(sourceFiles()), []);
  });

  it('the check catches a long file without a reason, and accepts one with', () => {
    const long = Array.from({ length: 450 }, (_, i) => `const x${i} = ${i};`).join('\n');
    assert.deepEqual(unexplainedLongFiles(new Map([['src/big.ts', long]])), ['src/big.ts (450 lines)']);
    const explained = `// Length: about 450 lines, because it is one table.\n${long}`;
    assert.deepEqual(unexplainedLongFiles(new Map([['src/big.ts', explained]])), []);
  });
});
