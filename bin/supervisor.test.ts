import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../runtime/logger.ts';
import { Supervisor } from './supervisor.ts';

// A stand-in for `eider`: each start appends a line to a file, then runs for a while or dies at once.
const dir = mkdtempSync(join(tmpdir(), 'eider-sup-'));
const script = join(dir, 'part.mjs');
writeFileSync(
  script,
  `import { appendFileSync } from 'node:fs';
   appendFileSync(process.env.STARTS, process.argv[2] + '\\n');
   if (process.argv[2] === 'crash') process.exit(3);
   if (process.argv[2] === 'misconfigured') process.exit(2);
   setInterval(() => {}, 1000);`,
);
const starts = (file: string) => readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length;
const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};
const logger = createLogger({ level: 'silent' });
/** Starts a part of its own and waits until it has run: a restart the supervisor wrongly scheduled before it (its
 * backoff here is milliseconds) would have been started by then too. */
const witnessStart = async (name: string, on?: Supervisor): Promise<void> => {
  const file = join(dir, name);
  writeFileSync(file, '');
  const own = on ?? new Supervisor({ self: script, logger, initialBackoffMs: 10, stableAfterMs: 200, onGiveUp: () => undefined });
  own.start({ name, command: 'agent', env: { STARTS: file, PATH: process.env.PATH ?? '' } });
  try {
    await until(() => starts(file) === 1);
  } finally {
    if (!on) await own.stopAll(1_000);
  }
};
let supervisor: Supervisor | undefined;
afterEach(async () => {
  await supervisor?.stopAll(1_000);
});

describe('eider up supervision', () => {
  it('starts a killed part again, and stops only when asked', async () => {
    const file = join(dir, 'killed');
    writeFileSync(file, '');
    let gaveUp = false;
    supervisor = new Supervisor({ self: script, logger, initialBackoffMs: 10, maxFailures: 1, stableAfterMs: 200, onGiveUp: () => (gaveUp = true) });
    supervisor.start({ name: 'agent', command: 'agent', env: { STARTS: file, PATH: process.env.PATH ?? '' } });
    await until(() => starts(file) === 1 && supervisor!.pid('agent') !== undefined);
    const first = supervisor.pid('agent')!;
    // It ran longer than stableAfterMs: not a crash loop, so even with maxFailures 1 it is started again.
    await new Promise((r) => setTimeout(r, 300));
    process.kill(first, 'SIGKILL');
    await until(() => starts(file) === 2 && supervisor!.pid('agent') !== undefined && supervisor!.pid('agent') !== first);
    expect(gaveUp).toBe(false);
    await supervisor.stopAll(1_000);
    await witnessStart('after-stop');
    expect(starts(file)).toBe(2);
  });

  it('starts a part that ran stably again at once, without the backoff', async () => {
    const file = join(dir, 'stable');
    writeFileSync(file, '');
    // A minute's backoff: only a restart that skips it comes within the wait below.
    supervisor = new Supervisor({ self: script, logger, initialBackoffMs: 60_000, stableAfterMs: 200, onGiveUp: () => undefined });
    supervisor.start({ name: 'catalog', command: 'catalog', env: { STARTS: file, PATH: process.env.PATH ?? '' } });
    await until(() => starts(file) === 1 && supervisor!.pid('catalog') !== undefined);
    const first = supervisor.pid('catalog')!;
    // Time itself must pass: longer than stableAfterMs.
    await new Promise((r) => setTimeout(r, 300));
    process.kill(first, 'SIGKILL');
    await until(() => starts(file) === 2 && supervisor!.pid('catalog') !== undefined && supervisor!.pid('catalog') !== first);
  });

  it('gives up on a part that keeps failing', async () => {
    const file = join(dir, 'crashing');
    writeFileSync(file, '');
    let reason = '';
    supervisor = new Supervisor({ self: script, logger, initialBackoffMs: 5, maxFailures: 3, stableAfterMs: 5_000, onGiveUp: (_p, r) => (reason = r) });
    supervisor.start({ name: 'api-1', command: 'crash', env: { STARTS: file, PATH: process.env.PATH ?? '' } });
    await until(() => reason !== '');
    expect(starts(file)).toBe(3);
    expect(reason).toContain('api-1 stopped 3 times');
  });

  it('gives up at once on a part that refuses its configuration (exit code 2)', async () => {
    const file = join(dir, 'misconfigured');
    writeFileSync(file, '');
    let reason = '';
    supervisor = new Supervisor({ self: script, logger, initialBackoffMs: 5, maxFailures: 5, stableAfterMs: 5_000, onGiveUp: (_p, r) => (reason = r) });
    supervisor.start({ name: 'api-1', command: 'misconfigured', env: { STARTS: file, PATH: process.env.PATH ?? '' } });
    await until(() => reason !== '');
    await witnessStart('after-give-up', supervisor);
    expect(starts(file)).toBe(1);
    expect(reason).toBe('api-1 cannot start with this configuration');
  });
});

process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
