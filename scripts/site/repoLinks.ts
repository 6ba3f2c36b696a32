/**
 * Where a relative link written in the repository goes on the site. Notebooks and docs link as
 * files in the repository do (`../docs/guarantees.md#limits` from `notebooks/`,
 * `../../docs/…` from `notebooks/zh/`, `../test/helpers/x.ts` from `docs/`); copied into the
 * site as they are, those links leave the site and break. Each one is resolved against the
 * file it was written in, then:
 *
 * - a file the site renders (a notebook, a page of docs/) → its page, relative to the page
 *   being written, `#fragment` kept; docs pages exist once per edition, so a Chinese page
 *   reaches the Chinese edition's copy;
 * - any other file of the repository → its page in the repository when package.json names one
 *   (packageInfo.ts), else its path as code text: a reader can find it in the package or a
 *   clone, and no dead link is written;
 * - anything else (a file that does not exist, a path out of the repository) is left as
 *   written, so that the site's link check (linkCheck.ts) reports it.
 */
import * as path from 'node:path';
import type MarkdownIt from 'markdown-it';
import type { Repository } from './packageInfo';

/** A markdown-it token (its type module is ESM-only; this project compiles to CommonJS). */
type Token = ReturnType<MarkdownIt['parse']>[number];

/** What the site holds and where the repository is, shared by every page's links. */
export interface SiteMap {
  /** Repository path → site path of every rendered notebook, e.g. `notebooks/zh/03-x.ipynb` → `zh/03-x.html`. */
  notebooks: ReadonlyMap<string, string>;
  /** The docs/ pages the site renders, by file name (`guarantees.md`); each edition has a copy in its `docs/`. */
  docs: ReadonlySet<string>;
  /** Whether a repository path is a file (`'file'`), a folder (`'directory'`) or nothing. */
  stat: (repoPath: string) => 'file' | 'directory' | null;
  repository: Repository | null;
}

/** The page a link is written on. */
export interface LinkContext {
  /** The file the text comes from, from the repository's root: `notebooks/zh/03-x.ipynb`, `docs/testing.md`. */
  repoPath: string;
  /** The page being written, from the site's root: `zh/03-x.html`, `zh/docs/testing.html`. */
  sitePath: string;
  /** The page's edition folder in the site: `''` or `zh/`. */
  editionDir: string;
  map: SiteMap;
}

/** What a link becomes. */
export type LinkTarget =
  | { kind: 'site'; href: string }
  | { kind: 'repository'; href: string }
  /** Shown as the repository path in code text, not as a link. */
  | { kind: 'code'; repoPath: string }
  | { kind: 'unchanged' };

/** A link with a scheme (`https:`, `mailto:`), protocol-relative, root-absolute or a bare `#fragment` is not a repository path. */
const isRepositoryRelative = (href: string): boolean => href !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('/') && !href.startsWith('#');

/** Resolves one href written in `ctx.repoPath`. */
export function resolveRepoLink(href: string, ctx: LinkContext): LinkTarget {
  if (!isRepositoryRelative(href)) return { kind: 'unchanged' };
  const hash = href.indexOf('#');
  const rawPath = (hash < 0 ? href : href.slice(0, hash)).replace(/\?.*$/, '');
  const fragment = hash < 0 ? '' : href.slice(hash);
  let decoded: string;
  try {
    decoded = decodeURI(rawPath);
  } catch {
    return { kind: 'unchanged' };
  }
  const repoPath = path.posix.normalize(path.posix.join(path.posix.dirname(ctx.repoPath), decoded)).replace(/\/$/, '');
  if (repoPath === '..' || repoPath.startsWith('../') || repoPath === '.') return { kind: 'unchanged' };
  const sitePage = ctx.map.notebooks.get(repoPath) ?? (/^docs\/[^/]+\.md$/.test(repoPath) && ctx.map.docs.has(repoPath.slice(5)) ? `${ctx.editionDir}docs/${repoPath.slice(5, -3)}.html` : undefined);
  if (sitePage !== undefined) {
    const rel = path.posix.relative(path.posix.dirname(ctx.sitePath), sitePage);
    return { kind: 'site', href: rel.split('/').map((s) => (s === '..' ? s : encodeURIComponent(s))).join('/') + fragment };
  }
  const kind = ctx.map.stat(repoPath);
  if (kind === null) return { kind: 'unchanged' };
  const url = ctx.map.repository?.fileUrl(repoPath, kind === 'directory');
  return url ? { kind: 'repository', href: url + fragment } : { kind: 'code', repoPath };
}

/** markdown-it's render env, as far as this rule reads it. */
interface LinksEnv {
  links?: LinkContext;
}

/** Rewrites a run of inline tokens; returns the new run. */
function rewriteInline(children: Token[], ctx: LinkContext): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < children.length; i++) {
    const token = children[i];
    const href = token.type === 'link_open' ? token.attrGet('href') : null;
    const target = href === null ? ({ kind: 'unchanged' } as const) : resolveRepoLink(href, ctx);
    if (target.kind === 'site' || target.kind === 'repository') token.attrSet('href', target.href);
    if (target.kind !== 'code') {
      out.push(token);
      continue;
    }
    // The link's text stays and reads as code: a code span alone as it is, other text inside <code>.
    let depth = 1;
    let close = i + 1;
    for (; close < children.length; close++) {
      if (children[close].type === 'link_open') depth++;
      if (children[close].type === 'link_close' && --depth === 0) break;
    }
    const inner = children.slice(i + 1, close);
    const alreadyCode = inner.length === 1 && inner[0].type === 'code_inline';
    if (!alreadyCode) {
      token.type = 'repo_path_open';
      token.tag = 'code';
      token.attrs = [['class', 'repo-path'], ['title', target.repoPath]];
      out.push(token);
    }
    out.push(...inner);
    if (!alreadyCode && close < children.length) {
      const end = children[close];
      end.type = 'repo_path_close';
      end.tag = 'code';
      out.push(end);
    }
    i = close;
  }
  return out;
}

/**
 * The markdown-it rule: rewrites every link of a page rendered with `env.links`. Without it (a
 * fragment rendered outside any page) a link to a sibling notebook (`02-model.ipynb#setup`)
 * still becomes its page, the only repository link such text is known to use.
 */
export function repoLinksPlugin(md: MarkdownIt): void {
  md.core.ruler.push('repo_links', (state) => {
    const ctx = (state.env as LinksEnv | undefined)?.links;
    for (const block of state.tokens) {
      if (!block.children) continue;
      if (ctx) {
        block.children = rewriteInline(block.children, ctx);
        continue;
      }
      for (const token of block.children) {
        const href = token.type === 'link_open' ? token.attrGet('href') : null;
        if (href && /^[^:/?#]+\.ipynb(#.*)?$/.test(href)) token.attrSet('href', href.replace(/\.ipynb(?=#|$)/, '.html'));
      }
    }
  });
}
