// Errors the actor host raises, with the spec's error codes so the http layer maps them without guessing.
export type ActorErrorCode = 'not_found' | 'conflict' | 'invalid_cursor' | 'internal_error' | 'unavailable';

export class ActorError extends Error {
  readonly code: ActorErrorCode;
  readonly kind: string;
  readonly actorId: string;
  constructor(code: ActorErrorCode, kind: string, id: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ActorError';
    this.code = code;
    this.kind = kind;
    this.actorId = id;
  }
}
