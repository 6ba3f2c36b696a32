/**
 * How `npm test` runs its parts: each part starts as soon as every part it needs has ended and a
 * slot is free, the first ready part in the list first. A part that fails does not stop the parts
 * after it (they run on what it left), so one run shows every failure.
 *
 * Why a graph and not stages: the parts differ in length by ten times, and a stage waits for its
 * longest part. With stages, test:unit (10 min) ran alone on a 2-core machine while using 1.2
 * cores, and the front ends waited for it although they need only the runner's notebooks. Here
 * every part waits only for what it reads.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

/** One part of `npm test`: a command, and the environment it adds. */
export interface Part {
  name: string;
  command: string[];
  env?: Record<string, string>;
}


export interface PartResult {
  name: string;
  ok: boolean;
  /** Exit code of the command (1 when it could not be started). */
  code: number;
  /** Wall time of the part alone, from its start to its end. */
  seconds: number;
  /**
   * CPU seconds of the part's processes (user + system, every process it waited for: browsers,
   * servers and kernels included), from bash's `times`; null when bash could not report them.
   */
  cpuSeconds: number | null;
  /** Tests counted by Node's test runner in this part; a part without tests counts as one. */
  passed: number;
  failed: number;
  /** The test runner's "failing tests" report of this part, without stack frames (see failureReport). */
  failures: string[];
}

/** Options of {@link runGraph}. */
export interface RunGraphArgs {
  /** The working directory of every command. */
  cwd: string;
  /** Where the live output goes, a line at a time, each line prefixed with its part's name. Default: this process's stdout. */
  write?: (text: string) => void;
  /**
   * Parts running at once. Default 4: on CI's 2 cores the front ends wait for kernels, pages
   * and servers much of the time. With 3, an idle run kept both cores busy while the runner and
   * test:unit ran (1.9 cores), then only 1.1 on average once the front ends were left (run J,
   * docs/testing.md), and the longest front end started last.
   */
  slots?: number;
}

/** Sums Node test runner totals ("ℹ pass 12" from the spec reporter, "# pass 12" from TAP). */
export function counts(output: string): { passed: number; failed: number } | undefined {
  const sum = (word: string): number => [...output.matchAll(new RegExp(`^(?:ℹ|#) ${word} (\\d+)$`, 'gm'))].reduce((s, m) => s + Number(m[1]), 0);
  const found = /^(?:ℹ|#) tests \d+$/m.test(output);
  return found ? { passed: sum('pass'), failed: sum('fail') + sum('cancelled') } : undefined;
}

/** The most lines of one part's failure report kept for the summary. */
export const MAX_FAILURE_LINES = 80;

/**
 * The spec reporter's last "✖ failing tests:" section of `output`, without stack frames ("at …"
 * lines) and blank lines, at most MAX_FAILURE_LINES lines; empty when there is none. A long run's
 * log is often read from its end only, and this section is what says why a test failed.
 */
export function failureReport(output: string): string[] {
  const start = output.lastIndexOf('\n✖ failing tests:');
  if (start < 0) return [];
  const lines = output
    .slice(start + 1)
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^\s+at /.test(l));
  return lines.length > MAX_FAILURE_LINES ? [...lines.slice(0, MAX_FAILURE_LINES), `… ${lines.length - MAX_FAILURE_LINES} more lines in the part's output above`] : lines;
}

/**
 * Splits a stream into whole lines, each passed on with `prefix`, so that two lanes' output
 * interleaves by line, never inside one; `end` passes on a last line without its newline.
 */
export function lineWriter(prefix: string, write: (text: string) => void): { push: (chunk: string) => void; end: () => void } {
  let pending = '';
  return {
    push(chunk) {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() as string;
      for (const line of lines) write(`${prefix}${line}\n`);
    },
    end() {
      if (pending !== '') write(`${prefix}${pending}\n`);
      pending = '';
    },
  };
}

/** Seconds in one of bash's `times` figures ("1m2.500s"). */
const timesSeconds = (figure: string): number => {
  const m = /^(\d+)m([\d.]+)s$/.exec(figure);
  return m ? Number(m[1]) * 60 + Number(m[2]) : Number.NaN;
};

/** The children's user + system seconds from bash's `times` output (its second line), or null. */
export function childCpuSeconds(times: string): number | null {
  const line = times.trim().split('\n')[1];
  const figures = line?.trim().split(/\s+/) ?? [];
  if (figures.length !== 2) return null;
  const total = timesSeconds(figures[0]) + timesSeconds(figures[1]);
  return Number.isFinite(total) ? total : null;
}

/**
 * The command run by bash, which writes its `times` to $TIMES_FILE when the command ends: Node
 * does not report a child's resource use, and bash counts every process it waited for.
 */
const withTimes = (command: string[]): string[] => ['bash', '-c', '"$@"; code=$?; times > "$TIMES_FILE"; exit $code', 'part', ...command];

/** The time of day, UTC, to the second. */
const clock = (): string => `${new Date().toISOString().slice(11, 19)} UTC`;

/** Runs one part with its output shown live, each line prefixed with its name, and kept to read its counts. */
function runPart(part: Part, write: (text: string) => void, cwd: string): Promise<PartResult> {
  const t0 = performance.now();
  const timesFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'npm-test-part-')), 'times');
  const out = lineWriter(`[${part.name}] `, write);
  // The clock on the first and last line: a log's timeline of which parts ran side by side.
  out.push(`\n===== ${part.name}: ${part.command.join(' ')} (from ${clock()})\n\n`);
  return new Promise((resolve) => {
    let output = '';
    let settled = false;
    const finish = (code: number): void => {
      if (settled) return;
      settled = true;
      out.end();
      const seconds = (performance.now() - t0) / 1000;
      const c = counts(output);
      const ok = code === 0;
      const cpuSeconds = fs.existsSync(timesFile) ? childCpuSeconds(fs.readFileSync(timesFile, 'utf8')) : null;
      fs.rmSync(path.dirname(timesFile), { recursive: true, force: true });
      const cpu = cpuSeconds === null ? '' : `, ${cpuSeconds.toFixed(1)} s of CPU`;
      out.push(`\n===== ${part.name}: ${ok ? 'ok' : `FAILED (exit ${code})`} in ${seconds.toFixed(1)} s${cpu} (until ${clock()})\n`);
      out.end();
      resolve({ name: part.name, ok, code, seconds, cpuSeconds, passed: c?.passed ?? (ok ? 1 : 0), failed: c ? Math.max(c.failed, ok ? 0 : 1) : ok ? 0 : 1, failures: failureReport(output) });
    };
    const command = withTimes(part.command);
    const child = spawn(command[0], command.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...(part.env ?? {}), TIMES_FILE: timesFile } });
    // stdout and stderr go through one line writer, as a terminal would show them.
    const take = (b: Buffer): void => {
      const text = b.toString();
      output += text;
      out.push(text);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (e) => {
      output += `${e.message}\n`;
      out.push(`${part.name} could not start: ${e.message}\n`);
      finish(1);
    });
    child.on('close', (code) => finish(code ?? 1));
  });
}

/** A need named by no part, or listed after the part that needs it. */
export class PartOrderError extends Error {
  override name = 'PartOrderError';
}

/**
 * What is wrong with a list of parts given what each needs ended before it starts (`needs`: part
 * name → names): a part listed twice, a need that is no part, and a need listed after its part.
 * The last rule makes the list an order in which every part could run alone, so the graph has no
 * cycle and a reader sees the order in one place. Empty when the list is sound.
 */
export function graphProblems(parts: Part[], needs: Record<string, string[]>): string[] {
  const problems: string[] = [];
  const index = new Map<string, number>();
  parts.forEach((p, i) => {
    if (index.has(p.name)) problems.push(`${p.name} is listed twice`);
    else index.set(p.name, i);
  });
  for (const [name, required] of Object.entries(needs)) {
    const at = index.get(name);
    if (at === undefined) {
      problems.push(`${name} has needs but is no part`);
      continue;
    }
    for (const need of required) {
      const before = index.get(need);
      if (before === undefined) problems.push(`${name} needs ${need}, which is no part`);
      else if (before > at) problems.push(`${name} needs ${need}, which is listed after it`);
    }
  }
  return problems;
}

/**
 * Runs every part, each once every part it needs has ended (passed or failed) and one of the
 * `slots` is free; when several are ready, the one listed first starts. Returns every part's
 * result in the order the parts are listed. Throws {@link PartOrderError} before running
 * anything if {@link graphProblems} finds a problem.
 */
export async function runGraph(parts: Part[], needs: Record<string, string[]>, args: RunGraphArgs): Promise<PartResult[]> {
  const problems = graphProblems(parts, needs);
  if (problems.length > 0) throw new PartOrderError(`the parts of npm test break their order:\n${problems.join('\n')}`);
  const slots = args.slots ?? 4;
  if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`runGraph: slots must be an integer >= 1, got ${String(slots)}`);
  const write = args.write ?? ((t: string) => void process.stdout.write(t));
  const results = new Map<string, PartResult>();
  const started = new Set<string>();
  return new Promise((resolve) => {
    let running = 0;
    const next = (): void => {
      for (const part of parts) {
        if (running >= slots) break;
        if (started.has(part.name) || !(needs[part.name] ?? []).every((n) => results.has(n))) continue;
        started.add(part.name);
        running++;
        void runPart(part, write, args.cwd).then((r) => {
          results.set(part.name, r);
          running--;
          if (results.size === parts.length) resolve(parts.map((p) => results.get(p.name) as PartResult));
          else next();
        });
      }
    };
    if (parts.length === 0) resolve([]);
    else next();
  });
}
