import * as fs from 'node:fs';

// Where a secret would be in plain view on this machine: every process's command line
// (/proc/PID/cmdline, readable by every local user) and environment (/proc/PID/environ, readable
// by the process's user and root; a kernel and whatever a notebook starts inherit it).

/** A process whose command line or environment holds the secret. */
export interface Exposure {
  pid: number;
  where: 'cmdline' | 'environ';
  /** The process's command line, the secret masked, to name it in a report. */
  command: string;
}

/** Every process on the machine whose cmdline or environ contains `secret` (those this user can read). */
export function processesHolding(secret: string): Exposure[] {
  const found: Exposure[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    for (const where of ['cmdline', 'environ'] as const) {
      let text: string;
      try {
        text = fs.readFileSync(`/proc/${entry}/${where}`, 'latin1');
      } catch {
        continue; // gone, or another user's environment
      }
      if (!text.includes(secret)) continue;
      let command = '';
      try {
        command = fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0').join(' ').trim();
      } catch {
        // gone since
      }
      found.push({ pid: Number(entry), where, command: command.split(secret).join('<secret>').slice(0, 300) });
    }
  }
  return found;
}

/** How many processes the scan could read; a scan that read none would find nothing anywhere. */
export function readableProcesses(): number {
  return fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e) && fs.existsSync(`/proc/${e}/cmdline`)).length;
}
