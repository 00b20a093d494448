// The request bodies the catalog service accepts, as effect Schemas (the api's way: one schema per shape), and their
// decoding: a body that does not match is 400 BadRequestException naming every bad field. What a schema cannot say
// (a root that must match its kind, a table's metadata) the routes and tables.ts still check.
import { Exit, Schema, SchemaIssue } from 'effect';
import { VENDING_MODES } from '../iceberg/vendedStorage.ts';
import { badRequest } from './errors.ts';
import { NS_SEP } from './metastore.ts';

const formatter = SchemaIssue.makeFormatterStandardSchemaV1();

/** `value` decoded with `schema`, or 400 naming each field that does not match (an absent body is `{}`). */
export function decodeBody<S extends Schema.Top>(schema: S, value: unknown, what: string): S['Type'] {
  const exit = Schema.decodeUnknownExit(schema as never)(value ?? {}, { errors: 'all' });
  if (Exit.isSuccess(exit)) return exit.value as S['Type'];
  const failure = exit.cause.reasons.find((r) => r._tag === 'Fail') as { error: { issue: SchemaIssue.Issue } } | undefined;
  const issues = failure ? formatter(failure.error.issue).issues : [];
  const fields = issues.map((i) => `${i.path?.length ? i.path.map(String).join('.') : 'body'}: ${i.message}`);
  throw badRequest(`invalid ${what}: ${fields.join('; ') || 'malformed'}`);
}

const NonEmpty = Schema.String.check(Schema.isMinLength(1));
/** A namespace: its levels, none empty and none holding the separator the REST paths join them with. */
const Namespace = Schema.Array(NonEmpty.check(Schema.makeFilter((s: string) => !s.includes(NS_SEP) || 'must not contain U+001F'))).check(
  Schema.isMinLength(1),
);
const Properties = Schema.Record(Schema.String, Schema.String);
const TableIdent = Schema.Struct({ namespace: Namespace, name: NonEmpty });

export const CreateNamespaceRequest = Schema.Struct({ namespace: Namespace, properties: Schema.optionalKey(Properties) });

export const UpdateNamespacePropertiesRequest = Schema.Struct({
  removals: Schema.optionalKey(Schema.Array(Schema.String)),
  updates: Schema.optionalKey(Properties),
});

/** Iceberg's CreateTableRequest: the fields this service reads; the schema and specs are checked by tables.ts. */
export const CreateTableRequest = Schema.Struct({
  name: NonEmpty,
  location: Schema.optionalKey(Schema.String),
  schema: Schema.Record(Schema.String, Schema.Unknown),
  'partition-spec': Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  'write-order': Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  'stage-create': Schema.optionalKey(Schema.Boolean),
  properties: Schema.optionalKey(Properties),
});

const Change = Schema.Record(Schema.String, Schema.Unknown);
/** Iceberg's CommitTableRequest: each requirement and update is checked by iceberg/updates.ts. */
export const CommitTableRequest = Schema.Struct({
  identifier: Schema.optionalKey(TableIdent),
  requirements: Schema.Array(Change),
  updates: Schema.Array(Change),
});

export const RenameTableRequest = Schema.Struct({ source: TableIdent, destination: TableIdent });

export const CommitTransactionRequest = Schema.Struct({
  'table-changes': Schema.Array(Schema.Struct({ identifier: TableIdent, requirements: Schema.Array(Change), updates: Schema.Array(Change) })),
});

const OptionalText = Schema.optionalKey(Schema.NullOr(Schema.String));
/** A warehouse's storage as the api sends it (creation, a credential change, a relocation's new storage). */
export const WarehouseRequest = Schema.Struct({
  name: Schema.optionalKey(Schema.String),
  root_uri: OptionalText,
  kind: Schema.optionalKey(Schema.NullOr(Schema.Literals(['object_store', 's3', 'azure']))),
  endpoint: OptionalText,
  region: OptionalText,
  access_key_id: OptionalText,
  secret_access_key: OptionalText,
  path_style: Schema.optionalKey(Schema.Boolean),
  vending: Schema.optionalKey(Schema.NullOr(Schema.Literals(VENDING_MODES))),
  role_arn: OptionalText,
});

export const RelocateRequest = Schema.Struct({
  ...WarehouseRequest.fields,
  tables: Schema.Array(Schema.Struct({ namespace: Namespace, name: NonEmpty, from: Schema.String, to: Schema.String, metadata_json: Schema.String })),
});

export const ReadOnlyRequest = Schema.Struct({ read_only: Schema.Boolean });

export const RevokeCredentialRequest = Schema.Struct({ access_key_id: NonEmpty });

const Folded = Schema.String.check(Schema.isMaxLength(1024));

/** POST /management/v1/warehouses/{name}/search: names with a word starting with `q`, narrowed by a scoped attachment's grants. */
export const NameSearchRequest = Schema.Struct({
  q: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  limit: Schema.Finite.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 })),
  scope: Schema.optionalKey(
    Schema.Struct({
      schemas: Schema.Array(Folded),
      visible_schemas: Schema.Array(Folded),
      tables: Schema.Array(Schema.Struct({ schema: Folded, table: Folded })),
    }),
  ),
});
