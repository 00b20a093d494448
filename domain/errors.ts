// The one error type the domain raises: it carries the HTTP status and the spec's stable code once.
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;
  constructor(status: number, code: string, message: string, details?: Record<string, unknown>, headers?: Record<string, string>) {
    super(message);
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

export const unauthorized = (message = 'authentication required') => new AppError(401, 'unauthorized', message);
export const forbidden = (message = 'forbidden', code = 'forbidden') => new AppError(403, code, message);
export const notFound = (what = 'resource') => new AppError(404, 'not_found', `${what} not found`);
export const conflict = (message: string, code = 'conflict', details?: Record<string, unknown>) =>
  new AppError(409, code, message, details);
export const unprocessable = (message: string, code = 'unprocessable_content', details?: Record<string, unknown>) =>
  new AppError(422, code, message, details);
export const badRequest = (message: string, code = 'bad_request', details?: Record<string, unknown>) =>
  new AppError(400, code, message, details);
export const unavailable = (message: string, code = 'unavailable', headers?: Record<string, string>) =>
  new AppError(503, code, message, undefined, headers);

/** The code a status gets when a handler supplies only text (spec: Errors 2). */
export function derivedCode(status: number): string {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 422) return 'unprocessable_content';
  if (status >= 500) return 'internal_error';
  return 'bad_request';
}
