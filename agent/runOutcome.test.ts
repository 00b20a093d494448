// Error messages as users see them: the agent's paths never, the user's names for their files instead.
import { describe, expect, it } from 'vitest';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { failedFrame, failureMessage, userFacingMessage } from './runOutcome.ts';

const dataDir = '/srv/eider/agent-data';

describe('userFacingMessage', () => {
  it('shows a path relative to the working directory as written (DuckDB resolves ATTACH against it)', () => {
    const m = `IO Error: Cannot access file "${join(process.cwd(), 'warehouse')}" - file system operations are disabled by configuration`;
    expect(userFacingMessage(m, { dataDir })).toBe('IO Error: Cannot access file "warehouse" - file system operations are disabled by configuration');
  });

  it('names a local copy by the user’s name for it, and anything else under the agent’s directories by its file name', () => {
    const local = join(dataDir, 'tmp', 'sess-1', 'staging', 'stmt-1', '0-in.csv');
    const uri = 's3://warehouse/warehouse/_staging/sess-1/in.csv';
    expect(userFacingMessage(`IO Error: No files found that match the pattern "${local}"`, { dataDir, files: [[local, uri]] })).toBe(`IO Error: No files found that match the pattern "${uri}"`);
    expect(userFacingMessage(`IO Error: Could not read "${join(dataDir, 'tmp', 'q', 'files', 'ab-0.parquet')}"`, { dataDir })).toBe('IO Error: Could not read "ab-0.parquet"');
    expect(userFacingMessage(`x ${join(tmpdir(), 'eider-agent-Ab12', 'cache', 'f.parquet')} y`, { dataDir })).toBe('x f.parquet y');
    expect(userFacingMessage(`x ${join(homedir(), '.duckdb', 'extensions')}`, { dataDir })).toBe('x extensions');
    // A directory's name is not a prefix of another's.
    expect(userFacingMessage(`file ${dataDir}-other/x`, { dataDir })).toBe(`file ${dataDir}-other/x`);
  });

  it('is what a failed frame carries', () => {
    const error = new Error(`IO Error: Cannot open file "${join(dataDir, 'tmp', 'q1', 'x.csv')}": No such file`);
    const { message } = failedFrame('q1', error, null, 10, 1, 'query', { dataDir });
    expect(message).toBe('IO Error: Cannot open file "x.csv": No such file');
  });
});

describe('failureMessage', () => {
  it('keeps the first line and the engine\'s suggestions, not the echo of the statement or a plan', () => {
    const binder = new Error(
      'Binder Error: Referenced column "farez" not found in FROM clause!\nCandidate bindings: "fare", "trip_id"\n\nLINE 1: select farez from trips\n               ^',
    );
    expect(failureMessage(binder)).toBe('Binder Error: Referenced column "farez" not found in FROM clause!\nCandidate bindings: "fare", "trip_id"');
    expect(failureMessage(new Error('Catalog Error: Table with name tripz does not exist!\nDid you mean "trips"?\n\nLINE 1: …'))).toBe(
      'Catalog Error: Table with name tripz does not exist!\nDid you mean "trips"?',
    );
    expect(failureMessage(new Error(`Invalid Input Error: no\n${'plan line\n'.repeat(1000)}`))).toBe('Invalid Input Error: no');
  });
});
