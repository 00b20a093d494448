// What Linux's /proc says about a process: the liveness checks of the elastic process provider and of the embedded
// PostgreSQL's orphan detection read it the same way.
import { existsSync, readFileSync } from 'node:fs';

export interface ProcStatus {
  /** R running, S sleeping, T stopped, Z zombie (exited, not yet reaped), X dead… */
  state: string;
  ppid: number;
  /** The arguments joined by blanks; empty once an exiting process has released its memory. */
  cmdline: string;
}

/** Whether this system has a /proc to ask. */
export const hasProcfs = (): boolean => existsSync('/proc/self/stat');

/** `pid`'s state, parent and command line, or null when there is no such process. */
function procStatus(pid: number): ProcStatus | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    // "pid (comm) state ppid …": comm may hold blanks and parentheses, so the fields follow the last ')'.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid), cmdline: cmdline.replace(/\0/g, ' ').trim() };
  } catch {
    return null;
  }
}

/** `pid`'s status while it runs (or is exiting); null once it has exited (a zombie waiting to be reaped, or dead)
 *  or is not there at all. */
export function liveProcess(pid: number): ProcStatus | null {
  const s = procStatus(pid);
  return s === null || s.state === 'Z' || s.state === 'X' ? null : s;
}
