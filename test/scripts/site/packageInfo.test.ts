import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { getCodeSection, installCommand, PackageInfoError, parseRepository, readPackageInfo, type PackageInfo } from '../../../scripts/site/packageInfo';

const ROOT = path.join(__dirname, '..', '..', '..');

describe('parseRepository', () => {
  it("reads npm's spellings of a GitHub repository, and links its files and folders on the default branch", () => {
    for (const spec of ['o/r', 'github:o/r', 'https://github.com/o/r', 'git+https://github.com/o/r.git', 'git://github.com/o/r.git', 'git@github.com:o/r.git', { type: 'git', url: 'git+ssh://git@github.com/o/r.git' }]) {
      const repo = parseRepository(spec);
      assert.equal(repo?.url, 'https://github.com/o/r', JSON.stringify(spec));
    }
    const repo = parseRepository({ url: 'https://github.com/o/r.git', directory: 'packages/lib/' })!;
    assert.equal(repo.fileUrl('test/helpers/x y.ts', false), 'https://github.com/o/r/blob/HEAD/packages/lib/test/helpers/x%20y.ts');
    assert.equal(repo.fileUrl('lab', true), 'https://github.com/o/r/tree/HEAD/packages/lib/lab');
    assert.equal(parseRepository('gitlab:o/r')?.fileUrl('a.ts', false), 'https://gitlab.com/o/r/-/blob/HEAD/a.ts');
  });

  it('links only the repository page on a host whose file URLs are not known', () => {
    const repo = parseRepository('https://git.example.org/o/r.git')!;
    assert.equal(repo.url, 'https://git.example.org/o/r');
    assert.equal(repo.fileUrl('a.ts', false), null);
  });

  it('gives none for an absent field and refuses one that names no repository, saying what is accepted', () => {
    assert.equal(parseRepository(undefined), null);
    assert.throws(() => parseRepository('not a repository'), (e: unknown) => e instanceof PackageInfoError && /names no repository; accepted: "owner\/name"/.test(e.message));
    assert.throws(() => parseRepository({ type: 'git' }), PackageInfoError);
  });
});

describe('readPackageInfo', () => {
  it("reads this project's package.json: its name, the tfjs peer range and whether it names a repository", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; peerDependencies: Record<string, string>; repository?: unknown };
    const info = readPackageInfo(path.join(ROOT, 'package.json'));
    assert.equal(info.name, pkg.name);
    assert.equal(info.tfjsRange, pkg.peerDependencies['@tensorflow/tfjs']);
    assert.equal(info.repository === null, pkg.repository === undefined);
    assert.equal(installCommand(info), `npm install ${pkg.name} @tensorflow/tfjs`);
  });

  it('refuses a package.json without a name or a tfjs peer', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'packageInfo-test-'));
    try {
      fs.writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ peerDependencies: { '@tensorflow/tfjs': '^4.0.0' } }));
      assert.throws(() => readPackageInfo(path.join(dir, 'a.json')), /"name" must be the package's name/);
      fs.writeFileSync(path.join(dir, 'b.json'), JSON.stringify({ name: 'x' }));
      assert.throws(() => readPackageInfo(path.join(dir, 'b.json')), /"peerDependencies" must name @tensorflow\/tfjs/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('getCodeSection', () => {
  const info: PackageInfo = { name: 'pkg-<x>', tfjsRange: '^4.0.0', repository: parseRepository('o/r') };

  it('names the package, its tfjs peer and the install line, and links the repository', () => {
    const en = getCodeSection(info, 'en').value;
    assert.match(en, /<h2 id="get-the-code">Get the code<\/h2>/);
    assert.match(en, /npm package <code>pkg-&lt;x&gt;<\/code>/);
    assert.match(en, /\(<code>@tensorflow\/tfjs<\/code> <code>\^4\.0\.0<\/code>\)/);
    assert.match(en, /<p class="install"><code>npm install pkg-&lt;x&gt; @tensorflow\/tfjs<\/code><\/p>/);
    assert.match(en, /<a href="https:\/\/github.com\/o\/r">https:\/\/github.com\/o\/r<\/a>/);
  });

  it('says it in Chinese in the Chinese edition, and names no repository when package.json has none', () => {
    const zh = getCodeSection({ ...info, repository: null }, 'zh-CN').value;
    assert.match(zh, /<h2 id="get-the-code">获取代码<\/h2>/);
    assert.match(zh, /npm 包 <code>pkg-&lt;x&gt;<\/code>/);
    assert.match(zh, /npm install pkg-&lt;x&gt; @tensorflow\/tfjs/);
    assert.doesNotMatch(zh, /<a /);
    assert.match(zh, /下载/);
  });
});
