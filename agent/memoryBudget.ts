// The memory budget admission control hands out: the container's memory limit (cgroup v2, else v1), else host RAM,
// minus MEMORY_HEADROOM_FRACTION held back for Node, the result server and DuckDB's own overhead.
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';

const CGROUP_FILES = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'];

// cgroup v1 reports "no limit" as a huge number close to 2^63; anything above host RAM means no effective limit.
export function containerMemoryLimitBytes(files: readonly string[] = CGROUP_FILES, hostBytes = totalmem()): number | null {
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch {
      continue;
    }
    if (text === 'max') return null;
    const value = Number(text);
    if (Number.isFinite(value) && value > 0 && value < hostBytes) return value;
    return null;
  }
  return null;
}

export interface MemoryBudget {
  readonly sourceBytes: number;
  readonly source: 'cgroup' | 'host';
  readonly budgetBytes: number;
}

export function memoryBudget(headroomFraction: number): MemoryBudget {
  const limit = containerMemoryLimitBytes();
  const sourceBytes = limit ?? totalmem();
  return {
    sourceBytes,
    source: limit === null ? 'host' : 'cgroup',
    budgetBytes: Math.floor(sourceBytes * (1 - headroomFraction)),
  };
}
