// An OTLP/HTTP trace receiver run inside a test: it accepts what exporters POST to /v1/traces
// (ExportTraceServiceRequest, protobuf) and decodes the parts tests look at. The decoder reads the protobuf wire
// format directly, field numbers from opentelemetry-proto (trace/v1/trace.proto, common/v1/common.proto).
import { createServer, type Server } from 'node:http';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  url: string;
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

type Field = { no: number; wire: number; value: bigint | Uint8Array };

function varint(buf: Uint8Array, pos: number): [bigint, number] {
  let out = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[pos++];
    out |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [out, pos];
    shift += 7n;
  }
}

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [tag, p] = varint(buf, pos);
    pos = p;
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const [v, q] = varint(buf, pos);
      out.push({ no, wire, value: v });
      pos = q;
    } else if (wire === 2) {
      const [len, q] = varint(buf, pos);
      out.push({ no, wire, value: buf.subarray(q, q + Number(len)) });
      pos = q + Number(len);
    } else if (wire === 1) {
      out.push({ no, wire, value: buf.subarray(pos, pos + 8) });
      pos += 8;
    } else if (wire === 5) {
      out.push({ no, wire, value: buf.subarray(pos, pos + 4) });
      pos += 4;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
  return out;
}

const bytesOf = (f: Field[], no: number) => f.filter((x) => x.no === no).map((x) => x.value as Uint8Array);
const text = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('utf8') : '');
const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('hex') : '');

/** KeyValue {1: key, 2: AnyValue {1: string, 2: bool, 3: int, 4: double}} */
function attributes(list: Uint8Array[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    const f = fields(kv);
    const key = text(bytesOf(f, 1)[0]);
    const any = fields(bytesOf(f, 2)[0] ?? new Uint8Array());
    const v = any[0];
    if (!v) continue;
    if (v.no === 1) out[key] = text(v.value as Uint8Array);
    else if (v.no === 2) out[key] = (v.value as bigint) !== 0n;
    else if (v.no === 3) out[key] = Number(BigInt.asIntN(64, v.value as bigint));
    else if (v.no === 4) out[key] = Buffer.from(v.value as Uint8Array).readDoubleLE(0);
  }
  return out;
}

/** ExportTraceServiceRequest {1: ResourceSpans {1: Resource {1: attributes}, 2: ScopeSpans {2: Span}}} */
function decodeExport(body: Uint8Array): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of bytesOf(fields(body), 1)) {
    const rsf = fields(rs);
    const resource = attributes(bytesOf(fields(bytesOf(rsf, 1)[0] ?? new Uint8Array()), 1));
    for (const ss of bytesOf(rsf, 2)) {
      for (const sp of bytesOf(fields(ss), 2)) {
        const f = fields(sp);
        out.push({
          service: String(resource['service.name'] ?? ''),
          traceId: hex(bytesOf(f, 1)[0]),
          spanId: hex(bytesOf(f, 2)[0]),
          parentSpanId: hex(bytesOf(f, 4)[0]),
          name: text(bytesOf(f, 5)[0]),
          attributes: attributes(bytesOf(f, 9)),
        });
      }
    }
  }
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        received.push(...decodeExport(new Uint8Array(Buffer.concat(chunks))));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}`,
    spans: () => [...received],
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
