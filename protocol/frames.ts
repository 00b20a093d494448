// Every frame of the agent control channel as an effect Schema. A frame travels as JSON `{type, payload}`.
// One schema per frame; `AgentFrame` is what the agent may send, `ServiceFrame` what the control plane may send, and
// each side decodes what it receives against the other side's union, so both validate everything they read.
import { Schema } from 'effect';

const NonEmpty = Schema.String.check(Schema.isNonEmpty());
const Uuid = Schema.String.check(Schema.isUUID());
const Count = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0));
const Millis = Schema.Number.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(0));
const PositiveSeconds = Schema.Number.check(Schema.isFinite(), Schema.isGreaterThan(0));
/** The largest result file a query_done frame may carry inline (agents cap RESULT_INLINE_MAX_BYTES to it). */
export const RESULT_INLINE_CEILING_BYTES = 2 ** 20;
// Standard base64 of at most RESULT_INLINE_CEILING_BYTES.
const Base64 = Schema.String.check(Schema.isMaxLength(Math.ceil(RESULT_INLINE_CEILING_BYTES / 3) * 4), Schema.isPattern(/^[A-Za-z0-9+/]*={0,2}$/));
const Port = Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 65535 }));

function frame<T extends string, P extends Schema.Top>(type: T, payload: P) {
  return Schema.Struct({ type: Schema.Literal(type), payload });
}

// --- shared payload parts -------------------------------------------------------------------------------------

const ErrorBody = Schema.Struct({ code: NonEmpty, message: Schema.String });
type ErrorBody = typeof ErrorBody.Type;

// Failure codes the agent reports for a query. The spec's agent-side messages ("queue full", "queued timeout")
// travel as the message of queue_full and queued_timeout.
export const QueryErrorCode = Schema.Literals([
  'sql_error',
  'timeout',
  'cancelled',
  'queue_full',
  'queued_timeout',
  'out_of_memory',
  'catalog_error',
  'internal_error',
]);
export type QueryErrorCode = typeof QueryErrorCode.Type;

export const StatementType = Schema.Literals([
  'select', 'insert', 'update', 'delete', 'merge', 'copy', 'create', 'alter', 'drop', 'describe', 'other',
]);
export type StatementType = typeof StatementType.Type;

export const ColumnSchemaEntry = Schema.Struct({ name: Schema.String, type: NonEmpty });
export type ColumnSchemaEntry = typeof ColumnSchemaEntry.Type;

export interface ProfileOperator {
  readonly name: string;
  readonly timing_ms: number;
  readonly cardinality: number;
  /** The planner's estimate of the operator's rows, when the engine gave one. */
  readonly estimated_cardinality?: number;
  readonly children: ReadonlyArray<ProfileOperator>;
}
export const ProfileOperator: Schema.Codec<ProfileOperator> = Schema.Struct({
  name: Schema.String,
  timing_ms: Millis,
  cardinality: Count,
  estimated_cardinality: Schema.optional(Count),
  children: Schema.Array(Schema.suspend((): Schema.Codec<ProfileOperator> => ProfileOperator)),
});

// Normalized execution profile: a summary plus the operator tree, engine-neutral field names.
export const QueryProfile = Schema.Struct({
  summary: Schema.Struct({
    total_ms: Millis,
    rows: Count,
    peak_memory_bytes: Schema.NullOr(Count),
    cpu_ms: Schema.optional(Millis),
  }),
  operators: Schema.NullOr(ProfileOperator),
});
export type QueryProfile = typeof QueryProfile.Type;

// The spec's frame table names only `capabilities`: an agent written from it (not ours) may leave out every field.
const Capabilities = Schema.Struct({
  engine_version: Schema.optional(NonEmpty),
  extensions: Schema.optional(Schema.Array(Schema.String)),
  memory_limit_bytes: Schema.optional(Count),
  max_concurrency_profile: Schema.optional(Schema.Literals(['auto', 'single', 'equal_2', 'decaying_2', 'decaying_3'])),
  max_queue_depth: Schema.optional(Count),
  max_timeout_s: Schema.optional(PositiveSeconds),
  profiling_enabled: Schema.optional(Schema.Boolean),
  // Feature names the control plane may rely on (e.g. "cancel_ack", "column_schema", "profile").
  features: Schema.optional(Schema.Array(Schema.String)),
});
type Capabilities = typeof Capabilities.Type;

const AgentLoad = Schema.Struct({
  running: Count,
  queued: Count,
  reserved_bytes: Count,
  budget_bytes: Count,
});
type AgentLoad = typeof AgentLoad.Type;

// Iceberg attach information for dispatch. Its inner shape belongs to the Iceberg bridge and is validated there;
// on the wire it is an object that names the catalog.
const CatalogAttachment = Schema.StructWithRest(
  Schema.Struct({ name: NonEmpty }),
  [Schema.Record(Schema.String, Schema.Unknown)],
);
type CatalogAttachment = typeof CatalogAttachment.Type;

// --- frames ----------------------------------------------------------------------------------------------------

/**
 * The port of an agent's result server unless its RESULTS_HTTP_PORT says otherwise (the spec's default), and so the
 * one the api reads results from when an agent's auth frame names none.
 */
export const DEFAULT_RESULTS_PORT = 8001;

const AuthFrame = frame(
  'auth',
  Schema.Struct({
    bootstrap_token: Schema.optional(NonEmpty),
    session_token: Schema.optional(NonEmpty),
    // The spec's frame table names only the token; ours sends the rest. Absent: the current protocol, the result
    // server on the spec's default port (DEFAULT_RESULTS_PORT), no version.
    protocol_version: Schema.optional(Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1))),
    name: Schema.optional(Schema.String),
    results_port: Schema.optional(Port),
    agent_version: Schema.optional(NonEmpty),
  }).check(
    Schema.makeFilter((p) =>
      p.bootstrap_token !== undefined || p.session_token !== undefined
        ? true
        : 'auth needs bootstrap_token or session_token',
    ),
  ),
);
const AuthOkFrame = frame(
  'auth_ok',
  Schema.Struct({
    agent_id: Uuid,
    // Present when a new session credential was issued (bootstrap exchange or rotation).
    session_token: Schema.optional(NonEmpty),
    heartbeat_interval_s: PositiveSeconds,
    heartbeat_ttl_s: PositiveSeconds,
    // Optional frames the control plane accepts (e.g. "query_progress"): an agent sends one only when named here, so
    // an older control plane, which names none, is never sent a frame type it would refuse.
    features: Schema.optional(Schema.Array(Schema.String)),
  }),
);
const AuthErrorFrame = frame('auth_error', ErrorBody);
const AgentStatusFrame = frame(
  'agent_status',
  Schema.Struct({ capabilities: Capabilities, load: Schema.optional(AgentLoad) }),
);
const HeartbeatFrame = frame(
  'heartbeat',
  // The spec leaves a heartbeat's payload open: an agent written from it may send none of these.
  Schema.Struct({ sent_at: Schema.optional(NonEmpty), in_flight: Schema.optional(Count) }),
);
export const DispatchQueryFrame = frame(
  'dispatch_query',
  Schema.Struct({
    query_id: Uuid,
    sql: NonEmpty,
    workspace: NonEmpty,
    backend: NonEmpty,
    timeout_s: PositiveSeconds,
    catalogs: Schema.optional(Schema.Array(CatalogAttachment)),
    // W3C trace context of the api's dispatch span, when the api traces: the agent's spans continue it.
    traceparent: Schema.optional(NonEmpty),
  }),
);
const CancelQueryFrame = frame('cancel_query', Schema.Struct({ query_id: Uuid }));
const QueryStartedFrame = frame(
  'query_started',
  Schema.Struct({ query_id: Uuid, queued_ms: Schema.optional(Millis), reserved_bytes: Schema.optional(Count) }),
);
/** The feature name (auth_ok `features`) under which the control plane accepts query_progress frames. */
export const QUERY_PROGRESS_FEATURE = 'query_progress';
// A running query's progress as the engine reports it (DuckDB's query progress), sent about once a second while a
// query runs past a second and only when it changed; the engine reports none for some plans (then nothing is sent).
export const QueryProgressFrame = frame(
  'query_progress',
  Schema.Struct({
    query_id: Uuid,
    percent: Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 100 })),
    rows_processed: Count,
    // Null when the engine does not know the total yet.
    rows_total: Schema.NullOr(Count),
  }),
);
const QueryDoneFrame = frame(
  'query_done',
  Schema.Struct({
    query_id: Uuid,
    row_count: Count,
    duration_ms: Millis,
    // Null when the statement produced no result grid (DDL, DML, multi-statement).
    result_path: Schema.NullOr(NonEmpty),
    // Not in the spec's frame table (row_count, duration_ms, result_path, profile): ours always sends them.
    column_schema: Schema.optional(Schema.NullOr(Schema.Array(ColumnSchemaEntry))),
    columns: Schema.optional(Schema.Array(Schema.String)),
    statement_type: Schema.optional(StatementType),
    profile: Schema.optional(QueryProfile),
    // A small result file itself (base64 Parquet, as at result_path): the api serves its rows without reading
    // them back from the agent.
    result_inline: Schema.optional(Base64),
  }),
);
const QueryFailedFrame = frame(
  'query_failed',
  Schema.Struct({
    query_id: Uuid,
    error: Schema.Struct({ code: QueryErrorCode, message: Schema.String }),
    duration_ms: Schema.optional(Millis),
  }),
);
const CancelAckFrame = frame(
  'cancel_ack',
  // found=false: the agent had no such query (already finished or never received).
  Schema.Struct({ query_id: Uuid, found: Schema.optional(Schema.Boolean) }),
);
// SQL sessions: a connection the agent holds for an external client, statements run on it in order.
export const OpenSessionFrame = frame(
  'open_session',
  Schema.Struct({
    session_id: Uuid,
    workspace: NonEmpty,
    traceparent: Schema.optional(NonEmpty),
  }),
);
const CloseSessionFrame = frame(
  'close_session',
  // reason: client, idle, lifetime, a failure code: logged by the agent; the connection and its memory go either way.
  Schema.Struct({ session_id: Uuid, reason: NonEmpty }),
);
// A statement's outcome comes back as query_started / query_done / query_failed with query_id = statement_id.
/** The DuckDB type a declared `$n` is bound as (the declared types that text alone cannot say). */
export const PARAM_TYPES = ['BIGINT', 'DOUBLE', 'BOOLEAN'] as const;
export const ParamType = Schema.Literals(PARAM_TYPES);
export type ParamType = (typeof PARAM_TYPES)[number];

export const ExecuteStatementFrame = frame(
  'execute_statement',
  Schema.Struct({
    statement_id: Uuid,
    session_id: Uuid,
    sql: NonEmpty,
    timeout_s: PositiveSeconds,
    catalogs: Schema.optional(Schema.Array(CatalogAttachment)),
    // Staging files the statement names: the agent fetches them from get_url before it runs and uploads what the
    // statement wrote to put_url after (presigned, short-lived; the agent holds no storage credential for them).
    staging: Schema.optional(Schema.Array(Schema.Struct({ uri: NonEmpty, get_url: NonEmpty, put_url: NonEmpty }))),
    // `$n` values in text form (null: SQL NULL), bound through a DuckDB prepared statement, never spliced into sql.
    params: Schema.optional(Schema.Array(Schema.NullOr(Schema.String))),
    // The type a client declared for each `$n` (the wire endpoint's Parse), where DuckDB could not tell it from the
    // value's position (`40 + $1`); null or absent: bound as text, DuckDB casts it by position.
    param_types: Schema.optional(Schema.Array(Schema.NullOr(ParamType))),
    traceparent: Schema.optional(NonEmpty),
  }),
);
const SessionOpenedFrame = frame('session_opened', Schema.Struct({ session_id: Uuid, reserved_bytes: Schema.optional(Count) }));
const SessionOpenFailedFrame = frame('session_open_failed', Schema.Struct({ session_id: Uuid, error: ErrorBody }));
const SessionClosedFrame = frame('session_closed', Schema.Struct({ session_id: Uuid }));

const ErrorFrame = frame(
  'error',
  Schema.Struct({ code: NonEmpty, message: Schema.String, frame_type: Schema.optional(Schema.String) }),
);

export const AgentFrame = Schema.Union([
  AuthFrame, AgentStatusFrame, HeartbeatFrame, QueryStartedFrame, QueryProgressFrame, QueryDoneFrame, QueryFailedFrame,
  CancelAckFrame, SessionOpenedFrame, SessionOpenFailedFrame, SessionClosedFrame, ErrorFrame,
]);
export const ServiceFrame = Schema.Union([
  AuthOkFrame, AuthErrorFrame, HeartbeatFrame, DispatchQueryFrame, CancelQueryFrame, OpenSessionFrame, CloseSessionFrame,
  ExecuteStatementFrame, ErrorFrame,
]);
export type AgentFrame = typeof AgentFrame.Type;
export type ServiceFrame = typeof ServiceFrame.Type;
type Frame = AgentFrame | ServiceFrame;
export type FrameOf<F extends Frame, T extends F['type']> = Extract<F, { type: T }>;

type AuthFrame = typeof AuthFrame.Type;
type AuthOkFrame = typeof AuthOkFrame.Type;
export type DispatchQueryFrame = typeof DispatchQueryFrame.Type;
export type QueryProgressFrame = typeof QueryProgressFrame.Type;
type QueryDoneFrame = typeof QueryDoneFrame.Type;
type QueryFailedFrame = typeof QueryFailedFrame.Type;
export type OpenSessionFrame = typeof OpenSessionFrame.Type;
export type ExecuteStatementFrame = typeof ExecuteStatementFrame.Type;

// Frame schemas by type and direction, so a decoder can name an unknown or misdirected type precisely.
export const AGENT_FRAME_SCHEMAS = {
  auth: AuthFrame,
  agent_status: AgentStatusFrame,
  heartbeat: HeartbeatFrame,
  query_started: QueryStartedFrame,
  query_progress: QueryProgressFrame,
  query_done: QueryDoneFrame,
  query_failed: QueryFailedFrame,
  cancel_ack: CancelAckFrame,
  session_opened: SessionOpenedFrame,
  session_open_failed: SessionOpenFailedFrame,
  session_closed: SessionClosedFrame,
  error: ErrorFrame,
} as const;
export const SERVICE_FRAME_SCHEMAS = {
  auth_ok: AuthOkFrame,
  auth_error: AuthErrorFrame,
  heartbeat: HeartbeatFrame,
  dispatch_query: DispatchQueryFrame,
  cancel_query: CancelQueryFrame,
  open_session: OpenSessionFrame,
  close_session: CloseSessionFrame,
  execute_statement: ExecuteStatementFrame,
  error: ErrorFrame,
} as const;
