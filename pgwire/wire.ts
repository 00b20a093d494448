// Backend messages the endpoint writes and frontend messages it reads after startup (the startup, SSLRequest and
// TLS upgrade are pg-gateway's). Writing uses pg-protocol's Writer, the codec node-postgres itself is built on.
import { Writer } from 'pg-protocol/dist/buffer-writer';

export interface FieldDescription {
  name: string;
  typeOid: number;
  typeSize: number;
  typeModifier: number;
}

const w = () => new Writer();

export const authenticationOk = () => w().addInt32(0).flush(0x52);
export const authenticationCleartext = () => w().addInt32(3).flush(0x52);
export const authenticationSasl = (mechanisms: string[]) => {
  const x = w().addInt32(10);
  for (const m of mechanisms) x.addCString(m);
  return x.addCString('').flush(0x52);
};
export const authenticationSaslContinue = (data: string) => w().addInt32(11).addString(data).flush(0x52);
export const authenticationSaslFinal = (data: string) => w().addInt32(12).addString(data).flush(0x52);
export const parameterStatus = (name: string, value: string) => w().addCString(name).addCString(value).flush(0x53);
export const backendKeyData = (pid: number, secret: number) => w().addInt32(pid).addInt32(secret).flush(0x4b);
export const readyForQuery = (status: 'I' | 'T' | 'E') => w().addString(status).flush(0x5a);
export const parseComplete = () => w().flush(0x31);
export const bindComplete = () => w().flush(0x32);
export const closeComplete = () => w().flush(0x33);
export const noData = () => w().flush(0x6e);
export const emptyQueryResponse = () => w().flush(0x49);
export const portalSuspended = () => w().flush(0x73);
export const commandComplete = (tag: string) => w().addCString(tag).flush(0x43);

export function parameterDescription(oids: number[]): Buffer {
  const x = w().addInt16(oids.length);
  for (const o of oids) x.addInt32(o);
  return x.flush(0x74);
}

/** The columns; `formats` the format code of each (0 text, 1 binary; text when absent). */
export function rowDescription(fields: FieldDescription[], formats: readonly number[] = []): Buffer {
  const x = w().addInt16(fields.length);
  fields.forEach((f, i) => x.addCString(f.name).addInt32(0).addInt16(0).addInt32(f.typeOid).addInt16(f.typeSize).addInt32(f.typeModifier).addInt16(formats[i] ?? 0));
  return x.flush(0x54);
}

/** One row: a string in text format, a Buffer in binary; null is SQL NULL. */
export function dataRow(values: (string | Buffer | null)[]): Buffer {
  const x = w().addInt16(values.length);
  for (const v of values) {
    if (v === null) x.addInt32(-1);
    else {
      const b = typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
      x.addInt32(b.length).add(b);
    }
  }
  return x.flush(0x44);
}

export interface ErrorFields {
  severity: 'ERROR' | 'FATAL';
  code: string;
  message: string;
  detail?: string;
  hint?: string;
  position?: number;
}

export function errorResponse(e: ErrorFields): Buffer {
  const x = w().addString('S').addCString(e.severity).addString('V').addCString(e.severity).addString('C').addCString(e.code).addString('M').addCString(e.message);
  if (e.detail) x.addString('D').addCString(e.detail);
  if (e.hint) x.addString('H').addCString(e.hint);
  if (e.position !== undefined) x.addString('P').addCString(String(e.position));
  return x.addCString('').flush(0x45);
}

/** CopyOutResponse: text format, every column text. */
export function copyOutResponse(columns: number): Buffer {
  const x = w().add(Buffer.from([0])).addInt16(columns);
  for (let i = 0; i < columns; i++) x.addInt16(0);
  return x.flush(0x48);
}
export const copyData = (b: Buffer) => w().add(b).flush(0x64);
export const copyDone = () => w().flush(0x63);

/** Reads the body of one frontend message (after its type byte and length). */
export class MessageReader {
  #o = 0;
  readonly buf: Buffer;
  constructor(buf: Buffer) {
    this.buf = buf;
  }
  byte(): number {
    return this.buf[this.#o++];
  }
  int16(): number {
    const v = this.buf.readInt16BE(this.#o);
    this.#o += 2;
    return v;
  }
  int32(): number {
    const v = this.buf.readInt32BE(this.#o);
    this.#o += 4;
    return v;
  }
  cstring(): string {
    const end = this.buf.indexOf(0, this.#o);
    if (end < 0) throw new Error('malformed message: unterminated string');
    const s = this.buf.toString('utf8', this.#o, end);
    this.#o = end + 1;
    return s;
  }
  bytes(n: number): Buffer {
    const b = this.buf.subarray(this.#o, this.#o + n);
    this.#o += n;
    return b;
  }
  rest(): Buffer {
    return this.bytes(this.buf.length - this.#o);
  }
}
