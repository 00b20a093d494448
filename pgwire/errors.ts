// Errors as ErrorResponse fields: the api's envelope codes and the statement's failure (DuckDB's message class) as
// SQLSTATE codes, so drivers raise the exception class they would against PostgreSQL.
import { AppError } from '../domain/errors.ts';
import type { ErrorFields } from './wire.ts';

const BY_CODE: Record<string, string> = {
  sql_not_allowed: '42501',
  forbidden: '42501',
  agent_forbidden: '42501',
  not_granted: '42501',
  sql_syntax_error: '42601',
  unprocessable_content: '42601',
  payload_too_large: '54000',
  session_not_open: '08003',
  catalog_read_only: '25006',
  agent_unavailable: '08006',
  compute_starting: '57P03',
  unavailable: '57P03',
  unauthorized: '28000',
  not_found: '3D000',
  cancelled: '57014',
  timeout: '57014',
  ack_timeout: '57014',
  result_expired: '58030',
};

/** DuckDB's message class (the text before ' Error:') decides the code of a statement that failed on the agent. */
function sqlstateOfMessage(message: string, errorCode?: string | null): string {
  if (errorCode && ['cancelled', 'timeout', 'ack_timeout'].includes(errorCode)) return '57014';
  if (/does not exist/i.test(message) && /Table|View|relation/i.test(message)) return '42P01';
  if (/Schema with name .* does not exist/i.test(message)) return '3F000';
  if (/Referenced column .* not found|column .* does not exist/i.test(message)) return '42703';
  if (/Function .* does not exist|No function matches/i.test(message)) return '42883';
  if (/^Parser Error/i.test(message) || /syntax error/i.test(message)) return '42601';
  if (/already exists/i.test(message)) return '42P07';
  if (/^Conversion Error|Could not convert|invalid input syntax/i.test(message)) return '22P02';
  if (/Division by zero/i.test(message)) return '22012';
  if (/^Constraint Error/i.test(message)) return '23000';
  if (/Out of Memory/i.test(message)) return '53200';
  if (/^Permission Error/i.test(message)) return '42501';
  if (/^Binder Error/i.test(message)) return '42803';
  if (/^Catalog Error/i.test(message)) return '42704';
  if (/INTERRUPT|Interrupted|cancel/i.test(message)) return '57014';
  if (errorCode && BY_CODE[errorCode]) return BY_CODE[errorCode];
  return 'XX000';
}

export function errorFieldsOf(e: unknown): ErrorFields {
  if (e instanceof AppError) {
    const position = e.code === 'sql_syntax_error' ? (e.details as { position?: { offset?: number } } | undefined)?.position?.offset : undefined;
    return {
      severity: 'ERROR',
      code: BY_CODE[e.code] ?? (e.status === 403 ? '42501' : e.status === 404 ? '42704' : e.status >= 500 ? '58000' : '42000'),
      message: e.message,
      detail: `eider: ${e.code}`,
      ...(typeof position === 'number' ? { position: position + 1 } : {}),
    };
  }
  if (e instanceof StatementFailed) return { severity: 'ERROR', code: sqlstateOfMessage(e.message, e.code), message: e.message, ...(e.code ? { detail: `eider: ${e.code}` } : {}) };
  if (e instanceof WireError) return { severity: 'ERROR', code: e.sqlstate, message: e.message };
  return { severity: 'ERROR', code: 'XX000', message: (e as Error)?.message ?? String(e) };
}

/** A statement the agent ran and that failed (its queries row's error). */
export class StatementFailed extends Error {
  readonly code: string | null;
  constructor(message: string, code: string | null) {
    super(message);
    this.code = code;
  }
}

/** An error the endpoint itself raises, with its SQLSTATE. */
export class WireError extends Error {
  readonly sqlstate: string;
  constructor(sqlstate: string, message: string) {
    super(message);
    this.sqlstate = sqlstate;
  }
}
