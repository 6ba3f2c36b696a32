import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

/**
 * What the consumer test (test/e2e/consumer.e2e.ts) needs around npm and node: the README's
 * programs, the tfjs versions a project is made with, commands in a clean environment, and
 * the size of an install. Kept apart so that test:unit checks the rules without npm.
 */

/** The tfjs versions a project is made with and the package must work beside: the ends of its peer range. */
export const SUPPORTED_TFJS = ['4.0.0', '4.22.0'] as const;
/** A tfjs the package refuses: npm with ERESOLVE, and forced, the import with UnsupportedTfjsVersionError. */
export const REFUSED_TFJS = '3.21.0';
/** The languages of a fenced block that is code for Node; only `js` is accepted in the README. */
const CODE_LANGUAGES = ['js', 'javascript', 'mjs', 'cjs', 'ts', 'typescript', 'jsx', 'tsx'];

/** A README program: its file name (from its first line) and its text. */
export interface Program {
  file: string;
  code: string;
}

/** A README code block that is not a complete program the consumer test can run as written. */
export class ReadmeProgramError extends Error {
  override name = 'ReadmeProgramError';
}

/**
 * The programs of a markdown page: every fenced block in a code language. Each must be a `js`
 * block whose first line is a comment naming its file, `// <name>.mjs` (an ES module) or
 * `// <name>.cjs` (CommonJS), so that a reader knows how to save and run it and the test runs
 * exactly that; anything else (a `ts` block, a `js` fragment without a name, two blocks with one
 * name) is a ReadmeProgramError. `sh`, `text` and unlabelled blocks are not programs.
 */
export function markdownPrograms(markdown: string): Program[] {
  const programs: Program[] = [];
  for (const match of markdown.matchAll(/^```([^\n`]*)\n([\s\S]*?)^```$/gm)) {
    const language = match[1].trim().split(/\s+/)[0].toLowerCase();
    if (!CODE_LANGUAGES.includes(language)) continue;
    const code = match[2];
    const firstLine = code.split('\n')[0];
    if (language !== 'js') throw new ReadmeProgramError(`a \`${language}\` block ("${firstLine}"): write README programs as \`js\`, which Node runs as written`);
    const file = /^\/\/ ([\w.-]+\.(?:mjs|cjs))\b/.exec(firstLine)?.[1];
    if (file === undefined) throw new ReadmeProgramError(`a \`js\` block whose first line is not \`// <name>.mjs\` or \`// <name>.cjs\`: "${firstLine}"`);
    if (programs.some((p) => p.file === file)) throw new ReadmeProgramError(`two programs named ${file}`);
    programs.push({ file, code });
  }
  return programs;
}

/** The lines tfjs's cpu backend prints on its first tensor in Node (its "install tfjs-node" banner). */
const TFJS_BANNER = [
  /^=+$/,
  /^Hi, looks like you are running TensorFlow\.js in Node\.js\. To speed things up dramatically, install our node backend, visit https:\/\/github\.com\/tensorflow\/tfjs-node for more details\. ?$/,
];

/**
 * What a program wrote to stderr beyond tfjs's own banner (printed by tfjs when a program uses
 * its default cpu backend, not by this package), as lines; empty when nothing else.
 */
export function unexpectedStderr(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.trim() !== '' && !TFJS_BANNER.some((re) => re.test(line)));
}

/**
 * The environment of a command in a consumer project: this process's, without what `npm run`
 * and the test runner add (`npm_*` but the registry, cache and proxy settings, `NODE_OPTIONS`,
 * the package's own `TFJS_ACCUMULATE_*`), so that it runs as in a user's shell.
 */
export function consumerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const keep = /^npm_config_(registry|cache|userconfig|globalconfig|proxy|https_proxy|noproxy|strict_ssl|cafile|ca)$/i;
  const clean = Object.fromEntries(
    Object.entries(env).filter(([key]) => !(/^npm_/i.test(key) && !keep.test(key)) && key !== 'NODE_OPTIONS' && !key.startsWith('TFJS_ACCUMULATE_') && !key.startsWith('NODE_TEST')),
  );
  // `npm run` puts this repo's node_modules/.bin first on PATH: a user's shell has none of it.
  const PATH = Object.keys(clean).find((k) => k.toUpperCase() === 'PATH');
  if (PATH !== undefined) clean[PATH] = (clean[PATH] ?? '').split(path.delimiter).filter((dir) => !/node_modules[\\/]\.bin|node-gyp-bin/.test(dir)).join(path.delimiter);
  return clean;
}

/** The outcome of a command. */
export interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/**
 * Runs a command to its end and collects its output. `timeoutSeconds` only guards against a hang
 * (the process is killed and the run fails); nothing asserts how long a command took.
 */
export function run(command: string, args: string[], options: { cwd: string; timeoutSeconds: number; env?: NodeJS.ProcessEnv }): Promise<Run> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? consumerEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      stderr += `\n[consumer test: killed after ${options.timeoutSeconds} s]`;
      child.kill('SIGKILL');
    }, options.timeoutSeconds * 1000);
    child.on('error', (e) => (stderr += `\n[consumer test: ${e.message}]`));
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, seconds: (performance.now() - t0) / 1000 });
    });
  });
}

/** A run's outcome for an assertion message: status, and the end of its output. */
export function describeRun(r: Run): string {
  const tail = (text: string) => text.trim().split('\n').slice(-25).join('\n');
  return `exit ${r.status}${r.signal ? ` (${r.signal})` : ''} after ${r.seconds.toFixed(1)} s\n--- stdout\n${tail(r.stdout)}\n--- stderr\n${tail(r.stderr)}`;
}

/** Files and bytes under a folder: apparent size, and disk use (`du`: allocated blocks). Symlinks count as links. */
export function folderSize(dir: string): { files: number; bytes: number; diskBytes: number } {
  let files = 0;
  let bytes = 0;
  let diskBytes = 0;
  const walk = (p: string) => {
    const st = fs.lstatSync(p);
    diskBytes += st.blocks * 512;
    if (st.isDirectory()) for (const entry of fs.readdirSync(p)) walk(path.join(p, entry));
    else {
      files++;
      bytes += st.size;
    }
  };
  walk(dir);
  return { files, bytes, diskBytes };
}

/** Bytes as MB (10^6), one decimal, as npm and du -h --si print them. */
export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
