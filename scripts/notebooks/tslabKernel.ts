/**
 * The runner's handle on one tslab kernel: a child process running tslabChild.ts, forked as the
 * leader of its own process group so that it and everything its cells start can be killed
 * together (see processTree.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { KERNELSPEC_NAME } from './nbformat';
import { trackKernel, untrackKernel, type Kernel, type KernelDriver, type KernelEvent } from './kernel';
import { killTree, newKernelTag, taggedEnv } from './processTree';
import type { FromChild, ToChild } from './tslabChild';

const ROOT = path.resolve(__dirname, '..', '..');

export class TslabKernel implements Kernel {
  private readonly child: ChildProcess;
  private readonly rawLog: string[] = [];
  private listener: ((event: KernelEvent) => void) | undefined;
  private readyListener: ((startupMs: number) => void) | undefined;
  private exitListener: ((why: string) => void) | undefined;
  private readonly exitedPromise: Promise<void>;
  /** In the environment of the kernel and of everything it starts, to find them all (processTree.ts). */
  readonly tag = newKernelTag();
  exited = false;

  constructor(notebookDir: string) {
    // Run the child as this file runs: as TypeScript through tsx, or compiled.
    const ext = path.extname(__filename);
    this.child = fork(path.join(__dirname, `tslabChild${ext}`), [notebookDir], {
      cwd: ROOT, // so that `--import tsx` resolves; the child changes to the notebook's folder
      execArgv: ext === '.ts' ? ['--import', 'tsx'] : [],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: taggedEnv(this.tag),
      // Its own process group: one signal reaches the kernel and whatever its cells started.
      detached: true,
    });
    // Output the child writes before tslab takes over stdout/stderr (or after a crash).
    this.child.stdout!.on('data', (b) => this.rawLog.push(String(b)));
    this.child.stderr!.on('data', (b) => this.rawLog.push(String(b)));
    this.child.on('message', (msg: FromChild) => {
      if (msg.type === 'ready') this.readyListener?.(msg.startupMs);
      else this.listener?.(msg);
    });
    trackKernel(this);
    this.exitedPromise = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exited = true;
        // Processes the cells started may outlive the kernel in its group.
        killTree(this.child.pid!, { exited: true, tag: this.tag });
        untrackKernel(this);
        this.exitListener?.(`the kernel process exited (${signal ?? `code ${code}`})`);
        resolve();
      });
    });
  }

  /** The kernel's process id (tests check it is gone after the runner is). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  ready(timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the kernel did not start within ${timeoutMs / 1000} s`)), timeoutMs);
      this.readyListener = (startupMs) => {
        clearTimeout(timer);
        resolve(startupMs);
      };
      this.onExit((why) => {
        clearTimeout(timer);
        reject(new Error(`${why} while starting:\n${this.log()}`));
      });
    });
  }

  execute(code: string, cell: number): void {
    this.send({ type: 'execute', code, cell });
  }

  onEvent(fn: (event: KernelEvent) => void): void {
    this.listener = fn;
  }

  onExit(fn: (why: string) => void): void {
    this.exitListener = fn;
  }

  async shutdown(graceMs: number): Promise<void> {
    if (this.exited) return;
    this.exitListener = undefined;
    this.send({ type: 'shutdown' });
    // A well-behaved child exits at once; one stuck in user code is killed.
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exitedPromise;
    clearTimeout(timer);
  }

  kill(): void {
    if (!this.exited) killTree(this.child.pid!, { exited: false, tag: this.tag });
  }

  log(): string {
    return this.rawLog.join('');
  }

  private send(msg: ToChild): void {
    // A child that died (a cell's timeout killed it, or it crashed) can still look connected
    // until its exit is processed; the write then fails with EPIPE. With a callback the failure
    // comes here instead of as an 'error' event nobody handles, which crashed the runner (once,
    // on a loaded machine); the exit event reports why the kernel is gone.
    if (this.child.connected) this.child.send(msg, (error) => error && this.rawLog.push(`(not sent to the kernel: ${error.message})\n`));
  }
}

/** The tslab kernel, for notebooks whose kernelspec is `tslab`. */
export const TSLAB: KernelDriver = {
  kernelspecName: KERNELSPEC_NAME,
  start: (notebookDir) => new TslabKernel(notebookDir),
};
