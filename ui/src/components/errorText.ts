// What an error code means in words, for the title of a notice. The code itself stays on the notice, small, for
// support and searching; the words come first.

const TITLES: Record<string, string> = {
  sql_syntax_error: 'Syntax error',
  sql_not_allowed: 'Not allowed',
  sql_too_complex: 'Too complex to check',
  sql_error: 'The query failed',
  engine_error: 'The query failed',
  catalog_error: 'Catalog error',
  internal_error: 'Internal error',
  cancelled: 'Cancelled',
  timeout: 'Timed out',
  queued_timeout: 'Waited too long in the queue',
  dispatch_timeout: 'No agent took the query in time',
  ack_timeout: 'The agent did not confirm the query in time',
  open_timeout: 'The session did not open in time',
  queue_full: 'Too many queries waiting',
  agent_disconnected: 'The agent disconnected',
  outcome_unknown: 'The agent disconnected during the write; it may have committed',
  agent_unavailable: 'Agent not connected',
  agent_unreachable: 'Agent unreachable',
  compute_unavailable: 'No compute available',
  result_expired: 'Result expired',
  query_not_done: 'Not finished yet',
  session_closed: 'Session closed',
  session_not_open: 'Session not open',
  not_found: 'Not found',
  forbidden: 'No access',
  unauthorized: 'Signed out',
  conflict: 'Conflict',
  invalid_cursor: 'Invalid page',
  bad_request: 'Bad request',
  unprocessable_content: 'Invalid input',
  unavailable: 'Unavailable',
  network_error: 'The server could not be reached',
  sample_failed: 'Sample rows failed',
};

/** A short human title for an error code (or for an HTTP status when the code says nothing more). */
export function errorTitle(code: string, status?: number): string {
  if (TITLES[code]) return TITLES[code];
  // a reply without an error envelope (a proxy's page): only its status says anything
  if (code.startsWith('http_') || code === 'error') {
    if (status !== undefined && status >= 500) return 'Server error';
    if (status === 404) return 'Not found';
    if (status === 403) return 'No access';
    return 'Error';
  }
  return code.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
}
