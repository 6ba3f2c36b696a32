/**
 * How `npm test` runs its parts: stages one after the other, and within a stage its lanes side by
 * side, each lane's parts in order. A part that fails does not stop the parts after it, so one run
 * shows every failure.
 *
 * Why lanes: most parts after `test:unit` keep one core busy (one kernel, one browser page), and
 * CI has two; a stage of two lanes uses both.
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

/** A stage: lanes run side by side; each lane is a list of parts run in order. */
export type Stage = Part[][];

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

/** Options of {@link runStages}. */
export interface RunStagesArgs {
  /** The working directory of every command. */
  cwd: string;
  /** Where the live output goes, a line at a time. Default: this process's stdout. */
  write?: (text: string) => void;
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

/** Runs one part with its output shown live (prefixed with its name when `prefixed`) and kept, to read its counts. */
function runPart(part: Part, args: Required<RunStagesArgs>, prefixed: boolean): Promise<PartResult> {
  const t0 = performance.now();
  const timesFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'npm-test-part-')), 'times');
  const out = lineWriter(prefixed ? `[${part.name}] ` : '', args.write);
  out.push(`\n===== ${part.name}: ${part.command.join(' ')}\n\n`);
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
      out.push(`\n===== ${part.name}: ${ok ? 'ok' : `FAILED (exit ${code})`} in ${seconds.toFixed(1)} s${cpu}\n`);
      out.end();
      resolve({ name: part.name, ok, code, seconds, cpuSeconds, passed: c?.passed ?? (ok ? 1 : 0), failed: c ? Math.max(c.failed, ok ? 0 : 1) : ok ? 0 : 1, failures: failureReport(output) });
    };
    const command = withTimes(part.command);
    const child = spawn(command[0], command.slice(1), { cwd: args.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...(part.env ?? {}), TIMES_FILE: timesFile } });
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

/**
 * Runs the stages in order and returns every part's result, in the order the parts are listed
 * (stage by stage, lane by lane). Lines of a stage with more than one lane carry their part's
 * name.
 */
export async function runStages(stages: Stage[], args: RunStagesArgs): Promise<PartResult[]> {
  const full: Required<RunStagesArgs> = { cwd: args.cwd, write: args.write ?? ((t) => void process.stdout.write(t)) };
  const results: PartResult[] = [];
  for (const stage of stages) {
    const prefixed = stage.length > 1;
    const lanes = await Promise.all(
      stage.map(async (lane) => {
        const done: PartResult[] = [];
        for (const part of lane) done.push(await runPart(part, full, prefixed));
        return done;
      }),
    );
    results.push(...lanes.flat());
  }
  return results;
}

/**
 * What is wrong with an order of `stages` given what each part needs done before it starts
 * (`needs`: part name → names): a need is met only by a part of an earlier stage or one earlier in
 * the same lane, since lanes of one stage run side by side. Also a part listed twice, and a need
 * that is no part at all. Empty when the order is sound.
 */
export function orderProblems(stages: Stage[], needs: Record<string, string[]>): string[] {
  const problems: string[] = [];
  const where = new Map<string, { stage: number; lane: number; index: number }>();
  stages.forEach((stage, s) =>
    stage.forEach((lane, l) =>
      lane.forEach((part, i) => {
        if (where.has(part.name)) problems.push(`${part.name} is listed twice`);
        else where.set(part.name, { stage: s, lane: l, index: i });
      }),
    ),
  );
  for (const [name, required] of Object.entries(needs)) {
    const at = where.get(name);
    if (!at) {
      problems.push(`${name} has needs but is in no stage`);
      continue;
    }
    for (const need of required) {
      const before = where.get(need);
      if (!before) problems.push(`${name} needs ${need}, which is in no stage`);
      else if (!(before.stage < at.stage || (before.stage === at.stage && before.lane === at.lane && before.index < at.index))) {
        problems.push(`${name} needs ${need} done before it starts, but ${need} runs ${before.stage === at.stage ? 'beside or after it in the same stage' : 'in a later stage'}`);
      }
    }
  }
  return problems;
}
