// Encode and decode control-channel frames. Neither throws: bad input comes back as a typed FrameError that the
// receiver logs and answers with an `error` frame.
import { Result, Schema } from 'effect';
import {
  AGENT_FRAME_SCHEMAS,
  SERVICE_FRAME_SCHEMAS,
  type AgentFrame,
  type ServiceFrame,
} from './frames.ts';

type FrameErrorCode = 'bad_json' | 'bad_frame' | 'unknown_frame_type' | 'unexpected_frame_type';

interface FrameError {
  readonly _tag: 'FrameError';
  readonly code: FrameErrorCode;
  readonly message: string;
  // The frame's `type` when one could be read, so the `error` answer can name it.
  readonly frameType?: string;
}

export type Decoded<F> = { readonly ok: true; readonly frame: F } | { readonly ok: false; readonly error: FrameError };
export type Encoded = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly error: FrameError };

function frameError(code: FrameErrorCode, message: string, frameType?: string): FrameError {
  return frameType === undefined ? { _tag: 'FrameError', code, message } : { _tag: 'FrameError', code, message, frameType };
}

type SchemaTable = Readonly<Record<string, Schema.Top>>;

function decodeWith<F>(text: unknown, own: SchemaTable, other: SchemaTable, direction: string): Decoded<F> {
  let raw: unknown;
  if (typeof text === 'string') {
    try {
      raw = JSON.parse(text);
    } catch {
      return { ok: false, error: frameError('bad_json', 'frame is not valid JSON') };
    }
  } else {
    raw = text;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, error: frameError('bad_frame', 'frame must be an object {type, payload}') };
  }
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== 'string') {
    return { ok: false, error: frameError('bad_frame', 'frame has no string "type"') };
  }
  const schema = Object.hasOwn(own, type) ? own[type] : undefined;
  if (schema === undefined) {
    return Object.hasOwn(other, type)
      ? { ok: false, error: frameError('unexpected_frame_type', `frame type "${type}" is not sent ${direction}`, type) }
      : { ok: false, error: frameError('unknown_frame_type', `unknown frame type "${type}"`, type) };
  }
  const decoded = Schema.decodeUnknownResult(schema as Schema.Codec<unknown, unknown>)(raw);
  if (Result.isFailure(decoded)) {
    return { ok: false, error: frameError('bad_frame', `invalid ${type} frame: ${oneLine(decoded.failure.message)}`, type) };
  }
  return { ok: true, frame: decoded.success as F };
}

function encodeWith(frame: { type: string }, table: SchemaTable): Encoded {
  const schema = Object.hasOwn(table, frame.type) ? table[frame.type] : undefined;
  if (schema === undefined) {
    return { ok: false, error: frameError('unknown_frame_type', `cannot send frame type "${frame.type}"`, frame.type) };
  }
  const encoded = Schema.encodeUnknownResult(schema as Schema.Codec<unknown, unknown>)(frame);
  if (Result.isFailure(encoded)) {
    return {
      ok: false,
      error: frameError('bad_frame', `invalid ${frame.type} frame: ${oneLine(encoded.failure.message)}`, frame.type),
    };
  }
  return { ok: true, text: JSON.stringify(encoded.success) };
}

function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ');
}

/** Decode a frame the agent sent (used by the control plane). Accepts the raw text or an already-parsed value. */
export function decodeAgentFrame(text: unknown): Decoded<AgentFrame> {
  return decodeWith<AgentFrame>(text, AGENT_FRAME_SCHEMAS, SERVICE_FRAME_SCHEMAS, 'by an agent');
}

/** Decode a frame the control plane sent (used by the agent). */
export function decodeServiceFrame(text: unknown): Decoded<ServiceFrame> {
  return decodeWith<ServiceFrame>(text, SERVICE_FRAME_SCHEMAS, AGENT_FRAME_SCHEMAS, 'by the control plane');
}

/** Validate and serialize a frame the agent sends. */
export function encodeAgentFrame(frame: AgentFrame): Encoded {
  return encodeWith(frame, AGENT_FRAME_SCHEMAS);
}

/** Validate and serialize a frame the control plane sends. */
export function encodeServiceFrame(frame: ServiceFrame): Encoded {
  return encodeWith(frame, SERVICE_FRAME_SCHEMAS);
}
