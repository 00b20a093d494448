// How a failed run (a query, or a SQL session's statement) is reported: its error code and a one-line message.
import type { QueryErrorCode } from '../protocol/index.ts';
import { AdmissionError } from './admission.ts';
import { BridgeError } from './icebergErrors.ts';

/** The first line of the error, bounded: DuckDB messages can carry whole plans. */
export function failureMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0].slice(0, 2000);
}

export function failureCode(error: unknown): QueryErrorCode {
  if (error instanceof AdmissionError) return error.code;
  if (error instanceof BridgeError) return error.code;
  const text = error instanceof Error ? error.message : String(error);
  if (/Out of Memory Error/i.test(text)) return 'out_of_memory';
  // DuckDB errors carry their class as a prefix ("Binder Error: …", "Parser Error: …").
  if (/^[A-Za-z ]*Error: /.test(text)) return 'sql_error';
  return 'internal_error';
}
