// How a run (a query, or a SQL session's statement) reports its end: the query_done frame of a result, or the
// query_failed frame with its error code and a one-line message.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { RESULT_INLINE_CEILING_BYTES, type AgentFrame, type QueryErrorCode } from '../protocol/index.ts';
import { AdmissionError } from './admission.ts';
import type { ExecutionResult } from './engine.ts';
import { BridgeError } from './iceberg/errors.ts';

/**
 * The first line of the error, bounded: DuckDB messages can carry whole plans. The engine's suggestions ("Candidate
 * bindings: …", "Did you mean …") are kept after it, so an editor can offer them; its "LINE n:" echo of the
 * statement is not (the text it echoes may be the agent's rewrite, not the user's).
 */
export function failureMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const [first, ...rest] = text.split('\n');
  const hints = rest.filter((l) => /^\s*(Candidate bindings:|Did you mean)/i.test(l)).map((l) => l.trim().slice(0, 500));
  return [first, ...hints].join('\n').slice(0, 2000);
}

function failureCode(error: unknown): QueryErrorCode {
  if (error instanceof AdmissionError) return error.code;
  if (error instanceof BridgeError) return error.code;
  const text = error instanceof Error ? error.message : String(error);
  if (/Out of Memory Error/i.test(text)) return 'out_of_memory';
  // DuckDB errors carry their class as a prefix ("Binder Error: …", "Parser Error: …").
  if (/^[A-Za-z ]*Error: /.test(text)) return 'sql_error';
  return 'internal_error';
}

/** The query_done frame; `inline` is the result file when it is small enough to travel in the frame. */
export function doneFrame(id: string, result: ExecutionResult, durationMs: number, inline: Buffer | null = null): AgentFrame {
  return {
    type: 'query_done',
    payload: {
      query_id: id,
      row_count: result.rowCount,
      duration_ms: durationMs,
      result_path: result.resultPath,
      column_schema: result.columnSchema,
      columns: result.columns,
      ...(result.statementType ? { statement_type: result.statementType } : {}),
      ...(result.profile ? { profile: result.profile } : {}),
      ...(inline ? { result_inline: inline.toString('base64') } : {}),
    },
  };
}

/**
 * The result file itself (`resultPath` under `resultsDir`) when it is small enough to travel in the query_done frame
 * (`maxBytes`: RESULT_INLINE_MAX_BYTES, at most the protocol's ceiling); null otherwise.
 */
export function inlineResult(resultsDir: string, resultPath: string | null, maxBytes: number): Buffer | null {
  const max = Math.min(maxBytes, RESULT_INLINE_CEILING_BYTES);
  if (resultPath === null || max <= 0) return null;
  // One open, one fstat, one read, synchronously: the file was just written (page cache) and is at most the
  // inline ceiling; four asynchronous calls through libuv's thread pool cost the agent more CPU than the reads.
  const fd = openSync(join(resultsDir, basename(resultPath)), 'r');
  try {
    const { size } = fstatSync(fd);
    if (size > max) return null;
    const bytes = Buffer.allocUnsafe(size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, bytes, at, size - at, at);
      if (n === 0) throw new Error(`the result file ended at ${at} of ${size} bytes`);
      at += n;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/** What an error may say about files: the user's names for local copies, and the agent's directories to hide. */
export interface PathNames {
  /** [local path, the name the user gave] (a session's staging file and its storage URI) */
  readonly files?: ReadonlyArray<readonly [string, string]>;
  /** the agent's data directory (scratch, results, cache and extensions are under it) */
  readonly dataDir: string;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * An error message as a user may see it: no path of the agent's machine. A local copy of a user's file is named by
 * the user's name for it; a path relative to the agent's working directory (DuckDB resolves `ATTACH 'x'` against
 * it) is shown as it was written; any other path under the agent's directories (data, temp, home) is shown by its
 * file name only. The agent's own log keeps the real message.
 */
export function userFacingMessage(message: string, names: PathNames): string {
  let text = message;
  for (const [local, user] of [...(names.files ?? [])].sort((a, b) => b[0].length - a[0].length)) text = text.split(local).join(user);
  const strip = (dir: string) => dir.replace(/\/+$/, '');
  const cwd = strip(process.cwd());
  const hidden = [names.dataDir, tmpdir(), homedir(), cwd].map(strip).filter((d) => d.length > 1).sort((a, b) => b.length - a.length);
  for (const dir of hidden) {
    // The directory and the rest of the path up to a quote, space or the end.
    text = text.replace(new RegExp(`${escapeRegExp(dir)}(?![^/\\s"'\\\\,;)])((?:/[^\\s"'\\\\,;)]*)?)`, 'g'), (_all, rest: string) => {
      const tail = rest.replace(/^\/+/, '');
      if (dir === cwd) return tail || '.';
      return tail.split('/').filter(Boolean).pop() ?? '…';
    });
  }
  return text;
}

/** The failure of run `id` (`noun`: query or statement); a stop (cancel, timeout) names itself, not the error. */
export function failedFrame(
  id: string,
  error: unknown,
  stopReason: 'cancelled' | 'timeout' | null,
  timeoutS: number,
  durationMs: number,
  noun: 'query' | 'statement',
  names: PathNames,
): { frame: AgentFrame; code: QueryErrorCode; message: string } {
  const code: QueryErrorCode = stopReason ?? failureCode(error);
  const message =
    stopReason === 'timeout'
      ? `${noun} exceeded its timeout of ${timeoutS}s`
      : stopReason === 'cancelled'
        ? `${noun} cancelled`
        : userFacingMessage(failureMessage(error), names);
  return { frame: { type: 'query_failed', payload: { query_id: id, error: { code, message }, duration_ms: durationMs } }, code, message };
}
