/**
 * What the site tells a reader about getting the code, read from the project's package.json: the
 * package's name, the TensorFlow.js peer it installs beside, and the repository when the
 * package names one. The repository also decides what a link to a source file becomes on the
 * site (repoLinks.ts): a link into the repository, or, with none named, the path as code text;
 * a relative link to `../src/x.ts` would point outside the site.
 */
import * as fs from 'node:fs';
import { html, type SafeHtml } from './html';
import type { PageLang } from './model';
import { fillHtml, ui } from './strings';

/** The peer every install needs: the library runs on the project's own tfjs. */
export const TFJS_PEER = '@tensorflow/tfjs';

/** Where the repository is browsed. */
export interface Repository {
  /** The repository's web page, e.g. `https://github.com/o/r`. */
  url: string;
  /**
   * The web page of one of its files or folders (a path from the repository's root), or null
   * when the host's file URLs are not known (only the repository page is linked then).
   */
  fileUrl: (repoPath: string, isDirectory: boolean) => string | null;
}

/** What package.json says about getting the code. */
export interface PackageInfo {
  name: string;
  /** The `@tensorflow/tfjs` peer range, e.g. `^4.0.0`. */
  tfjsRange: string;
  repository: Repository | null;
}

/** A package.json the site cannot describe the code from. */
export class PackageInfoError extends Error {
  override name = 'PackageInfoError';
}

/** Hosts whose file pages have a known shape: `<repo>/<tree-or-blob>/HEAD/<path>` (HEAD: the default branch). */
const FILE_PAGES: Record<string, { blob: string; tree: string }> = {
  'github.com': { blob: 'blob/HEAD', tree: 'tree/HEAD' },
  'gitlab.com': { blob: '-/blob/HEAD', tree: '-/tree/HEAD' },
};

/**
 * The repository named by package.json's `repository` field, in any of npm's spellings:
 * `"o/r"` and `"github:o/r"` (GitHub), `"gitlab:o/r"`, a URL (`git+https://…/r.git`,
 * `git://…`, `git@host:o/r.git`), or `{ "url": …, "directory": … }`. Null when the field is
 * absent; an error when it is present but names no repository the site can link.
 */
export function parseRepository(field: unknown): Repository | null {
  if (field === undefined || field === null) return null;
  const spec = typeof field === 'string' ? field : typeof field === 'object' && typeof (field as { url?: unknown }).url === 'string' ? (field as { url: string }).url : null;
  const directory = typeof field === 'object' && typeof (field as { directory?: unknown }).directory === 'string' ? (field as { directory: string }).directory.replace(/^\/+|\/+$/g, '') : '';
  if (spec === null) throw new PackageInfoError(`package.json: "repository" must be a string or { "url": string }; got ${JSON.stringify(field)}.`);
  let url: string | null = null;
  const short = /^(?:(github|gitlab|bitbucket):)?([\w.-]+)\/([\w.-]+)$/.exec(spec);
  if (short) url = `https://${short[1] ?? 'github'}.${short[1] === 'bitbucket' ? 'org' : 'com'}/${short[2]}/${short[3]}`;
  else {
    const scp = /^(?:git\+)?(?:ssh:\/\/)?git@([\w.-]+)[:/](.+)$/.exec(spec);
    const web = /^(?:git\+)?(?:https?|git):\/\/(?:[^@/]+@)?([\w.-]+)\/(.+)$/.exec(spec);
    const m = scp ?? web;
    if (m) url = `https://${m[1]}/${m[2]}`;
  }
  if (url === null) {
    throw new PackageInfoError(`package.json: "repository" ${JSON.stringify(spec)} names no repository; accepted: "owner/name", "github:owner/name", "gitlab:owner/name", or an https, git or git@ URL.`);
  }
  url = url.replace(/\.git$/, '').replace(/\/+$/, '');
  const host = new URL(url).hostname;
  const pages = FILE_PAGES[host];
  const root = directory ? `${directory}/` : '';
  return {
    url,
    fileUrl: (repoPath, isDirectory) => (pages ? `${url}/${isDirectory ? pages.tree : pages.blob}/${`${root}${repoPath}`.split('/').map(encodeURIComponent).join('/')}` : null),
  };
}

/** Reads package.json: the package's name, its tfjs peer range and its repository. */
export function readPackageInfo(packageJsonFile: string): PackageInfo {
  const pkg = JSON.parse(fs.readFileSync(packageJsonFile, 'utf8')) as { name?: unknown; peerDependencies?: Record<string, unknown>; repository?: unknown };
  if (typeof pkg.name !== 'string' || pkg.name === '') throw new PackageInfoError(`${packageJsonFile}: "name" must be the package's name; the site's install line needs it.`);
  const range = pkg.peerDependencies?.[TFJS_PEER];
  // The site tells readers which tfjs to install beside the library; a missing peer would leave them guessing.
  if (typeof range !== 'string') throw new PackageInfoError(`${packageJsonFile}: "peerDependencies" must name ${TFJS_PEER} with a version range; the site's install line states it.`);
  return { name: pkg.name, tfjsRange: range, repository: parseRepository(pkg.repository) };
}

/** The install line the site shows: the package with its tfjs peer, as the README's. */
export function installCommand(info: PackageInfo): string {
  return info.name === TFJS_PEER ? `npm install ${TFJS_PEER}` : `npm install ${info.name} ${TFJS_PEER}`;
}

/** The index's "Get the code" section, in the edition's words. */
export function getCodeSection(info: PackageInfo, lang: PageLang): SafeHtml {
  const t = ui(lang);
  const where = info.repository ? fillHtml(t.repository, { repo: html`<a href="${info.repository.url}">${info.repository.url}</a>` }) : fillHtml(t.noRepository, {});
  return html`<h2 id="get-the-code">${t.getCode}</h2>
<p>${fillHtml(t.install, { name: html`<code>${info.name}</code>`, peer: html`<code>${TFJS_PEER}</code>`, range: html`<code>${info.tfjsRange}</code>` })}</p>
<p class="install"><code>${installCommand(info)}</code></p>
<p>${where}</p>
`;
}
