// The inner shape of `dispatch_query.payload.catalogs[]` (protocol/frames.ts leaves it open; the bridge owns it),
// validated with effect Schema on the agent. The token is a short-lived bearer for the catalog service: it is held
// in memory for the query only, never logged and never written.
import { Result, Schema } from 'effect';
import { catalogError } from './errors.ts';

const NonEmpty = Schema.String.check(Schema.isNonEmpty());

export const IcebergAttachment = Schema.Struct({
  /** Catalog slug used in SQL: `name.schema.table`. */
  name: NonEmpty,
  /** The workspace's default catalog: `schema.table` resolves against it and it is DuckDB's current catalog. */
  default: Schema.optional(Schema.Boolean),
  /** Iceberg REST base, e.g. http://127.0.0.1:8181 (without /v1). */
  catalog_url: NonEmpty,
  /** REST warehouse; `GET /v1/config?warehouse=` gives the prefix. */
  warehouse: NonEmpty,
  token: NonEmpty,
  /** The workspace attachment's access mode (`full`, `scoped`): grants are enforced by the api before dispatch. */
  access_mode: Schema.optional(Schema.String),
  /** A scoped attachment: the only namespaces (lower case) its grants show; absent, all of them show. */
  schemas: Schema.optional(Schema.Array(Schema.String)),
});
export type IcebergAttachment = typeof IcebergAttachment.Type;

const Attachments = Schema.Array(IcebergAttachment);

/** Decodes the dispatch's catalogs; the first default one (or the only one) becomes the default. */
export function decodeAttachments(raw: unknown): IcebergAttachment[] {
  const decoded = Schema.decodeUnknownResult(Attachments as unknown as Schema.Codec<unknown, unknown>)(raw ?? []);
  if (Result.isFailure(decoded)) {
    // The message names fields, never values: a token must not reach a log or a query error.
    throw catalogError(`invalid catalog attachment in dispatch: ${String(decoded.failure.message).split('\n')[0].replace(/"[^"]{24,}"/g, '"…"')}`);
  }
  const list = decoded.success as IcebergAttachment[];
  const names = new Set<string>();
  for (const a of list) {
    const key = a.name.toLowerCase();
    if (names.has(key)) throw catalogError(`catalog ${a.name} is attached twice`);
    names.add(key);
  }
  return list;
}

export function defaultAttachment(list: readonly IcebergAttachment[]): IcebergAttachment | undefined {
  return list.find((a) => a.default === true) ?? (list.length === 1 ? list[0] : undefined);
}

