// Generated from the server's OpenAPI document by `node bin/eider.ts openapi --typescript` (http/openapiTypes.ts).
// Do not edit: tests/openapiTypes.test.ts fails when this file and the server disagree.

/** POST /api/maintenance/recommendations/{recommendation_id}/apply: Carry a recommendation out: its procedure runs on an agent; 202 with that query (catalogs permission) */
export type ApplyMaintenanceRecommendationResponse = {
  id: string;
  workspace_id: string;
  agent_id: string | null;
  user_id: string | null;
  user_name: string | null;
  sql: string;
  status: "queued" | "running" | "done" | "failed" | "cancelled";
  statement_type: string | null;
  origin: string;
  session_id: string | null;
  schedule_id: string | null;
  row_count: number | null;
  duration_ms: number | null;
  error: string | null;
  error_code: string | null;
  columns: string[] | null;
  column_schema: Array<{
    name: string;
    type: string;
  }> | null;
  started_at: string;
  running_at: string | null;
  finished_at: string | null;
  progress?: {
    percent: number;
    rows_processed: number;
    rows_total: number | null;
  };
};
export type ApplyMaintenanceRecommendationBody = {
  agent_id?: string | null;
  workspace?: string;
};

/** PUT /api/workspaces/{workspace}/catalogs/{catalog}: Attach a catalog (201) or update the attachment (200); a new attachment also needs a catalog manager */
export type AttachWorkspaceCatalogResponse = {
  id: string;
  slug: string;
  storage_backend_id: string;
  storage_kind: "object_store" | "s3" | "azure";
  root_uri: string;
  created_by: string | null;
  created_at: string;
  is_default: boolean;
  access_mode: "full" | "scoped";
};
export type AttachWorkspaceCatalogBody = {
  make_default: boolean;
  access_mode?: "full" | "scoped";
};

/** POST /api/catalogs/{catalog_id}/migrations/{migration_id}/cancel: Cancel a migration before its cutover (202 with the record); the copy is removed, the catalog stays where it was */
export type CancelCatalogMigrationResponse = {
  id: string;
  catalog_id: string;
  source_storage_backend_id: string;
  target_storage_backend_id: string;
  status: "pending" | "running" | "completed" | "failed" | "cancelled";
  phase: "pending" | "copying" | "verifying" | "cutover" | "completed" | "failed" | "cancelled";
  tables_total: number;
  tables_done: number;
  tables_verified: number;
  bytes_total: number;
  bytes_copied: number;
  tables: Array<{
    schema: string;
    table: string;
    state: "pending" | "copying" | "copied" | "rewritten" | "verified" | "failed";
    bytes: number;
    error: string | null;
  }>;
  error: string | null;
  created_by: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  retain_until: string | null;
};

/** POST /api/queries/{query_id}/cancel: Cancel a queued or running query (202 with the query) */
export type CancelQueryResponse = {
  id: string;
  workspace_id: string;
  agent_id: string | null;
  user_id: string | null;
  user_name: string | null;
  sql: string;
  status: "queued" | "running" | "done" | "failed" | "cancelled";
  statement_type: string | null;
  origin: string;
  session_id: string | null;
  schedule_id: string | null;
  row_count: number | null;
  duration_ms: number | null;
  error: string | null;
  error_code: string | null;
  columns: string[] | null;
  column_schema: Array<{
    name: string;
    type: string;
  }> | null;
  started_at: string;
  running_at: string | null;
  finished_at: string | null;
  progress?: {
    percent: number;
    rows_processed: number;
    rows_total: number | null;
  };
};

/** POST /api/workspaces/{workspace}/semantic/compile: Compile a structured request into one DuckDB statement (not executed; submit it as a query) */
export type CompileSemanticQueryResponse = {
  sql: string;
  model: string;
  metrics: string[];
  dimensions: string[];
};
export type CompileSemanticQueryBody = {
  model: string;
  metrics: string[];
  dimensions?: string[];
  grain?: "day" | "week" | "month" | "quarter" | "year";
  time_range?: {
    kind: "last_complete" | "trailing" | "to_date" | "absolute";
    grain?: "day" | "week" | "month" | "quarter" | "year";
    n?: number;
    start?: string;
    end?: string;
  };
  filters?: Array<{
    dimension: string;
    op: "=" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not_in" | "like" | "is_null" | "is_not_null";
    value?: unknown;
  }>;
  order_by?: Array<{
    field: string;
    direction?: "asc" | "desc";
  }>;
  limit?: number;
};

/** POST /api/admin/agents/bootstrap: A single-use bootstrap token for a new agent (shown once) */
export type CreateAgentBootstrapTokenResponse = {
  token: string;
  expires_at: string;
};
export type CreateAgentBootstrapTokenBody = {
  name?: string;
  expires_in_hours?: number;
};

/** POST /api/workspaces/{workspace}/assistant/conversations: Start an assistant conversation, private to you; its first question titles it unless you do */
export type CreateAssistantConversationResponse = {
  id: string;
  title: string | null;
  state: "idle" | "running" | "approval_required";
  created_at: string;
  updated_at: string;
};
export type CreateAssistantConversationBody = {
  title?: string | null;
};

/** POST /api/workspaces/{workspace}/assistant/conversations/{conversation_id}/messages: Ask the assistant ({content}), or approve or reject the write it waits on ({tool_call_id, decision}): runs a turn */
export type CreateAssistantMessageResponse = {
  conversation: {
    id: string;
    title: string | null;
    state: "idle" | "running" | "approval_required";
    created_at: string;
    updated_at: string;
  };
  messages: Array<{
    id: string;
    role: "user" | "assistant";
    content: string;
    finish: ("answer" | "tool_calls" | "length" | "request_limit" | "output_limit" | "error") | null;
    tool_calls: Array<{
      id: string;
      name: string;
      arguments: string;
      status: "pending" | "approval_required" | "ok" | "error" | "rejected" | "skipped";
      result: string | null;
      truncated: boolean;
      created_at: string;
      finished_at: string | null;
    }>;
    created_at: string;
  }>;
};
export type CreateAssistantMessageBody = {
  content: string;
} | {
  tool_call_id: string;
  decision: "approve" | "reject";
};

/** POST /api/catalogs: Create a catalog bound to a storage backend; its warehouse is rooted at {backend root_uri}{slug}/ */
export type CreateCatalogResponse = {
  id: string;
  slug: string;
  storage_backend_id: string;
  storage_kind: "object_store" | "s3" | "azure";
  root_uri: string;
  created_by: string | null;
  created_at: string;
};
export type CreateCatalogBody = {
  slug: string;
  storage_backend_id: string;
};

/** POST /api/workspaces/{workspace}/catalogs/{catalog}/schemas: Create a schema (an Iceberg namespace); 409 when it exists */
export type CreateCatalogSchemaResponse = {
  name: string;
};
export type CreateCatalogSchemaBody = {
  name: string;
};

/** POST /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables: Create an empty table from columns typed as DuckDB spells types; 409 when it exists */
export type CreateCatalogTableResponse = {
  name: string;
  schema: string;
  catalog: string;
  columns: Array<{
    name: string;
    type: string;
    nullable: boolean;
  }>;
  location: string;
  current_snapshot_id: string | null;
  row_count: number | null;
  size_bytes: number | null;
  last_write: {
    at: string;
    user_id: string | null;
    query_id: string | null;
    operation: string | null;
  } | null;
  owner_id: string | null;
  format_version: number;
  partition_spec: Array<{
    name: string;
    source_column: string | null;
    transform: string;
  }>;
  sort_order: Array<{
    source_column: string | null;
    transform: string;
    direction: string;
    null_order: string;
  }>;
  properties: Record<string, string>;
};
export type CreateCatalogTableBody = {
  name: string;
  columns: Array<{
    name: string;
    type: string;
    nullable?: boolean;
  }>;
};

/** POST /api/admin/agents/elastic: Provision an elastic agent: 202 while it starts (422 while elastic compute is off) */
export type CreateElasticAgentResponse = {
  id: string;
  name: string;
  status: "healthy" | "unavailable";
  version: string | null;
  capabilities: Record<string, unknown>;
  access_tier: "use" | "operate" | "admin";
  access_mode: "open" | "restricted";
  owner_url: string | null;
  connection_id: string | null;
  connected_at: string | null;
  last_heartbeat_at: string | null;
  elastic: {
    state: "provisioning" | "running" | "terminating" | "terminated" | "failed";
    provider: string;
    size: string;
    reason: string | null;
    provisioned_at: string | null;
    terminated_at: string | null;
    hourly_cost: number | ("Infinity" | "-Infinity" | "NaN") | null;
  } | null;
};
export type CreateElasticAgentBody = {
  size?: string;
  name?: string;
  access_mode?: "open" | "restricted";
};

/** POST /api/auth/login: Sign in with email and password; sets the session cookie */
export type CreateLoginResponse = {
  id: string;
  email: string | null;
  name: string;
  role: string;
  auth_provider: string;
  is_active: boolean;
  permissions: string[];
  created_at: string;
};
export type CreateLoginBody = {
  email: string;
  password: string;
};

/** POST /api/me/pats: Issue a personal access token, optionally named for what it is for (needs a browser session; the secret is shown once) */
export type CreateMyPatResponse = {
  id: string;
  token: string;
  name?: string | null;
  created_at: string;
  expires_at: string | null;
};
export type CreateMyPatBody = {
  expires_in_days: number;
  name?: string | null;
};

/** POST /api/workspaces/{workspace}/queries: Submit SQL to the chosen agent; 202 with the whole query once it is dispatched */
export type CreateQueryResponse = {
  id: string;
  workspace_id: string;
  agent_id: string | null;
  user_id: string | null;
  user_name: string | null;
  sql: string;
  status: "queued" | "running" | "done" | "failed" | "cancelled";
  statement_type: string | null;
  origin: string;
  session_id: string | null;
  schedule_id: string | null;
  row_count: number | null;
  duration_ms: number | null;
  error: string | null;
  error_code: string | null;
  columns: string[] | null;
  column_schema: Array<{
    name: string;
    type: string;
  }> | null;
  started_at: string;
  running_at: string | null;
  finished_at: string | null;
  progress?: {
    percent: number;
    rows_processed: number;
    rows_total: number | null;
  };
};
export type CreateQueryBody = {
  sql: string;
  agent_id?: string | null;
  catalog?: string | null;
  timeout_s?: number | null;
};

/** POST /api/workspaces/{workspace}/saved-queries: Save a query for the workspace: 201 created, 200 replaced (same name), 409 saved_query_exists with on_conflict=error */
export type CreateSavedQueryResponse = {
  id: string;
  workspace_id: string;
  name: string;
  sql: string;
  default_agent_id: string | null;
  catalog: string | null;
  created_by: string | null;
  updated_by: string | null;
  created_at: string;
  updated_at: string;
  last_run_at: string | null;
};
export type CreateSavedQueryBody = {
  name: string;
  sql: string;
  default_agent_id?: string | null;
  catalog?: string | null;
  on_conflict?: "replace" | "error";
};

/** POST /api/workspaces/{workspace}/schedules: Schedule a saved query: a 5-field cron in UTC, an agent (use tier), enabled by default */
export type CreateScheduleResponse = {
  id: string;
  workspace_id: string;
  saved_query_id: string;
  cron: string;
  timezone: "UTC";
  enabled: boolean;
  agent_id: string | null;
  created_by: string | null;
  next_run_at: string | null;
  last_run_at: string | null;
  last_status: ("queued" | "running" | "done" | "failed" | "skipped") | null;
};
export type CreateScheduleBody = {
  saved_query_id: string;
  cron: string;
  agent_id: string;
  enabled?: boolean;
};

/** POST /api/workspaces/{workspace}/semantic/models/{model}/datasets: Bind a dataset to a table; needs read access to the table; 409 on a repeated name */
export type CreateSemanticDatasetResponse = {
  name: string;
  catalog: string;
  schema_name: string;
  table_name: string;
  primary_key: string[];
  display_name?: string;
  description?: string;
  validation_state: "ok" | "broken" | "unchecked";
};
export type CreateSemanticDatasetBody = {
  name: string;
  catalog: string;
  schema_name: string;
  table_name: string;
  primary_key?: string[];
  display_name?: string;
  description?: string;
};

/** POST /api/workspaces/{workspace}/semantic/models/{model}/dimensions: Add a dimension (categorical, or time with grains); 409 on a repeated name */
export type CreateSemanticDimensionResponse = {
  name: string;
  dataset: string;
  display_name: string;
  description: string;
  kind: "categorical" | "time";
  expr: string | null;
  time_grains: Array<"day" | "week" | "month" | "quarter" | "year">;
  is_default_time: boolean;
  synonyms: string[];
  sample_values: Array<string | number | boolean>;
  validation_state: "ok" | "broken" | "unchecked";
};
export type CreateSemanticDimensionBody = {
  name: string;
  dataset: string;
  display_name?: string;
  description?: string;
  kind?: "categorical" | "time";
  expr?: string | null;
  time_grains?: Array<"day" | "week" | "month" | "quarter" | "year">;
  is_default_time?: boolean;
  synonyms?: string[];
  sample_values?: Array<string | number | boolean>;
};

/** POST /api/workspaces/{workspace}/semantic/models/{model}/metrics: Add a metric (an aggregation of an expression, with an optional filter); 409 on a repeated name */
export type CreateSemanticMetricResponse = {
  name: string;
  dataset: string;
  display_name: string;
  description: string;
  agg: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
  expr: string | null;
  filter: string | null;
  time_dimension: string | null;
  synonyms: string[];
  caveat: string | null;
  validation_state: "ok" | "broken" | "unchecked";
};
export type CreateSemanticMetricBody = {
  name: string;
  dataset: string;
  display_name?: string;
  description?: string;
  agg: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
  expr?: string | null;
  filter?: string | null;
  time_dimension?: string | null;
  synonyms?: string[];
  caveat?: string | null;
};

/** POST /api/workspaces/{workspace}/semantic/models: Create a model (a draft); 409 when the slug is taken */
export type CreateSemanticModelResponse = {
  slug: string;
  name: string;
  description: string;
  status: "draft" | "published" | "deprecated";
  imported: boolean;
  provider: string | null;
  validation: {
    state: "ok" | "broken" | "unchecked";
    checked_at: string | null;
    problems: Array<{
      kind: string;
      name: string;
      message: string;
    }>;
  };
  datasets: Array<{
    name: string;
    catalog: string;
    schema_name: string;
    table_name: string;
    primary_key: string[];
    display_name?: string;
    description?: string;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  relationships: Array<{
    name: string;
    left_dataset: string;
    right_dataset: string;
    kind: "many_to_one" | "one_to_one";
    join_columns: Array<{
      left: string;
      right: string;
    }>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  dimensions: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    kind: "categorical" | "time";
    expr: string | null;
    time_grains: Array<"day" | "week" | "month" | "quarter" | "year">;
    is_default_time: boolean;
    synonyms: string[];
    sample_values: Array<string | number | boolean>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  metrics: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    agg: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
    expr: string | null;
    filter: string | null;
    time_dimension: string | null;
    synonyms: string[];
    caveat: string | null;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  created_at: string;
  updated_at: string;
};
export type CreateSemanticModelBody = {
  slug: string;
  name: string;
  description?: string;
};

/** POST /api/workspaces/{workspace}/semantic/models/{model}/relationships: Relate two datasets, left the many side (many_to_one, one_to_one; one_to_many is 422) */
export type CreateSemanticRelationshipResponse = {
  name: string;
  left_dataset: string;
  right_dataset: string;
  kind: "many_to_one" | "one_to_one";
  join_columns: Array<{
    left: string;
    right: string;
  }>;
  validation_state: "ok" | "broken" | "unchecked";
};
export type CreateSemanticRelationshipBody = {
  name: string;
  left_dataset: string;
  right_dataset: string;
  kind?: string;
  join_columns: Array<{
    left: string;
    right: string;
  }>;
};

/** POST /api/admin/service-accounts: Create a service account */
export type CreateServiceAccountResponse = {
  id: string;
  name: string;
  role: string;
  is_active: boolean;
  permissions: string[];
  created_at: string;
};
export type CreateServiceAccountBody = {
  name: string;
  role?: "admin" | "member";
};

/** POST /api/admin/service-accounts/{service_account_id}/pats: Issue a service-account token, optionally named; expires_in_days may be null (never expires) */
export type CreateServiceAccountPatResponse = {
  id: string;
  token: string;
  name?: string | null;
  created_at: string;
  expires_at: string | null;
};
export type CreateServiceAccountPatBody = {
  expires_in_days: number | null;
  name?: string | null;
};

/** POST /api/setup/admin: Create the first admin with the setup token (header X-Setup-Token) */
export type CreateSetupAdminResponse = {
  id: string;
  email: string | null;
  name: string;
  role: string;
  auth_provider: string;
  is_active: boolean;
  permissions: string[];
  created_at: string;
};
export type CreateSetupAdminBody = {
  email: string;
  password: string;
  name: string;
};

/** POST /api/workspaces/{workspace}/sql/sessions: Open a SQL session on an agent: 201 open, 202 still opening (on_wait_timeout=continue), 503 compute_starting */
export type CreateSqlSessionResponse = {
  id: string;
  workspace_id: string;
  user_id: string | null;
  agent_id: string | null;
  status: "pending" | "opening" | "open" | "closing" | "closed" | "failed";
  active_catalog: string | null;
  staging_uri: string | null;
  error: string | null;
  close_reason: string | null;
  client_name: string | null;
  client_version: string | null;
  created_at: string;
  opened_at: string | null;
  last_active_at: string;
  closed_at: string | null;
};
export type CreateSqlSessionBody = {
  agent_id?: string | null;
  catalog?: string | null;
  wait_timeout_s?: number | null;
  on_wait_timeout?: ("cancel" | "continue") | null;
};

/** POST /api/sql/sessions/{session_id}/staging-files: Presigned PUT and GET URLs for files in the session’s staging area (201) */
export type CreateSqlStagingFilesResponse = {
  files: Array<{
    name: string;
    key: string;
    put_url: string;
    get_url: string;
  }>;
  expires_at: string;
};
export type CreateSqlStagingFilesBody = {
  files: string[];
};

/** POST /api/sql/sessions/{session_id}/statements: Run a statement in an open session: 200 when it finished within wait_timeout_s, 202 otherwise */
export type CreateSqlStatementResponse = {
  id: string;
  workspace_id: string;
  agent_id: string | null;
  user_id: string | null;
  user_name: string | null;
  sql: string;
  status: "queued" | "running" | "done" | "failed" | "cancelled";
  statement_type: string | null;
  origin: string;
  session_id: string | null;
  schedule_id: string | null;
  row_count: number | null;
  duration_ms: number | null;
  error: string | null;
  error_code: string | null;
  columns: string[] | null;
  column_schema: Array<{
    name: string;
    type: string;
  }> | null;
  started_at: string;
  running_at: string | null;
  finished_at: string | null;
  progress?: {
    percent: number;
    rows_processed: number;
    rows_total: number | null;
  };
  first_page?: {
    rows: unknown[];
    columns: string[];
    column_schema: Array<{
      name: string;
      type: string;
    }> | null;
    cursor: string | null;
    total: number;
  };
};
export type CreateSqlStatementBody = {
  sql: string;
  timeout_s?: number | null;
  wait_timeout_s?: number | null;
  first_page_limit?: number | null;
};

/** POST /api/admin/storage-backends: Register a storage backend: object_store (S3-compatible endpoint), s3 (AWS S3) or azure (Blob Storage / ADLS Gen2, account_name and account_key) */
export type CreateStorageBackendResponse = {
  id: string;
  name: string;
  kind: "object_store" | "s3" | "azure";
  root_uri: string;
  endpoint: string | null;
  region: string | null;
  has_credentials: boolean;
  role_arn: string | null;
  credential_vending: "derived" | "sts" | "static" | "sas";
  catalog_count: number;
  created_at: string;
};
export type CreateStorageBackendBody = {
  name: string;
  kind: "object_store" | "s3" | "azure";
  root_uri: string;
  endpoint?: string | null;
  region?: string | null;
  access_key_id?: string | null;
  secret_access_key?: string | null;
  account_name?: string | null;
  account_key?: string | null;
  role_arn?: string | null;
};

/** POST /api/admin/users: Create a local user */
export type CreateUserResponse = {
  id: string;
  email: string | null;
  name: string;
  role: string;
  auth_provider: string;
  is_active: boolean;
  permissions: string[];
  created_at: string;
};
export type CreateUserBody = {
  email: string;
  name: string;
  password: string;
  role: "admin" | "member";
};

/** POST /api/workspaces/{workspace}/worksheets: Keep a worksheet on the server: yours, private unless visibility is workspace */
export type CreateWorksheetResponse = {
  id: string;
  workspace_id: string;
  title: string;
  sql: string;
  agent_id: string | null;
  catalog: string | null;
  visibility: "private" | "workspace";
  owner_id: string;
  owner_name: string | null;
  editable: boolean;
  created_at: string;
  updated_at: string;
};
export type CreateWorksheetBody = {
  title: string;
  sql?: string;
  agent_id?: string | null;
  catalog?: string | null;
  visibility?: "private" | "workspace";
};

/** POST /api/workspaces: Create a workspace; the caller becomes its owner */
export type CreateWorkspaceResponse = {
  id: string;
  slug: string;
  name: string;
  created_at: string;
  default_catalog: string | null;
};
export type CreateWorkspaceBody = {
  slug: string;
  name: string;
};

/** DELETE /api/workspaces/{workspace}/lineage/imports: Remove a retired producer’s edges (execution lineage cannot be purged) */
export type DeleteLineageImportsResponse = {
  provider: string;
  deleted: number;
};

/** DELETE /api/workspaces/{workspace}/semantic/imports: Remove every model a provider imported (a report with the slugs removed) */
export type DeleteSemanticImportsResponse = {
  provider: string;
  deleted: string[];
};

/** POST /api/workspaces/{workspace}/semantic/models/{model}/deprecate: Retire a published model: still readable, excluded from new answers */
export type DeprecateSemanticModelResponse = {
  slug: string;
  name: string;
  description: string;
  status: "draft" | "published" | "deprecated";
  imported: boolean;
  provider: string | null;
  validation: {
    state: "ok" | "broken" | "unchecked";
    checked_at: string | null;
    problems: Array<{
      kind: string;
      name: string;
      message: string;
    }>;
  };
  datasets: Array<{
    name: string;
    catalog: string;
    schema_name: string;
    table_name: string;
    primary_key: string[];
    display_name?: string;
    description?: string;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  relationships: Array<{
    name: string;
    left_dataset: string;
    right_dataset: string;
    kind: "many_to_one" | "one_to_one";
    join_columns: Array<{
      left: string;
      right: string;
    }>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  dimensions: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    kind: "categorical" | "time";
    expr: string | null;
    time_grains: Array<"day" | "week" | "month" | "quarter" | "year">;
    is_default_time: boolean;
    synonyms: string[];
    sample_values: Array<string | number | boolean>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  metrics: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    agg: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
    expr: string | null;
    filter: string | null;
    time_dimension: string | null;
    synonyms: string[];
    caveat: string | null;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  created_at: string;
  updated_at: string;
};

/** POST /api/admin/agents/{agent_id}/disconnect: Close the agent’s socket; it reconnects with its session token (operate tier) */
export type DisconnectAgentResponse = {
  id: string;
  name: string;
  status: "healthy" | "unavailable";
  version: string | null;
  capabilities: Record<string, unknown>;
  access_tier: "use" | "operate" | "admin";
  access_mode: "open" | "restricted";
  owner_url: string | null;
  connection_id: string | null;
  connected_at: string | null;
  last_heartbeat_at: string | null;
  elastic: {
    state: "provisioning" | "running" | "terminating" | "terminated" | "failed";
    provider: string;
    size: string;
    reason: string | null;
    provisioned_at: string | null;
    terminated_at: string | null;
    hourly_cost: number | ("Infinity" | "-Infinity" | "NaN") | null;
  } | null;
};

/** POST /api/maintenance/recommendations/{recommendation_id}/dismiss: Dismiss a recommendation: it stays dismissed while its condition lasts (catalogs permission) */
export type DismissMaintenanceRecommendationResponse = {
  id: string;
  catalog_id: string;
  catalog: string;
  schema: string;
  table: string;
  kind: "compact_small_files" | "expire_snapshots" | "rewrite_manifests" | "cleanup_orphans" | "investigate_growth";
  severity: "warning" | "critical";
  status: "open" | "dismissed" | "resolved" | "applied";
  rationale: string;
  estimated_impact: Record<string, number | ("Infinity" | "-Infinity" | "NaN")>;
  remediation_sql: string | null;
  applied_query_id: string | null;
  created_at: string;
  updated_at: string;
};

/** GET /api/queries/{query_id}/export: The whole result as a CSV, Parquet or JSON file (a download), in the order and filter asked */
export type ExportQueryResultResponse = string;

/** GET /api/admin/actors/{kind}/{actor_id}: A live actor: state, version, context summary (no secrets) and its transition history, paged */
export type GetActorResponse = {
  kind: string;
  id: string;
  state: string;
  status: string;
  version: number;
  terminal: boolean;
  deadline_at: string | null;
  owner_replica: string | null;
  last_error: string | null;
  context: unknown;
  created_at: string;
  updated_at: string;
  transitions: {
    items: Array<{
      seq: number;
      event: string;
      payload: unknown;
      from_state: string | null;
      to_state: string;
      at: string;
      replica: string;
    }>;
    cursor: string | null;
    has_more: boolean;
  };
};

/** GET /api/admin/agents/{agent_id}: One agent (use tier) */
export type GetAgentResponse = {
  id: string;
  name: string;
  status: "healthy" | "unavailable";
  version: string | null;
  capabilities: Record<string, unknown>;
  access_tier: "use" | "operate" | "admin";
  access_mode: "open" | "restricted";
  owner_url: string | null;
  connection_id: string | null;
  connected_at: string | null;
  last_heartbeat_at: string | null;
  elastic: {
    state: "provisioning" | "running" | "terminating" | "terminated" | "failed";
    provider: string;
    size: string;
    reason: string | null;
    provisioned_at: string | null;
    terminated_at: string | null;
    hourly_cost: number | ("Infinity" | "-Infinity" | "NaN") | null;
  } | null;
};

/** GET /api/admin/agents/{agent_id}/access: Access mode, grants and candidate principals (admin tier) */
export type GetAgentAccessResponse = {
  agent_id: string;
  access_mode: "open" | "restricted";
  grants: Array<{
    id: string;
    user_id: string | null;
    workspace_id: string | null;
    tier: "use" | "operate" | "admin";
    principal_name: string;
    created_at: string;
  }>;
  candidates: {
    users: Array<{
      id: string;
      name: string;
      email: string | null;
      kind: string;
    }>;
    workspaces: Array<{
      id: string;
      slug: string;
      name: string;
    }>;
  };
};

/** GET /api/admin/agents/compute-options: What elastic compute can provision here */
export type GetAgentComputeOptionsResponse = Array<{
  size: string;
  cpu: number | ("Infinity" | "-Infinity" | "NaN");
  memory_gb: number | ("Infinity" | "-Infinity" | "NaN");
  hourly_cost: number | ("Infinity" | "-Infinity" | "NaN") | null;
  currency: string;
}>;

/** GET /api/admin/agents/{agent_id}/monitoring: Recent work of an agent: status, live queries, recent outcomes (use tier) */
export type GetAgentMonitoringResponse = {
  agent_id: string;
  status: "healthy" | "unavailable";
  capabilities: Record<string, unknown>;
  connected_here: boolean;
  last_heartbeat_at: string | null;
  running: number;
  queued: number;
  done_last_hour: number;
  failed_last_hour: number;
  p50_duration_ms_last_hour: number | null;
};

/** GET /api/workspaces/{workspace}/assistant/conversations/{conversation_id}: One of your assistant conversations with its messages and their tool calls (404 for anyone else’s) */
export type GetAssistantConversationResponse = {
  id: string;
  title: string | null;
  state: "idle" | "running" | "approval_required";
  created_at: string;
  updated_at: string;
  messages: Array<{
    id: string;
    role: "user" | "assistant";
    content: string;
    finish: ("answer" | "tool_calls" | "length" | "request_limit" | "output_limit" | "error") | null;
    tool_calls: Array<{
      id: string;
      name: string;
      arguments: string;
      status: "pending" | "approval_required" | "ok" | "error" | "rejected" | "skipped";
      result: string | null;
      truncated: boolean;
      created_at: string;
      finished_at: string | null;
    }>;
    created_at: string;
  }>;
};

/** GET /api/auth/methods: Sign-in methods offered */
export type GetAuthMethodsResponse = {
  local: boolean;
  ldap: boolean;
  oidc_providers: Array<{
    id: string;
    label: string;
  }>;
};

/** GET /api/catalogs/{catalog_id}: One catalog (404 when it is not visible to the caller) */
export type GetCatalogResponse = {
  id: string;
  slug: string;
  storage_backend_id: string;
  storage_kind: "object_store" | "s3" | "azure";
  root_uri: string;
  created_by: string | null;
  created_at: string;
};

/** GET /api/catalogs/{catalog_id}/migrations/{migration_id}: One storage migration: status, phase, bytes and per-table progress */
export type GetCatalogMigrationResponse = {
  id: string;
  catalog_id: string;
  source_storage_backend_id: string;
  target_storage_backend_id: string;
  status: "pending" | "running" | "completed" | "failed" | "cancelled";
  phase: "pending" | "copying" | "verifying" | "cutover" | "completed" | "failed" | "cancelled";
  tables_total: number;
  tables_done: number;
  tables_verified: number;
  bytes_total: number;
  bytes_copied: number;
  tables: Array<{
    schema: string;
    table: string;
    state: "pending" | "copying" | "copied" | "rewritten" | "verified" | "failed";
    bytes: number;
    error: string | null;
  }>;
  error: string | null;
  created_by: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  retain_until: string | null;
};

/** GET /api/catalogs/{catalog_id}/migrations/{migration_id}/logs: Log entries newer than `after` (a sequence number; 0 by default), oldest first, at most 1000 */
export type GetCatalogMigrationLogsResponse = Array<{
  seq: number;
  at: string;
  level: "info" | "warn" | "error";
  message: string;
  table: string | null;
}>;

/** GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}: A table: columns, location, current snapshot, row and size stats, last write */
export type GetCatalogTableResponse = {
  name: string;
  schema: string;
  catalog: string;
  columns: Array<{
    name: string;
    type: string;
    nullable: boolean;
  }>;
  location: string;
  current_snapshot_id: string | null;
  row_count: number | null;
  size_bytes: number | null;
  last_write: {
    at: string;
    user_id: string | null;
    query_id: string | null;
    operation: string | null;
  } | null;
  owner_id: string | null;
  format_version: number;
  partition_spec: Array<{
    name: string;
    source_column: string | null;
    transform: string;
  }>;
  sort_order: Array<{
    source_column: string | null;
    transform: string;
    direction: string;
    null_order: string;
  }>;
  properties: Record<string, string>;
};

/** GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/column-stats: Per-column value, null and NaN counts, sizes and lower/upper bounds of the current snapshot, from its manifests */
export type GetCatalogTableColumnStatsResponse = {
  snapshot_id: string | null;
  data_files: number;
  files_read: number;
  delete_files: number;
  columns: Array<{
    field_id: number;
    name: string;
    type: string;
    value_count: number | null;
    null_count: number | null;
    nan_count: number | null;
    size_bytes: number | null;
    lower_bound: string | null;
    upper_bound: string | null;
  }>;
};

/** GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/health: A table’s health from the last maintenance scan: score, grade, per-dimension scores (404 before a scan) */
export type GetCatalogTableHealthResponse = {
  score: number | ("Infinity" | "-Infinity" | "NaN");
  grade: string;
  dimensions: Record<string, number | ("Infinity" | "-Infinity" | "NaN")>;
  metrics: Record<string, number | ("Infinity" | "-Infinity" | "NaN")>;
  scanned_at: string;
  deep_scanned_at: string | null;
};

/** GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/sample: The first rows of a table, read by the agent named in agent_id (a hidden query of origin sample) */
export type GetCatalogTableSampleResponse = {
  query_id: string;
  rows: Array<Record<string, unknown>>;
  columns: string[];
  column_schema: Array<{
    name: string;
    type: string;
  }> | null;
};

/** GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/semantic: The semantic definitions depending on a table (datasets binding it and what is defined on them) */
export type GetCatalogTableSemanticResponse = Array<{
  model: string;
  model_status: "draft" | "published" | "deprecated";
  kind: "dataset" | "relationship" | "dimension" | "metric";
  name: string;
  dataset: string;
  validation_state: "ok" | "broken" | "unchecked";
}>;

/** GET /api/admin/cluster: The api replicas (live, draining, what each owns), overdue deadlines and pending effects */
export type GetClusterResponse = {
  replicas: Array<{
    id: string;
    internal_url: string;
    started_at: string;
    heartbeat_at: string;
    live: boolean;
    draining: boolean;
    live_actors: number;
    pending_effects: number;
  }>;
  overdue_deadlines: {
    count: number;
    oldest_at: string | null;
  };
  pending_effects: {
    count: number;
    oldest_at: string | null;
  };
};

/** GET /api/healthz: Liveness: the process answers */
export type GetHealthResponse = {
  status: "ok";
};

/** GET /api/workspaces/{workspace}/lineage/backfill: The workspace’s latest lineage backfill: status, checkpoint and report */
export type GetLineageBackfillResponse = {
  id: string;
  status: "running" | "done";
  stalled: boolean;
  started_by: string | null;
  started_at: string;
  finished_at: string | null;
  cutoff: string;
  checkpoint: {
    finished_at: string;
    query_id: string;
  } | null;
  last_error: string | null;
  report: {
    scanned: number;
    edges_created: number;
    edges_updated: number;
    failed: number;
    resumed_from: {
      finished_at: string;
      query_id: string;
    } | null;
  };
};

/** GET /api/admin/machines/{kind}/diagram: The state chart as SVG (or ?format=mermaid); ?actor={id} highlights that actor’s current state */
export type GetMachineDiagramResponse = string;

/** GET /api/admin/maintenance/policy: The scanner’s cadence and profile (runtime settings) and when it last scanned */
export type GetMaintenancePolicyResponse = {
  cadence: "off" | "hourly" | "daily";
  profile: "conservative" | "balanced" | "aggressive";
  updated_at: string;
  last_scan_at: string | null;
  last_deep_scan_at: string | null;
};

/** GET /api/me: The signed-in user */
export type GetMeResponse = {
  id: string;
  email: string | null;
  name: string;
  role: string;
  auth_provider: string;
  is_active: boolean;
  permissions: string[];
  created_at: string;
};

/** GET /api/metrics: Prometheus metrics (when METRICS_ENABLED) */
export type GetMetricsResponse = string;

/** GET /api/auth/oidc/{provider}/callback: Where the provider sends the browser back: sets the session cookie and forwards to the app */
export type GetOidcCallbackResponse = string;

/** GET /api/queries/{query_id}: One query; with wait_timeout_s it answers as soon as the query ends (or the wait passes) */
export type GetQueryResponse = {
  id: string;
  workspace_id: string;
  agent_id: string | null;
  user_id: string | null;
  user_name: string | null;
  sql: string;
  status: "queued" | "running" | "done" | "failed" | "cancelled";
  statement_type: string | null;
  origin: string;
  session_id: string | null;
  schedule_id: string | null;
  row_count: number | null;
  duration_ms: number | null;
  error: string | null;
  error_code: string | null;
  columns: string[] | null;
  column_schema: Array<{
    name: string;
    type: string;
  }> | null;
  started_at: string;
  running_at: string | null;
  finished_at: string | null;
  progress?: {
    percent: number;
    rows_processed: number;
    rows_total: number | null;
  };
};

/** GET /api/queries/{query_id}/profile: The normalized execution profile (summary plus operator tree) */
export type GetQueryProfileResponse = {
  summary: {
    total_ms: number;
    rows: number;
    peak_memory_bytes: number | null;
    cpu_ms?: number | null;
  };
  operators: {
    name: string;
    timing_ms: number;
    cardinality: number;
    estimated_cardinality?: number | null;
    children: unknown[];
  } | null;
};

/** GET /api/queries/{query_id}/rows: A page of result rows, read from the agent’s result file */
export type GetQueryRowsResponse = {
  rows: unknown[];
  columns: string[];
  column_schema: Array<{
    name: string;
    type: string;
  }> | null;
  cursor: string | null;
  total: number;
};

/** GET /api/readyz: Readiness: the database answers, the process is not draining, and the startup gate is open */
export type GetReadinessResponse = {
  status: "ready";
  replica_id: string;
};

/** GET /api/workspaces/{workspace}/saved-queries/{saved_query_id}: One saved query */
export type GetSavedQueryResponse = {
  id: string;
  workspace_id: string;
  name: string;
  sql: string;
  default_agent_id: string | null;
  catalog: string | null;
  created_by: string | null;
  updated_by: string | null;
  created_at: string;
  updated_at: string;
  last_run_at: string | null;
};

/** GET /api/workspaces/{workspace}/schedules/{schedule_id}: One schedule */
export type GetScheduleResponse = {
  id: string;
  workspace_id: string;
  saved_query_id: string;
  cron: string;
  timezone: "UTC";
  enabled: boolean;
  agent_id: string | null;
  created_by: string | null;
  next_run_at: string | null;
  last_run_at: string | null;
  last_status: ("queued" | "running" | "done" | "failed" | "skipped") | null;
};

/** GET /api/workspaces/{workspace}/semantic/models/{model}: A model with its datasets, relationships, dimensions and metrics */
export type GetSemanticModelResponse = {
  slug: string;
  name: string;
  description: string;
  status: "draft" | "published" | "deprecated";
  imported: boolean;
  provider: string | null;
  validation: {
    state: "ok" | "broken" | "unchecked";
    checked_at: string | null;
    problems: Array<{
      kind: string;
      name: string;
      message: string;
    }>;
  };
  datasets: Array<{
    name: string;
    catalog: string;
    schema_name: string;
    table_name: string;
    primary_key: string[];
    display_name?: string;
    description?: string;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  relationships: Array<{
    name: string;
    left_dataset: string;
    right_dataset: string;
    kind: "many_to_one" | "one_to_one";
    join_columns: Array<{
      left: string;
      right: string;
    }>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  dimensions: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    kind: "categorical" | "time";
    expr: string | null;
    time_grains: Array<"day" | "week" | "month" | "quarter" | "year">;
    is_default_time: boolean;
    synonyms: string[];
    sample_values: Array<string | number | boolean>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  metrics: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    agg: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
    expr: string | null;
    filter: string | null;
    time_dimension: string | null;
    synonyms: string[];
    caveat: string | null;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  created_at: string;
  updated_at: string;
};

/** GET /api/setup/status: Whether the first admin still has to be created */
export type GetSetupStatusResponse = {
  needs_admin: boolean;
};

/** GET /api/sql/sessions/{session_id}: One SQL session (its owner, or a query-admin) */
export type GetSqlSessionResponse = {
  id: string;
  workspace_id: string;
  user_id: string | null;
  agent_id: string | null;
  status: "pending" | "opening" | "open" | "closing" | "closed" | "failed";
  active_catalog: string | null;
  staging_uri: string | null;
  error: string | null;
  close_reason: string | null;
  client_name: string | null;
  client_version: string | null;
  created_at: string;
  opened_at: string | null;
  last_active_at: string;
  closed_at: string | null;
};

/** GET /api/admin/storage-backends/{storage_backend_id}: One storage backend */
export type GetStorageBackendResponse = {
  id: string;
  name: string;
  kind: "object_store" | "s3" | "azure";
  root_uri: string;
  endpoint: string | null;
  region: string | null;
  has_credentials: boolean;
  role_arn: string | null;
  credential_vending: "derived" | "sts" | "static" | "sas";
  catalog_count: number;
  created_at: string;
};

/** GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/lineage: The lineage graph around a table: upstream, downstream or both, 1 to 5 hops */
export type GetTableLineageResponse = {
  nodes: Array<{
    key: string;
    kind: "table" | "external" | "redacted";
    catalog: string | null;
    schema: string | null;
    table: string | null;
    column_count: number;
  }>;
  edges: Array<{
    source: string;
    target: string;
    providers: Array<{
      provider: string;
      first_seen_at: string;
      last_seen_at: string;
      observation_count: number;
      stale: boolean;
      column_lineage: string;
    }>;
    observation_count: number;
    first_seen_at: string;
    last_seen_at: string;
    stale: boolean;
    columns: Array<{
      source_column: string;
      target_column: string;
      providers: string[];
      stale: boolean;
    }>;
  }>;
  truncated: boolean;
  hidden: boolean;
  columns_truncated: boolean;
};

/** GET /api/version: Server build and contract version */
export type GetVersionResponse = {
  version: string;
  api_version: number;
};

/** GET /api/workspaces/{workspace}/worksheets/{worksheet_id}: One of your worksheets, or one shared with the workspace (404 for another member’s private one) */
export type GetWorksheetResponse = {
  id: string;
  workspace_id: string;
  title: string;
  sql: string;
  agent_id: string | null;
  catalog: string | null;
  visibility: "private" | "workspace";
  owner_id: string;
  owner_name: string | null;
  editable: boolean;
  created_at: string;
  updated_at: string;
};

/** GET /api/workspaces/{workspace}: One workspace, by slug or id */
export type GetWorkspaceResponse = {
  id: string;
  slug: string;
  name: string;
  created_at: string;
  default_catalog: string | null;
};

/** POST /api/workspaces/{workspace}/lineage/imports: Import canonical lineage edges from a producer (idempotent; unresolvable ends are skipped with a reason) */
export type ImportLineageResponse = {
  provider: string;
  created: number;
  updated: number;
  skipped: Array<{
    index: number;
    reason: string;
  }>;
};
export type ImportLineageBody = {
  provider: string;
  edges: Array<{
    source: {
      catalog: string;
      schema: string;
      table: string;
    } | {
      external: string;
    };
    target: {
      catalog: string;
      schema: string;
      table: string;
    } | {
      external: string;
    };
    columns?: Array<{
      source_column: string;
      target_column: string;
    }>;
    column_lineage?: "derived" | "unsupported" | "unknown";
    observed_at?: string;
  }>;
};

/** POST /api/workspaces/{workspace}/lineage/imports/{provider}: Import a producer’s artifact as lineage edges: transform takes a dbt manifest.json, or {manifest, catalog} for column detail */
export type ImportLineageArtifactResponse = {
  provider: string;
  created: number;
  updated: number;
  skipped: Array<{
    item: string;
    reason: string;
  }>;
};
export type ImportLineageArtifactBody = string | Record<string, unknown>;

/** POST /api/workspaces/{workspace}/semantic/imports/{provider}: Import models: native (a YAML document, version 1) or transform (a dbt manifest.json) */
export type ImportSemanticModelsResponse = {
  provider: string;
  created: string[];
  updated: string[];
  retired: string[];
  skipped: Array<{
    item: string;
    reason: string;
  }>;
};
export type ImportSemanticModelsBody = string | Record<string, unknown>;

/** GET /api/admin/actors: Actors newest first, filtered by kind, state, owner replica and liveness; paged */
export type ListActorsResponse = {
  items: Array<{
    kind: string;
    id: string;
    state: string;
    status: string;
    terminal: boolean;
    version: number;
    deadline_at: string | null;
    owner_replica: string | null;
    updated_at: string;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/admin/agents: Agents the caller can see (admin view) */
export type ListAdminAgentsResponse = Array<{
  id: string;
  name: string;
  status: "healthy" | "unavailable";
  version: string | null;
  capabilities: Record<string, unknown>;
  access_tier: "use" | "operate" | "admin";
  access_mode: "open" | "restricted";
  owner_url: string | null;
  connection_id: string | null;
  connected_at: string | null;
  last_heartbeat_at: string | null;
  elastic: {
    state: "provisioning" | "running" | "terminating" | "terminated" | "failed";
    provider: string;
    size: string;
    reason: string | null;
    provisioned_at: string | null;
    terminated_at: string | null;
    hourly_cost: number | ("Infinity" | "-Infinity" | "NaN") | null;
  } | null;
}>;

/** GET /api/admin/agents/metrics: Live work per visible agent: running and queued queries, last heartbeat */
export type ListAgentMetricsResponse = Array<{
  agent_id: string;
  name: string;
  status: "healthy" | "unavailable";
  running_queries: number;
  queued_queries: number;
  memory_limit_bytes: number | null;
  last_heartbeat_at: string | null;
}>;

/** GET /api/agents: Agents the caller can see, with the caller’s tier on each */
export type ListAgentsResponse = Array<{
  id: string;
  name: string;
  status: "healthy" | "unavailable";
  version: string | null;
  capabilities: Record<string, unknown>;
  access_tier: "use" | "operate" | "admin";
  access_mode: "open" | "restricted";
  owner_url: string | null;
  connection_id: string | null;
  connected_at: string | null;
  last_heartbeat_at: string | null;
  elastic: {
    state: "provisioning" | "running" | "terminating" | "terminated" | "failed";
    provider: string;
    size: string;
    reason: string | null;
    provisioned_at: string | null;
    terminated_at: string | null;
    hourly_cost: number | ("Infinity" | "-Infinity" | "NaN") | null;
  } | null;
}>;

/** GET /api/workspaces/{workspace}/assistant/conversations: Your assistant conversations in this workspace, newest first (503 assistant_disabled while the assistant is off) */
export type ListAssistantConversationsResponse = {
  items: Array<{
    id: string;
    title: string | null;
    state: "idle" | "running" | "approval_required";
    created_at: string;
    updated_at: string;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/admin/audit: The audit trail, newest first: sign-ins, tokens, roles, grants, agent credentials, catalogs, backends, policy rejections */
export type ListAuditEventsResponse = {
  items: Array<{
    id: string;
    at: string;
    action: "auth.login" | "auth.logout" | "token.create" | "token.revoke" | "user.role_change" | "workspace.member_change" | "grant.change" | "agent.bootstrap" | "agent.credential_revoke" | "catalog.change" | "backend.change" | "policy.reject" | "worksheet.share" | "access.denied" | "schedule.run" | "semantic.import" | "lineage.import";
    outcome: "success" | "failure";
    actor: {
      kind: "user" | "service_account" | "agent" | "anonymous";
      id: string | null;
      email: string | null;
    };
    target: {
      kind: string;
      id: string | null;
    } | null;
    replica_id: string;
    request_id: string | null;
    details: Record<string, unknown>;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/catalogs/{catalog_id}/migrations: The catalog’s storage migrations, newest first (page) */
export type ListCatalogMigrationsResponse = {
  items: Array<{
    id: string;
    catalog_id: string;
    source_storage_backend_id: string;
    target_storage_backend_id: string;
    status: "pending" | "running" | "completed" | "failed" | "cancelled";
    phase: "pending" | "copying" | "verifying" | "cutover" | "completed" | "failed" | "cancelled";
    tables_total: number;
    tables_done: number;
    tables_verified: number;
    bytes_total: number;
    bytes_copied: number;
    tables: Array<{
      schema: string;
      table: string;
      state: "pending" | "copying" | "copied" | "rewritten" | "verified" | "failed";
      bytes: number;
      error: string | null;
    }>;
    error: string | null;
    created_by: string | null;
    created_at: string;
    started_at: string | null;
    finished_at: string | null;
    retain_until: string | null;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas: Schemas of an attached catalog */
export type ListCatalogSchemasResponse = Array<{
  name: string;
}>;

/** GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/snapshots: Every snapshot of a table, newest first (ids are 64-bit: strings) */
export type ListCatalogTableSnapshotsResponse = Array<{
  snapshot_id: string;
  parent_snapshot_id: string | null;
  sequence_number: number | null;
  committed_at: string;
  operation: string | null;
  schema_id: number | null;
  is_current: boolean;
  summary: Record<string, string>;
}>;

/** GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables: Every table of a schema (unpaged) */
export type ListCatalogTablesResponse = Array<{
  name: string;
  table_type: string;
}>;

/** GET /api/catalogs: Catalogs: all of them for catalog managers, else those attached to your workspaces or made by you */
export type ListCatalogsResponse = Array<{
  id: string;
  slug: string;
  storage_backend_id: string;
  storage_kind: "object_store" | "s3" | "azure";
  root_uri: string;
  created_by: string | null;
  created_at: string;
}>;

/** GET /api/admin/machines: Every lifecycle machine with its definition (states, events, transitions) */
export type ListMachinesResponse = Array<{
  kind: string;
  description: string;
  definition: {
    id: string;
    description?: string;
    initial: string;
    states: Array<{
      name: string;
      type: "atomic" | "compound" | "parallel" | "final" | "history";
      transient: boolean;
      description?: string;
      entry: string[];
      exit: string[];
    }>;
    events: string[];
    transitions: Array<{
      from: string;
      event: string;
      to: string;
      guard?: string;
      actions: string[];
      targetless: boolean;
      reenter: boolean;
      eventless: boolean;
    }>;
  };
}>;

/** GET /api/maintenance/recommendations: Maintenance recommendations, newest first (every status unless status is sent) */
export type ListMaintenanceRecommendationsResponse = {
  items: Array<{
    id: string;
    catalog_id: string;
    catalog: string;
    schema: string;
    table: string;
    kind: "compact_small_files" | "expire_snapshots" | "rewrite_manifests" | "cleanup_orphans" | "investigate_growth";
    severity: "warning" | "critical";
    status: "open" | "dismissed" | "resolved" | "applied";
    rationale: string;
    estimated_impact: Record<string, number | ("Infinity" | "-Infinity" | "NaN")>;
    remediation_sql: string | null;
    applied_query_id: string | null;
    created_at: string;
    updated_at: string;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/me/pats: My live tokens; current marks the one authenticating this request */
export type ListMyPatsResponse = Array<{
  id: string;
  name?: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at?: string | null;
  current?: boolean;
}>;

/** GET /api/workspaces/{workspace}/queries: Query history with filters and sort, paged by cursor */
export type ListQueriesResponse = {
  items: Array<{
    id: string;
    workspace_id: string;
    agent_id: string | null;
    user_id: string | null;
    user_name: string | null;
    sql: string;
    status: "queued" | "running" | "done" | "failed" | "cancelled";
    statement_type: string | null;
    origin: string;
    session_id: string | null;
    schedule_id: string | null;
    row_count: number | null;
    duration_ms: number | null;
    error: string | null;
    error_code: string | null;
    columns: string[] | null;
    column_schema: Array<{
      name: string;
      type: string;
    }> | null;
    started_at: string;
    running_at: string | null;
    finished_at: string | null;
    progress?: {
      percent: number;
      rows_processed: number;
      rows_total: number | null;
    };
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/workspaces/{workspace}/saved-queries: The workspace’s saved queries, newest first */
export type ListSavedQueriesResponse = {
  items: Array<{
    id: string;
    workspace_id: string;
    name: string;
    sql: string;
    default_agent_id: string | null;
    catalog: string | null;
    created_by: string | null;
    updated_by: string | null;
    created_at: string;
    updated_at: string;
    last_run_at: string | null;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/workspaces/{workspace}/schedules/{schedule_id}/runs: A schedule’s runs, newest first */
export type ListScheduleRunsResponse = {
  items: Array<{
    id: string;
    schedule_id: string;
    query_id: string | null;
    status: "queued" | "running" | "done" | "failed" | "skipped";
    scheduled_for: string;
    started_at: string;
    finished_at: string | null;
    error: string | null;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/workspaces/{workspace}/schedules: The workspace’s schedules with their next and last runs */
export type ListSchedulesResponse = Array<{
  id: string;
  workspace_id: string;
  saved_query_id: string;
  cron: string;
  timezone: "UTC";
  enabled: boolean;
  agent_id: string | null;
  created_by: string | null;
  next_run_at: string | null;
  last_run_at: string | null;
  last_status: ("queued" | "running" | "done" | "failed" | "skipped") | null;
}>;

/** GET /api/workspaces/{workspace}/semantic/models/{model}/metrics/{metric}/dimensions: The dimensions a metric may be grouped and filtered by, with the join path to each */
export type ListSemanticMetricDimensionsResponse = Array<{
  name: string;
  dataset: string;
  display_name: string;
  description: string;
  kind: "categorical" | "time";
  expr: string | null;
  time_grains: Array<"day" | "week" | "month" | "quarter" | "year">;
  is_default_time: boolean;
  synonyms: string[];
  sample_values: Array<string | number | boolean>;
  validation_state: "ok" | "broken" | "unchecked";
  join_path: string | null;
}>;

/** GET /api/workspaces/{workspace}/semantic/models: Semantic models of the workspace (those binding a table the workspace cannot read are absent) */
export type ListSemanticModelsResponse = Array<{
  slug: string;
  name: string;
  description: string;
  status: "draft" | "published" | "deprecated";
  imported: boolean;
  provider: string | null;
  validation: {
    state: "ok" | "broken" | "unchecked";
    checked_at: string | null;
    problems: Array<{
      kind: string;
      name: string;
      message: string;
    }>;
  };
  datasets: Array<{
    name: string;
    catalog: string;
    schema_name: string;
    table_name: string;
    primary_key: string[];
    display_name?: string;
    description?: string;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  relationships: Array<{
    name: string;
    left_dataset: string;
    right_dataset: string;
    kind: "many_to_one" | "one_to_one";
    join_columns: Array<{
      left: string;
      right: string;
    }>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  dimensions: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    kind: "categorical" | "time";
    expr: string | null;
    time_grains: Array<"day" | "week" | "month" | "quarter" | "year">;
    is_default_time: boolean;
    synonyms: string[];
    sample_values: Array<string | number | boolean>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  metrics: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    agg: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
    expr: string | null;
    filter: string | null;
    time_dimension: string | null;
    synonyms: string[];
    caveat: string | null;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  created_at: string;
  updated_at: string;
}>;

/** GET /api/admin/service-accounts/{service_account_id}/pats: A service account’s live tokens */
export type ListServiceAccountPatsResponse = Array<{
  id: string;
  name?: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at?: string | null;
  current?: boolean;
}>;

/** GET /api/admin/service-accounts: Service accounts, paged */
export type ListServiceAccountsResponse = {
  items: Array<{
    id: string;
    name: string;
    role: string;
    is_active: boolean;
    permissions: string[];
    created_at: string;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/workspaces/{workspace}/sql/sessions: SQL sessions of a workspace, newest first (your own; all of them for a query-admin) */
export type ListSqlSessionsResponse = {
  items: Array<{
    id: string;
    workspace_id: string;
    user_id: string | null;
    agent_id: string | null;
    status: "pending" | "opening" | "open" | "closing" | "closed" | "failed";
    active_catalog: string | null;
    staging_uri: string | null;
    error: string | null;
    close_reason: string | null;
    client_name: string | null;
    client_version: string | null;
    created_at: string;
    opened_at: string | null;
    last_active_at: string;
    closed_at: string | null;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/sql/sessions/{session_id}/statements: The statements of a session, newest first (each a query readable at /queries/{id}) */
export type ListSqlStatementsResponse = {
  items: Array<{
    id: string;
    workspace_id: string;
    agent_id: string | null;
    user_id: string | null;
    user_name: string | null;
    sql: string;
    status: "queued" | "running" | "done" | "failed" | "cancelled";
    statement_type: string | null;
    origin: string;
    session_id: string | null;
    schedule_id: string | null;
    row_count: number | null;
    duration_ms: number | null;
    error: string | null;
    error_code: string | null;
    columns: string[] | null;
    column_schema: Array<{
      name: string;
      type: string;
    }> | null;
    started_at: string;
    running_at: string | null;
    finished_at: string | null;
    progress?: {
      percent: number;
      rows_processed: number;
      rows_total: number | null;
    };
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/admin/storage-backends: Every storage backend (secrets never shown) */
export type ListStorageBackendsResponse = Array<{
  id: string;
  name: string;
  kind: "object_store" | "s3" | "azure";
  root_uri: string;
  endpoint: string | null;
  region: string | null;
  has_credentials: boolean;
  role_arn: string | null;
  credential_vending: "derived" | "sts" | "static" | "sas";
  catalog_count: number;
  created_at: string;
}>;

/** GET /api/admin/users/{user_id}/workspaces: The workspaces a user belongs to, with the role */
export type ListUserWorkspacesResponse = Array<{
  id: string;
  slug: string;
  name: string;
  created_at: string;
  default_catalog: string | null;
  role: string;
}>;

/** GET /api/admin/users: Users, paged */
export type ListUsersResponse = {
  items: Array<{
    id: string;
    email: string | null;
    name: string;
    role: string;
    auth_provider: string;
    is_active: boolean;
    permissions: string[];
    created_at: string;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/workspaces/{workspace}/worksheets: Worksheets you may see, most recently changed first: scope=mine (yours), scope=shared (shared with the workspace), or both */
export type ListWorksheetsResponse = {
  items: Array<{
    id: string;
    workspace_id: string;
    title: string;
    sql: string;
    agent_id: string | null;
    catalog: string | null;
    visibility: "private" | "workspace";
    owner_id: string;
    owner_name: string | null;
    editable: boolean;
    created_at: string;
    updated_at: string;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/workspaces/{workspace}/catalogs/{catalog}/grants: Grants of the attachment (enforced while its access_mode is scoped) */
export type ListWorkspaceCatalogGrantsResponse = Array<{
  id: string;
  catalog: string;
  level: "catalog" | "schema" | "table";
  schema: string | null;
  table: string | null;
  privilege: "read" | "write";
  created_by: string | null;
  created_at: string;
  updated_at: string;
}>;

/** GET /api/workspaces/{workspace}/catalogs: Catalogs attached to the workspace; is_default marks the default */
export type ListWorkspaceCatalogsResponse = Array<{
  id: string;
  slug: string;
  storage_backend_id: string;
  storage_kind: "object_store" | "s3" | "azure";
  root_uri: string;
  created_by: string | null;
  created_at: string;
  is_default: boolean;
  access_mode: "full" | "scoped";
}>;

/** GET /api/workspaces/{workspace}/members: Members and their roles */
export type ListWorkspaceMembersResponse = Array<{
  user_id: string;
  email: string | null;
  name: string;
  role: "reader" | "writer" | "owner";
}>;

/** GET /api/workspaces/{workspace}/schedule-runs: Every schedule run of the workspace, newest first */
export type ListWorkspaceScheduleRunsResponse = {
  items: Array<{
    id: string;
    schedule_id: string;
    query_id: string | null;
    status: "queued" | "running" | "done" | "failed" | "skipped";
    scheduled_for: string;
    started_at: string;
    finished_at: string | null;
    error: string | null;
  }>;
  cursor: string | null;
  has_more: boolean;
};

/** GET /api/workspaces/{workspace}/maintenance/health: The workspace’s tables by health, worst first, with their open recommendations */
export type ListWorkspaceTableHealthResponse = Array<{
  catalog: string;
  schema: string;
  table: string;
  score: number | ("Infinity" | "-Infinity" | "NaN");
  grade: string;
  open: number | ("Infinity" | "-Infinity" | "NaN");
  scanned_at: string;
}>;

/** GET /api/workspaces: The caller’s workspaces (admins: all) */
export type ListWorkspacesResponse = Array<{
  id: string;
  slug: string;
  name: string;
  created_at: string;
  default_catalog: string | null;
}>;

/** POST /api/workspaces/{workspace}/semantic/models/{model}/publish: Validate against the live catalog, then publish; 422 model_broken naming the problems */
export type PublishSemanticModelResponse = {
  slug: string;
  name: string;
  description: string;
  status: "draft" | "published" | "deprecated";
  imported: boolean;
  provider: string | null;
  validation: {
    state: "ok" | "broken" | "unchecked";
    checked_at: string | null;
    problems: Array<{
      kind: string;
      name: string;
      message: string;
    }>;
  };
  datasets: Array<{
    name: string;
    catalog: string;
    schema_name: string;
    table_name: string;
    primary_key: string[];
    display_name?: string;
    description?: string;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  relationships: Array<{
    name: string;
    left_dataset: string;
    right_dataset: string;
    kind: "many_to_one" | "one_to_one";
    join_columns: Array<{
      left: string;
      right: string;
    }>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  dimensions: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    kind: "categorical" | "time";
    expr: string | null;
    time_grains: Array<"day" | "week" | "month" | "quarter" | "year">;
    is_default_time: boolean;
    synonyms: string[];
    sample_values: Array<string | number | boolean>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  metrics: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    agg: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
    expr: string | null;
    filter: string | null;
    time_dimension: string | null;
    synonyms: string[];
    caveat: string | null;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  created_at: string;
  updated_at: string;
};

/** PUT /api/admin/agents/{agent_id}/grants: Grant a tier to exactly one user or workspace (201 insert, 200 update; a workspace cannot hold admin) */
export type PutAgentGrantResponse = {
  id: string;
  user_id: string | null;
  workspace_id: string | null;
  tier: "use" | "operate" | "admin";
  principal_name: string;
  created_at: string;
};
export type PutAgentGrantBody = {
  user_id?: string | null;
  workspace_id?: string | null;
  tier: "use" | "operate" | "admin";
};

/** PUT /api/admin/maintenance/policy: Set the cadence (off, hourly, daily) and the profile (conservative, balanced, aggressive) */
export type PutMaintenancePolicyResponse = {
  cadence: "off" | "hourly" | "daily";
  profile: "conservative" | "balanced" | "aggressive";
  updated_at: string;
  last_scan_at: string | null;
  last_deep_scan_at: string | null;
};
export type PutMaintenancePolicyBody = {
  cadence?: "off" | "hourly" | "daily";
  profile?: "conservative" | "balanced" | "aggressive";
};

/** PUT /api/workspaces/{workspace}/catalogs/{catalog}/grants: Grant the workspace a catalog, a schema or a table (named in the body) for read or write: 201 new, 200 replaced */
export type PutWorkspaceCatalogGrantResponse = {
  id: string;
  catalog: string;
  level: "catalog" | "schema" | "table";
  schema: string | null;
  table: string | null;
  privilege: "read" | "write";
  created_by: string | null;
  created_at: string;
  updated_at: string;
};
export type PutWorkspaceCatalogGrantBody = {
  schema?: string | null;
  table?: string | null;
  privilege: "read" | "write";
};

/** PUT /api/workspaces/{workspace}/members/{user_id}: Add a member (201) or change a role (200) */
export type PutWorkspaceMemberResponse = {
  user_id: string;
  email: string | null;
  name: string;
  role: "reader" | "writer" | "owner";
};
export type PutWorkspaceMemberBody = {
  role: "reader" | "writer" | "owner";
};

/** POST /api/workspaces/{workspace}/catalogs/{catalog}/refresh-stats: Recount row and size stats of every reachable table from its metadata into the sidecar (a report) */
export type RefreshCatalogStatsResponse = {
  catalog: string;
  tables_scanned: number;
  tables_updated: number;
  tables_without_totals: Array<{
    schema: string;
    table: string;
  }>;
  removed: number;
  failed: Array<{
    schema: string;
    table: string;
    error: string;
  }>;
  refreshed_at: string;
};

/** POST /api/admin/agents/{agent_id}/restart: Start a terminated or failed elastic agent again: 202 (409 while it is still running; operate tier) */
export type RestartAgentResponse = {
  id: string;
  name: string;
  status: "healthy" | "unavailable";
  version: string | null;
  capabilities: Record<string, unknown>;
  access_tier: "use" | "operate" | "admin";
  access_mode: "open" | "restricted";
  owner_url: string | null;
  connection_id: string | null;
  connected_at: string | null;
  last_heartbeat_at: string | null;
  elastic: {
    state: "provisioning" | "running" | "terminating" | "terminated" | "failed";
    provider: string;
    size: string;
    reason: string | null;
    provisioned_at: string | null;
    terminated_at: string | null;
    hourly_cost: number | ("Infinity" | "-Infinity" | "NaN") | null;
  } | null;
};

/** POST /api/workspaces/{workspace}/schedules/{schedule_id}/run: Fire a schedule now (202 with the run; skipped while its last run still runs) */
export type RunScheduleResponse = {
  id: string;
  schedule_id: string;
  query_id: string | null;
  status: "queued" | "running" | "done" | "failed" | "skipped";
  scheduled_for: string;
  started_at: string;
  finished_at: string | null;
  error: string | null;
};

/** POST /api/admin/maintenance/scan: Scan every table now (deep: also list storage for orphan files); 200 with the report */
export type ScanMaintenanceResponse = {
  scanned_at: string;
  deep: boolean;
  profile: string;
  catalogs: number | ("Infinity" | "-Infinity" | "NaN");
  tables: number | ("Infinity" | "-Infinity" | "NaN");
  recommendations_opened: number | ("Infinity" | "-Infinity" | "NaN");
  recommendations_resolved: number | ("Infinity" | "-Infinity" | "NaN");
  errors: Array<{
    catalog: string;
    schema: string | null;
    table: string | null;
    message: string;
  }>;
  duration_ms: number | ("Infinity" | "-Infinity" | "NaN");
};
export type ScanMaintenanceBody = {
  deep?: boolean;
};

/** GET /api/workspaces/{workspace}/catalog-search: Catalogs, schemas and tables whose name has a word starting with q (best first) */
export type SearchCatalogsResponse = {
  items: Array<{
    kind: "catalog" | "schema" | "table";
    catalog: string;
    schema: string | null;
    table: string | null;
  }>;
  has_more: boolean;
};

/** GET /api/workspaces/{workspace}/semantic/search: Search models, datasets, dimensions and metrics by name, display name, synonym and description */
export type SearchSemanticResponse = {
  items: Array<{
    kind: "model" | "dataset" | "dimension" | "metric";
    model: string;
    name: string;
    display_name: string;
    description: string;
    validation_state: "ok" | "broken" | "unchecked";
    model_status: "draft" | "published" | "deprecated";
  }>;
  ambiguous: Array<{
    kind: string;
    name: string;
    models: string[];
  }>;
  broken: Array<{
    kind: string;
    model: string;
    name: string;
  }>;
  has_more: boolean;
};

/** GET /api/workspaces/{workspace}/search: The workspace-level search: catalogs, schemas and tables by name, as catalog-search answers */
export type SearchWorkspaceResponse = {
  items: Array<{
    kind: "catalog" | "schema" | "table";
    catalog: string;
    schema: string | null;
    table: string | null;
  }>;
  has_more: boolean;
};

/** POST /api/catalogs/{catalog_id}/migrations: Move a catalog to another storage backend (202, pending): copy, path rewrite, verify, atomic cutover */
export type StartCatalogMigrationResponse = {
  id: string;
  catalog_id: string;
  source_storage_backend_id: string;
  target_storage_backend_id: string;
  status: "pending" | "running" | "completed" | "failed" | "cancelled";
  phase: "pending" | "copying" | "verifying" | "cutover" | "completed" | "failed" | "cancelled";
  tables_total: number;
  tables_done: number;
  tables_verified: number;
  bytes_total: number;
  bytes_copied: number;
  tables: Array<{
    schema: string;
    table: string;
    state: "pending" | "copying" | "copied" | "rewritten" | "verified" | "failed";
    bytes: number;
    error: string | null;
  }>;
  error: string | null;
  created_by: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  retain_until: string | null;
};
export type StartCatalogMigrationBody = {
  target_storage_backend_id: string;
};

/** POST /api/workspaces/{workspace}/lineage/backfill: Backfill execution lineage from the workspace’s past done writes (a one-shot job; resumes a stopped one) */
export type StartLineageBackfillResponse = {
  id: string;
  status: "running" | "done";
  stalled: boolean;
  started_by: string | null;
  started_at: string;
  finished_at: string | null;
  cutoff: string;
  checkpoint: {
    finished_at: string;
    query_id: string;
  } | null;
  last_error: string | null;
  report: {
    scanned: number;
    edges_created: number;
    edges_updated: number;
    failed: number;
    resumed_from: {
      finished_at: string;
      query_id: string;
    } | null;
  };
};

/** POST /api/admin/agents/{agent_id}/terminate: Terminate an elastic agent: its work is failed and its instance removed; 202 (operate tier) */
export type TerminateAgentResponse = {
  id: string;
  name: string;
  status: "healthy" | "unavailable";
  version: string | null;
  capabilities: Record<string, unknown>;
  access_tier: "use" | "operate" | "admin";
  access_mode: "open" | "restricted";
  owner_url: string | null;
  connection_id: string | null;
  connected_at: string | null;
  last_heartbeat_at: string | null;
  elastic: {
    state: "provisioning" | "running" | "terminating" | "terminated" | "failed";
    provider: string;
    size: string;
    reason: string | null;
    provisioned_at: string | null;
    terminated_at: string | null;
    hourly_cost: number | ("Infinity" | "-Infinity" | "NaN") | null;
  } | null;
};

/** PATCH /api/admin/agents/{agent_id}/access-mode: Open or restricted; returns the full access payload (admin tier) */
export type UpdateAgentAccessModeResponse = {
  agent_id: string;
  access_mode: "open" | "restricted";
  grants: Array<{
    id: string;
    user_id: string | null;
    workspace_id: string | null;
    tier: "use" | "operate" | "admin";
    principal_name: string;
    created_at: string;
  }>;
  candidates: {
    users: Array<{
      id: string;
      name: string;
      email: string | null;
      kind: string;
    }>;
    workspaces: Array<{
      id: string;
      slug: string;
      name: string;
    }>;
  };
};
export type UpdateAgentAccessModeBody = {
  access_mode: "open" | "restricted";
};

/** PATCH /api/workspaces/{workspace}/saved-queries/{saved_query_id}: Rename or change a saved query (409 saved_query_exists when the new name is taken) */
export type UpdateSavedQueryResponse = {
  id: string;
  workspace_id: string;
  name: string;
  sql: string;
  default_agent_id: string | null;
  catalog: string | null;
  created_by: string | null;
  updated_by: string | null;
  created_at: string;
  updated_at: string;
  last_run_at: string | null;
};
export type UpdateSavedQueryBody = {
  name?: string;
  sql?: string;
  default_agent_id?: string | null;
  catalog?: string | null;
};

/** PATCH /api/workspaces/{workspace}/schedules/{schedule_id}: Change a schedule’s cron, agent or enabled flag (its next run is recomputed from now) */
export type UpdateScheduleResponse = {
  id: string;
  workspace_id: string;
  saved_query_id: string;
  cron: string;
  timezone: "UTC";
  enabled: boolean;
  agent_id: string | null;
  created_by: string | null;
  next_run_at: string | null;
  last_run_at: string | null;
  last_status: ("queued" | "running" | "done" | "failed" | "skipped") | null;
};
export type UpdateScheduleBody = {
  cron?: string;
  agent_id?: string;
  enabled?: boolean;
};

/** PATCH /api/workspaces/{workspace}/semantic/models/{model}/metrics/{metric}: Edit a metric; its validation resets to unchecked */
export type UpdateSemanticMetricResponse = {
  name: string;
  dataset: string;
  display_name: string;
  description: string;
  agg: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
  expr: string | null;
  filter: string | null;
  time_dimension: string | null;
  synonyms: string[];
  caveat: string | null;
  validation_state: "ok" | "broken" | "unchecked";
};
export type UpdateSemanticMetricBody = {
  display_name?: string;
  description?: string;
  expr?: string | null;
  filter?: string | null;
  time_dimension?: string | null;
  synonyms?: string[];
  caveat?: string | null;
  agg?: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
};

/** PATCH /api/workspaces/{workspace}/semantic/models/{model}: Rename or re-describe a model; 409 model_imported on an imported model */
export type UpdateSemanticModelResponse = {
  slug: string;
  name: string;
  description: string;
  status: "draft" | "published" | "deprecated";
  imported: boolean;
  provider: string | null;
  validation: {
    state: "ok" | "broken" | "unchecked";
    checked_at: string | null;
    problems: Array<{
      kind: string;
      name: string;
      message: string;
    }>;
  };
  datasets: Array<{
    name: string;
    catalog: string;
    schema_name: string;
    table_name: string;
    primary_key: string[];
    display_name?: string;
    description?: string;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  relationships: Array<{
    name: string;
    left_dataset: string;
    right_dataset: string;
    kind: "many_to_one" | "one_to_one";
    join_columns: Array<{
      left: string;
      right: string;
    }>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  dimensions: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    kind: "categorical" | "time";
    expr: string | null;
    time_grains: Array<"day" | "week" | "month" | "quarter" | "year">;
    is_default_time: boolean;
    synonyms: string[];
    sample_values: Array<string | number | boolean>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  metrics: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    agg: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
    expr: string | null;
    filter: string | null;
    time_dimension: string | null;
    synonyms: string[];
    caveat: string | null;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  created_at: string;
  updated_at: string;
};
export type UpdateSemanticModelBody = {
  name?: string;
  description?: string;
};

/** PATCH /api/admin/service-accounts/{service_account_id}: Rename, change role, activate or deactivate a service account */
export type UpdateServiceAccountResponse = {
  id: string;
  name: string;
  role: string;
  is_active: boolean;
  permissions: string[];
  created_at: string;
};
export type UpdateServiceAccountBody = {
  name?: string;
  role?: "admin" | "member";
  is_active?: boolean;
};

/** PATCH /api/admin/storage-backends/{storage_backend_id}: Rotate a storage backend's credentials (never its location): probed with the new ones, then saved and given to every catalog on it */
export type UpdateStorageBackendCredentialsResponse = {
  id: string;
  name: string;
  kind: "object_store" | "s3" | "azure";
  root_uri: string;
  endpoint: string | null;
  region: string | null;
  has_credentials: boolean;
  role_arn: string | null;
  credential_vending: "derived" | "sts" | "static" | "sas";
  catalog_count: number;
  created_at: string;
};
export type UpdateStorageBackendCredentialsBody = {
  access_key_id?: string;
  secret_access_key?: string;
  account_key?: string;
  role_arn?: string | null;
};

/** PATCH /api/admin/users/{user_id}: Rename, change role, activate or deactivate (deactivation revokes sessions and tokens) */
export type UpdateUserResponse = {
  id: string;
  email: string | null;
  name: string;
  role: string;
  auth_provider: string;
  is_active: boolean;
  permissions: string[];
  created_at: string;
};
export type UpdateUserBody = {
  name?: string;
  role?: "admin" | "member";
  is_active?: boolean;
};

/** PATCH /api/workspaces/{workspace}/worksheets/{worksheet_id}: Change your worksheet (title, SQL, agent, catalog, visibility); 403 worksheet_read_only for a shared one you do not own */
export type UpdateWorksheetResponse = {
  id: string;
  workspace_id: string;
  title: string;
  sql: string;
  agent_id: string | null;
  catalog: string | null;
  visibility: "private" | "workspace";
  owner_id: string;
  owner_name: string | null;
  editable: boolean;
  created_at: string;
  updated_at: string;
};
export type UpdateWorksheetBody = {
  title?: string;
  sql?: string;
  agent_id?: string | null;
  catalog?: string | null;
  visibility?: "private" | "workspace";
};

/** POST /api/workspaces/{workspace}/semantic/models/{model}/validate: Resolve every binding against the live catalog; the outcome is recorded per definition */
export type ValidateSemanticModelResponse = {
  slug: string;
  name: string;
  description: string;
  status: "draft" | "published" | "deprecated";
  imported: boolean;
  provider: string | null;
  validation: {
    state: "ok" | "broken" | "unchecked";
    checked_at: string | null;
    problems: Array<{
      kind: string;
      name: string;
      message: string;
    }>;
  };
  datasets: Array<{
    name: string;
    catalog: string;
    schema_name: string;
    table_name: string;
    primary_key: string[];
    display_name?: string;
    description?: string;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  relationships: Array<{
    name: string;
    left_dataset: string;
    right_dataset: string;
    kind: "many_to_one" | "one_to_one";
    join_columns: Array<{
      left: string;
      right: string;
    }>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  dimensions: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    kind: "categorical" | "time";
    expr: string | null;
    time_grains: Array<"day" | "week" | "month" | "quarter" | "year">;
    is_default_time: boolean;
    synonyms: string[];
    sample_values: Array<string | number | boolean>;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  metrics: Array<{
    name: string;
    dataset: string;
    display_name: string;
    description: string;
    agg: "sum" | "count" | "count_distinct" | "avg" | "min" | "max" | "median" | "sum_boolean";
    expr: string | null;
    filter: string | null;
    time_dimension: string | null;
    synonyms: string[];
    caveat: string | null;
    validation_state: "ok" | "broken" | "unchecked";
  }>;
  created_at: string;
  updated_at: string;
};

/** Every operation by its method and path template: what a call sends and what it answers. */
export interface Operations {
  "DELETE /api/admin/agents/{agent_id}": {
    path: {
      agent_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/admin/agents/{agent_id}/credential": {
    path: {
      agent_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/admin/agents/{agent_id}/grants/{grant_id}": {
    path: {
      agent_id: string;
      grant_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/admin/service-accounts/{service_account_id}/pats/{pat_id}": {
    path: {
      service_account_id: string;
      pat_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/admin/storage-backends/{storage_backend_id}": {
    path: {
      storage_backend_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/catalogs/{catalog_id}": {
    path: {
      catalog_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/me/pats/{pat_id}": {
    path: {
      pat_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/queries/{query_id}": {
    path: {
      query_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/sql/sessions/{session_id}": {
    path: {
      session_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/catalogs/{catalog}": {
    path: {
      workspace: string;
      catalog: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/catalogs/{catalog}/grants/{grant_id}": {
    path: {
      workspace: string;
      catalog: string;
      grant_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
      table: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/lineage/imports": {
    path: {
      workspace: string;
    };
    query: {
      provider: string | number;
    };
    body: never;
    response: DeleteLineageImportsResponse;
  };
  "DELETE /api/workspaces/{workspace}/members/{user_id}": {
    path: {
      workspace: string;
      user_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/saved-queries/{saved_query_id}": {
    path: {
      workspace: string;
      saved_query_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/schedules/{schedule_id}": {
    path: {
      workspace: string;
      schedule_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/semantic/imports": {
    path: {
      workspace: string;
    };
    query: {
      provider: "native" | "transform";
    };
    body: never;
    response: DeleteSemanticImportsResponse;
  };
  "DELETE /api/workspaces/{workspace}/semantic/models/{model}": {
    path: {
      workspace: string;
      model: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/semantic/models/{model}/datasets/{dataset}": {
    path: {
      workspace: string;
      model: string;
      dataset: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/semantic/models/{model}/dimensions/{dimension}": {
    path: {
      workspace: string;
      model: string;
      dimension: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/semantic/models/{model}/metrics/{metric}": {
    path: {
      workspace: string;
      model: string;
      metric: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/semantic/models/{model}/relationships/{relationship}": {
    path: {
      workspace: string;
      model: string;
      relationship: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "DELETE /api/workspaces/{workspace}/worksheets/{worksheet_id}": {
    path: {
      workspace: string;
      worksheet_id: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "GET /api/admin/actors": {
    path: never;
    query: {
      kind?: string | number;
      state?: string | number;
      owner?: string | number;
      live?: "true" | "false";
      cursor?: string | number;
      limit?: string | number;
    };
    body: never;
    response: ListActorsResponse;
  };
  "GET /api/admin/actors/{kind}/{actor_id}": {
    path: {
      kind: string;
      actor_id: string;
    };
    query: {
      cursor?: string | number;
      limit?: string | number;
    };
    body: never;
    response: GetActorResponse;
  };
  "GET /api/admin/agents": {
    path: never;
    query: never;
    body: never;
    response: ListAdminAgentsResponse;
  };
  "GET /api/admin/agents/{agent_id}": {
    path: {
      agent_id: string;
    };
    query: never;
    body: never;
    response: GetAgentResponse;
  };
  "GET /api/admin/agents/{agent_id}/access": {
    path: {
      agent_id: string;
    };
    query: never;
    body: never;
    response: GetAgentAccessResponse;
  };
  "GET /api/admin/agents/{agent_id}/monitoring": {
    path: {
      agent_id: string;
    };
    query: never;
    body: never;
    response: GetAgentMonitoringResponse;
  };
  "GET /api/admin/agents/compute-options": {
    path: never;
    query: never;
    body: never;
    response: GetAgentComputeOptionsResponse;
  };
  "GET /api/admin/agents/metrics": {
    path: never;
    query: never;
    body: never;
    response: ListAgentMetricsResponse;
  };
  "GET /api/admin/audit": {
    path: never;
    query: {
      limit?: string | number;
      cursor?: string | number;
      action?: ("auth.login" | "auth.logout" | "token.create" | "token.revoke" | "user.role_change" | "workspace.member_change" | "grant.change" | "agent.bootstrap" | "agent.credential_revoke" | "catalog.change" | "backend.change" | "policy.reject" | "worksheet.share" | "access.denied" | "schedule.run" | "semantic.import" | "lineage.import") | (Array<"auth.login" | "auth.logout" | "token.create" | "token.revoke" | "user.role_change" | "workspace.member_change" | "grant.change" | "agent.bootstrap" | "agent.credential_revoke" | "catalog.change" | "backend.change" | "policy.reject" | "worksheet.share" | "access.denied" | "schedule.run" | "semantic.import" | "lineage.import">);
      outcome?: "success" | "failure";
      actor_id?: string | number;
      since?: string | number;
      until?: string | number;
    };
    body: never;
    response: ListAuditEventsResponse;
  };
  "GET /api/admin/cluster": {
    path: never;
    query: never;
    body: never;
    response: GetClusterResponse;
  };
  "GET /api/admin/machines": {
    path: never;
    query: never;
    body: never;
    response: ListMachinesResponse;
  };
  "GET /api/admin/machines/{kind}/diagram": {
    path: {
      kind: string;
    };
    query: {
      format?: "svg" | "mermaid";
      actor?: string | number;
    };
    body: never;
    response: GetMachineDiagramResponse;
  };
  "GET /api/admin/maintenance/policy": {
    path: never;
    query: never;
    body: never;
    response: GetMaintenancePolicyResponse;
  };
  "GET /api/admin/service-accounts": {
    path: never;
    query: {
      limit?: string | number;
      cursor?: string | number;
    };
    body: never;
    response: ListServiceAccountsResponse;
  };
  "GET /api/admin/service-accounts/{service_account_id}/pats": {
    path: {
      service_account_id: string;
    };
    query: never;
    body: never;
    response: ListServiceAccountPatsResponse;
  };
  "GET /api/admin/storage-backends": {
    path: never;
    query: never;
    body: never;
    response: ListStorageBackendsResponse;
  };
  "GET /api/admin/storage-backends/{storage_backend_id}": {
    path: {
      storage_backend_id: string;
    };
    query: never;
    body: never;
    response: GetStorageBackendResponse;
  };
  "GET /api/admin/users": {
    path: never;
    query: {
      limit?: string | number;
      cursor?: string | number;
    };
    body: never;
    response: ListUsersResponse;
  };
  "GET /api/admin/users/{user_id}/workspaces": {
    path: {
      user_id: string;
    };
    query: never;
    body: never;
    response: ListUserWorkspacesResponse;
  };
  "GET /api/agents": {
    path: never;
    query: never;
    body: never;
    response: ListAgentsResponse;
  };
  "GET /api/auth/methods": {
    path: never;
    query: never;
    body: never;
    response: GetAuthMethodsResponse;
  };
  "GET /api/auth/oidc/{provider}/callback": {
    path: {
      provider: string;
    };
    query: never;
    body: never;
    response: GetOidcCallbackResponse;
  };
  "GET /api/auth/oidc/{provider}/login": {
    path: {
      provider: string;
    };
    query: never;
    body: never;
    response: void;
  };
  "GET /api/catalogs": {
    path: never;
    query: never;
    body: never;
    response: ListCatalogsResponse;
  };
  "GET /api/catalogs/{catalog_id}": {
    path: {
      catalog_id: string;
    };
    query: never;
    body: never;
    response: GetCatalogResponse;
  };
  "GET /api/catalogs/{catalog_id}/migrations": {
    path: {
      catalog_id: string;
    };
    query: {
      cursor?: string | number;
      limit?: string | number;
    };
    body: never;
    response: ListCatalogMigrationsResponse;
  };
  "GET /api/catalogs/{catalog_id}/migrations/{migration_id}": {
    path: {
      catalog_id: string;
      migration_id: string;
    };
    query: never;
    body: never;
    response: GetCatalogMigrationResponse;
  };
  "GET /api/catalogs/{catalog_id}/migrations/{migration_id}/logs": {
    path: {
      catalog_id: string;
      migration_id: string;
    };
    query: {
      after?: string | number;
    };
    body: never;
    response: GetCatalogMigrationLogsResponse;
  };
  "GET /api/healthz": {
    path: never;
    query: never;
    body: never;
    response: GetHealthResponse;
  };
  "GET /api/maintenance/recommendations": {
    path: never;
    query: {
      status?: (string | number) | (Array<string | number>);
      workspace?: string | number;
      catalog?: string | number;
      schema?: string | number;
      table?: string | number;
      cursor?: string | number;
      limit?: string | number;
    };
    body: never;
    response: ListMaintenanceRecommendationsResponse;
  };
  "GET /api/me": {
    path: never;
    query: never;
    body: never;
    response: GetMeResponse;
  };
  "GET /api/me/pats": {
    path: never;
    query: never;
    body: never;
    response: ListMyPatsResponse;
  };
  "GET /api/metrics": {
    path: never;
    query: never;
    body: never;
    response: GetMetricsResponse;
  };
  "GET /api/queries/{query_id}": {
    path: {
      query_id: string;
    };
    query: {
      wait_timeout_s?: string | number;
    };
    body: never;
    response: GetQueryResponse;
  };
  "GET /api/queries/{query_id}/export": {
    path: {
      query_id: string;
    };
    query: {
      format: "csv" | "parquet" | "json";
      order_by?: string | number;
      filter?: string | number;
      search?: string | number;
    };
    body: never;
    response: ExportQueryResultResponse;
  };
  "GET /api/queries/{query_id}/profile": {
    path: {
      query_id: string;
    };
    query: never;
    body: never;
    response: GetQueryProfileResponse;
  };
  "GET /api/queries/{query_id}/rows": {
    path: {
      query_id: string;
    };
    query: {
      limit?: string | number;
      cursor?: string | number;
      offset?: string | number;
      order_by?: string | number;
      filter?: string | number;
      search?: string | number;
    };
    body: never;
    response: GetQueryRowsResponse;
  };
  "GET /api/readyz": {
    path: never;
    query: never;
    body: never;
    response: GetReadinessResponse;
  };
  "GET /api/setup/status": {
    path: never;
    query: never;
    body: never;
    response: GetSetupStatusResponse;
  };
  "GET /api/sql/sessions/{session_id}": {
    path: {
      session_id: string;
    };
    query: never;
    body: never;
    response: GetSqlSessionResponse;
  };
  "GET /api/sql/sessions/{session_id}/statements": {
    path: {
      session_id: string;
    };
    query: {
      cursor?: string | number;
      limit?: string | number;
    };
    body: never;
    response: ListSqlStatementsResponse;
  };
  "GET /api/version": {
    path: never;
    query: never;
    body: never;
    response: GetVersionResponse;
  };
  "GET /api/workspaces": {
    path: never;
    query: never;
    body: never;
    response: ListWorkspacesResponse;
  };
  "GET /api/workspaces/{workspace}": {
    path: {
      workspace: string;
    };
    query: never;
    body: never;
    response: GetWorkspaceResponse;
  };
  "GET /api/workspaces/{workspace}/assistant/conversations": {
    path: {
      workspace: string;
    };
    query: {
      limit?: string | number;
      cursor?: string | number;
    };
    body: never;
    response: ListAssistantConversationsResponse;
  };
  "GET /api/workspaces/{workspace}/assistant/conversations/{conversation_id}": {
    path: {
      workspace: string;
      conversation_id: string;
    };
    query: never;
    body: never;
    response: GetAssistantConversationResponse;
  };
  "GET /api/workspaces/{workspace}/catalog-search": {
    path: {
      workspace: string;
    };
    query: {
      q: string | number;
      limit?: string | number;
      catalog?: string | number;
    };
    body: never;
    response: SearchCatalogsResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs": {
    path: {
      workspace: string;
    };
    query: never;
    body: never;
    response: ListWorkspaceCatalogsResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/grants": {
    path: {
      workspace: string;
      catalog: string;
    };
    query: never;
    body: never;
    response: ListWorkspaceCatalogGrantsResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas": {
    path: {
      workspace: string;
      catalog: string;
    };
    query: never;
    body: never;
    response: ListCatalogSchemasResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
    };
    query: never;
    body: never;
    response: ListCatalogTablesResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
      table: string;
    };
    query: never;
    body: never;
    response: GetCatalogTableResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/column-stats": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
      table: string;
    };
    query: never;
    body: never;
    response: GetCatalogTableColumnStatsResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/health": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
      table: string;
    };
    query: never;
    body: never;
    response: GetCatalogTableHealthResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/lineage": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
      table: string;
    };
    query: {
      direction?: "upstream" | "downstream" | "both";
      depth?: string | number;
      provider?: (string | number) | (Array<string | number>);
      columns_for?: (string | number) | (Array<string | number>);
    };
    body: never;
    response: GetTableLineageResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/sample": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
      table: string;
    };
    query: {
      agent_id?: string | number;
      limit?: string | number;
    };
    body: never;
    response: GetCatalogTableSampleResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/semantic": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
      table: string;
    };
    query: {
      column?: string | number;
    };
    body: never;
    response: GetCatalogTableSemanticResponse;
  };
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/snapshots": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
      table: string;
    };
    query: never;
    body: never;
    response: ListCatalogTableSnapshotsResponse;
  };
  "GET /api/workspaces/{workspace}/lineage/backfill": {
    path: {
      workspace: string;
    };
    query: never;
    body: never;
    response: GetLineageBackfillResponse;
  };
  "GET /api/workspaces/{workspace}/maintenance/health": {
    path: {
      workspace: string;
    };
    query: never;
    body: never;
    response: ListWorkspaceTableHealthResponse;
  };
  "GET /api/workspaces/{workspace}/members": {
    path: {
      workspace: string;
    };
    query: never;
    body: never;
    response: ListWorkspaceMembersResponse;
  };
  "GET /api/workspaces/{workspace}/queries": {
    path: {
      workspace: string;
    };
    query: {
      q?: string | number;
      query_id?: string | number;
      since?: string | number;
      until?: string | number;
      status?: (string | number) | (Array<string | number>);
      statement_type?: (string | number) | (Array<string | number>);
      slower_than_ms?: string | number;
      sort?: "started_at" | "duration";
      dir?: "asc" | "desc";
      cursor?: string | number;
      limit?: string | number;
      origin?: (string | number) | (Array<string | number>);
      session_id?: string | number;
      agent_id?: string | number;
      user_id?: string | number;
      all_workspaces?: "true" | "false";
    };
    body: never;
    response: ListQueriesResponse;
  };
  "GET /api/workspaces/{workspace}/saved-queries": {
    path: {
      workspace: string;
    };
    query: {
      limit?: string | number;
      cursor?: string | number;
    };
    body: never;
    response: ListSavedQueriesResponse;
  };
  "GET /api/workspaces/{workspace}/saved-queries/{saved_query_id}": {
    path: {
      workspace: string;
      saved_query_id: string;
    };
    query: never;
    body: never;
    response: GetSavedQueryResponse;
  };
  "GET /api/workspaces/{workspace}/schedule-runs": {
    path: {
      workspace: string;
    };
    query: {
      status?: ("queued" | "running" | "done" | "failed" | "skipped") | (Array<"queued" | "running" | "done" | "failed" | "skipped">);
      cursor?: string | number;
      limit?: string | number;
    };
    body: never;
    response: ListWorkspaceScheduleRunsResponse;
  };
  "GET /api/workspaces/{workspace}/schedules": {
    path: {
      workspace: string;
    };
    query: never;
    body: never;
    response: ListSchedulesResponse;
  };
  "GET /api/workspaces/{workspace}/schedules/{schedule_id}": {
    path: {
      workspace: string;
      schedule_id: string;
    };
    query: never;
    body: never;
    response: GetScheduleResponse;
  };
  "GET /api/workspaces/{workspace}/schedules/{schedule_id}/runs": {
    path: {
      workspace: string;
      schedule_id: string;
    };
    query: {
      status?: ("queued" | "running" | "done" | "failed" | "skipped") | (Array<"queued" | "running" | "done" | "failed" | "skipped">);
      cursor?: string | number;
      limit?: string | number;
    };
    body: never;
    response: ListScheduleRunsResponse;
  };
  "GET /api/workspaces/{workspace}/search": {
    path: {
      workspace: string;
    };
    query: {
      q: string | number;
      limit?: string | number;
      catalog?: string | number;
    };
    body: never;
    response: SearchWorkspaceResponse;
  };
  "GET /api/workspaces/{workspace}/semantic/models": {
    path: {
      workspace: string;
    };
    query: {
      status?: ("draft" | "published" | "deprecated") | (Array<"draft" | "published" | "deprecated">);
    };
    body: never;
    response: ListSemanticModelsResponse;
  };
  "GET /api/workspaces/{workspace}/semantic/models/{model}": {
    path: {
      workspace: string;
      model: string;
    };
    query: never;
    body: never;
    response: GetSemanticModelResponse;
  };
  "GET /api/workspaces/{workspace}/semantic/models/{model}/metrics/{metric}/dimensions": {
    path: {
      workspace: string;
      model: string;
      metric: string;
    };
    query: never;
    body: never;
    response: ListSemanticMetricDimensionsResponse;
  };
  "GET /api/workspaces/{workspace}/semantic/search": {
    path: {
      workspace: string;
    };
    query: {
      q: string | number;
      limit?: string | number;
      status?: ("draft" | "published" | "deprecated") | (Array<"draft" | "published" | "deprecated">);
    };
    body: never;
    response: SearchSemanticResponse;
  };
  "GET /api/workspaces/{workspace}/sql/sessions": {
    path: {
      workspace: string;
    };
    query: {
      status?: (string | number) | (Array<string | number>);
      cursor?: string | number;
      limit?: string | number;
    };
    body: never;
    response: ListSqlSessionsResponse;
  };
  "GET /api/workspaces/{workspace}/worksheets": {
    path: {
      workspace: string;
    };
    query: {
      scope?: "mine" | "shared";
      cursor?: string | number;
      limit?: string | number;
    };
    body: never;
    response: ListWorksheetsResponse;
  };
  "GET /api/workspaces/{workspace}/worksheets/{worksheet_id}": {
    path: {
      workspace: string;
      worksheet_id: string;
    };
    query: never;
    body: never;
    response: GetWorksheetResponse;
  };
  "PATCH /api/admin/agents/{agent_id}/access-mode": {
    path: {
      agent_id: string;
    };
    query: never;
    body: UpdateAgentAccessModeBody;
    response: UpdateAgentAccessModeResponse;
  };
  "PATCH /api/admin/service-accounts/{service_account_id}": {
    path: {
      service_account_id: string;
    };
    query: never;
    body: UpdateServiceAccountBody;
    response: UpdateServiceAccountResponse;
  };
  "PATCH /api/admin/storage-backends/{storage_backend_id}": {
    path: {
      storage_backend_id: string;
    };
    query: never;
    body: UpdateStorageBackendCredentialsBody;
    response: UpdateStorageBackendCredentialsResponse;
  };
  "PATCH /api/admin/users/{user_id}": {
    path: {
      user_id: string;
    };
    query: never;
    body: UpdateUserBody;
    response: UpdateUserResponse;
  };
  "PATCH /api/workspaces/{workspace}/saved-queries/{saved_query_id}": {
    path: {
      workspace: string;
      saved_query_id: string;
    };
    query: never;
    body: UpdateSavedQueryBody;
    response: UpdateSavedQueryResponse;
  };
  "PATCH /api/workspaces/{workspace}/schedules/{schedule_id}": {
    path: {
      workspace: string;
      schedule_id: string;
    };
    query: never;
    body: UpdateScheduleBody;
    response: UpdateScheduleResponse;
  };
  "PATCH /api/workspaces/{workspace}/semantic/models/{model}": {
    path: {
      workspace: string;
      model: string;
    };
    query: never;
    body: UpdateSemanticModelBody;
    response: UpdateSemanticModelResponse;
  };
  "PATCH /api/workspaces/{workspace}/semantic/models/{model}/metrics/{metric}": {
    path: {
      workspace: string;
      model: string;
      metric: string;
    };
    query: never;
    body: UpdateSemanticMetricBody;
    response: UpdateSemanticMetricResponse;
  };
  "PATCH /api/workspaces/{workspace}/worksheets/{worksheet_id}": {
    path: {
      workspace: string;
      worksheet_id: string;
    };
    query: never;
    body: UpdateWorksheetBody;
    response: UpdateWorksheetResponse;
  };
  "POST /api/admin/agents/{agent_id}/disconnect": {
    path: {
      agent_id: string;
    };
    query: never;
    body: never;
    response: DisconnectAgentResponse;
  };
  "POST /api/admin/agents/{agent_id}/restart": {
    path: {
      agent_id: string;
    };
    query: never;
    body: never;
    response: RestartAgentResponse;
  };
  "POST /api/admin/agents/{agent_id}/terminate": {
    path: {
      agent_id: string;
    };
    query: never;
    body: never;
    response: TerminateAgentResponse;
  };
  "POST /api/admin/agents/bootstrap": {
    path: never;
    query: never;
    body: CreateAgentBootstrapTokenBody;
    response: CreateAgentBootstrapTokenResponse;
  };
  "POST /api/admin/agents/elastic": {
    path: never;
    query: never;
    body: CreateElasticAgentBody;
    response: CreateElasticAgentResponse;
  };
  "POST /api/admin/maintenance/scan": {
    path: never;
    query: never;
    body: ScanMaintenanceBody;
    response: ScanMaintenanceResponse;
  };
  "POST /api/admin/service-accounts": {
    path: never;
    query: never;
    body: CreateServiceAccountBody;
    response: CreateServiceAccountResponse;
  };
  "POST /api/admin/service-accounts/{service_account_id}/pats": {
    path: {
      service_account_id: string;
    };
    query: never;
    body: CreateServiceAccountPatBody;
    response: CreateServiceAccountPatResponse;
  };
  "POST /api/admin/storage-backends": {
    path: never;
    query: never;
    body: CreateStorageBackendBody;
    response: CreateStorageBackendResponse;
  };
  "POST /api/admin/users": {
    path: never;
    query: never;
    body: CreateUserBody;
    response: CreateUserResponse;
  };
  "POST /api/auth/login": {
    path: never;
    query: never;
    body: CreateLoginBody;
    response: CreateLoginResponse;
  };
  "POST /api/auth/logout": {
    path: never;
    query: never;
    body: never;
    response: void;
  };
  "POST /api/catalogs": {
    path: never;
    query: never;
    body: CreateCatalogBody;
    response: CreateCatalogResponse;
  };
  "POST /api/catalogs/{catalog_id}/migrations": {
    path: {
      catalog_id: string;
    };
    query: never;
    body: StartCatalogMigrationBody;
    response: StartCatalogMigrationResponse;
  };
  "POST /api/catalogs/{catalog_id}/migrations/{migration_id}/cancel": {
    path: {
      catalog_id: string;
      migration_id: string;
    };
    query: never;
    body: never;
    response: CancelCatalogMigrationResponse;
  };
  "POST /api/maintenance/recommendations/{recommendation_id}/apply": {
    path: {
      recommendation_id: string;
    };
    query: never;
    body: ApplyMaintenanceRecommendationBody;
    response: ApplyMaintenanceRecommendationResponse;
  };
  "POST /api/maintenance/recommendations/{recommendation_id}/dismiss": {
    path: {
      recommendation_id: string;
    };
    query: never;
    body: never;
    response: DismissMaintenanceRecommendationResponse;
  };
  "POST /api/me/pats": {
    path: never;
    query: never;
    body: CreateMyPatBody;
    response: CreateMyPatResponse;
  };
  "POST /api/queries/{query_id}/cancel": {
    path: {
      query_id: string;
    };
    query: never;
    body: never;
    response: CancelQueryResponse;
  };
  "POST /api/setup/admin": {
    path: never;
    query: never;
    body: CreateSetupAdminBody;
    response: CreateSetupAdminResponse;
  };
  "POST /api/sql/sessions/{session_id}/staging-files": {
    path: {
      session_id: string;
    };
    query: never;
    body: CreateSqlStagingFilesBody;
    response: CreateSqlStagingFilesResponse;
  };
  "POST /api/sql/sessions/{session_id}/statements": {
    path: {
      session_id: string;
    };
    query: never;
    body: CreateSqlStatementBody;
    response: CreateSqlStatementResponse;
  };
  "POST /api/workspaces": {
    path: never;
    query: never;
    body: CreateWorkspaceBody;
    response: CreateWorkspaceResponse;
  };
  "POST /api/workspaces/{workspace}/assistant/conversations": {
    path: {
      workspace: string;
    };
    query: never;
    body: CreateAssistantConversationBody;
    response: CreateAssistantConversationResponse;
  };
  "POST /api/workspaces/{workspace}/assistant/conversations/{conversation_id}/messages": {
    path: {
      workspace: string;
      conversation_id: string;
    };
    query: never;
    body: CreateAssistantMessageBody;
    response: CreateAssistantMessageResponse;
  };
  "POST /api/workspaces/{workspace}/catalogs/{catalog}/refresh-stats": {
    path: {
      workspace: string;
      catalog: string;
    };
    query: never;
    body: never;
    response: RefreshCatalogStatsResponse;
  };
  "POST /api/workspaces/{workspace}/catalogs/{catalog}/schemas": {
    path: {
      workspace: string;
      catalog: string;
    };
    query: never;
    body: CreateCatalogSchemaBody;
    response: CreateCatalogSchemaResponse;
  };
  "POST /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables": {
    path: {
      workspace: string;
      catalog: string;
      schema: string;
    };
    query: never;
    body: CreateCatalogTableBody;
    response: CreateCatalogTableResponse;
  };
  "POST /api/workspaces/{workspace}/lineage/backfill": {
    path: {
      workspace: string;
    };
    query: never;
    body: never;
    response: StartLineageBackfillResponse;
  };
  "POST /api/workspaces/{workspace}/lineage/imports": {
    path: {
      workspace: string;
    };
    query: never;
    body: ImportLineageBody;
    response: ImportLineageResponse;
  };
  "POST /api/workspaces/{workspace}/lineage/imports/{provider}": {
    path: {
      workspace: string;
      provider: string;
    };
    query: never;
    body: ImportLineageArtifactBody;
    response: ImportLineageArtifactResponse;
  };
  "POST /api/workspaces/{workspace}/queries": {
    path: {
      workspace: string;
    };
    query: never;
    body: CreateQueryBody;
    response: CreateQueryResponse;
  };
  "POST /api/workspaces/{workspace}/saved-queries": {
    path: {
      workspace: string;
    };
    query: never;
    body: CreateSavedQueryBody;
    response: CreateSavedQueryResponse;
  };
  "POST /api/workspaces/{workspace}/schedules": {
    path: {
      workspace: string;
    };
    query: never;
    body: CreateScheduleBody;
    response: CreateScheduleResponse;
  };
  "POST /api/workspaces/{workspace}/schedules/{schedule_id}/run": {
    path: {
      workspace: string;
      schedule_id: string;
    };
    query: never;
    body: never;
    response: RunScheduleResponse;
  };
  "POST /api/workspaces/{workspace}/semantic/compile": {
    path: {
      workspace: string;
    };
    query: {
      published_only?: "true" | "false";
    };
    body: CompileSemanticQueryBody;
    response: CompileSemanticQueryResponse;
  };
  "POST /api/workspaces/{workspace}/semantic/imports/{provider}": {
    path: {
      workspace: string;
      provider: string;
    };
    query: {
      reconcile?: "provider_run" | "none";
    };
    body: ImportSemanticModelsBody;
    response: ImportSemanticModelsResponse;
  };
  "POST /api/workspaces/{workspace}/semantic/models": {
    path: {
      workspace: string;
    };
    query: never;
    body: CreateSemanticModelBody;
    response: CreateSemanticModelResponse;
  };
  "POST /api/workspaces/{workspace}/semantic/models/{model}/datasets": {
    path: {
      workspace: string;
      model: string;
    };
    query: never;
    body: CreateSemanticDatasetBody;
    response: CreateSemanticDatasetResponse;
  };
  "POST /api/workspaces/{workspace}/semantic/models/{model}/deprecate": {
    path: {
      workspace: string;
      model: string;
    };
    query: never;
    body: never;
    response: DeprecateSemanticModelResponse;
  };
  "POST /api/workspaces/{workspace}/semantic/models/{model}/dimensions": {
    path: {
      workspace: string;
      model: string;
    };
    query: never;
    body: CreateSemanticDimensionBody;
    response: CreateSemanticDimensionResponse;
  };
  "POST /api/workspaces/{workspace}/semantic/models/{model}/metrics": {
    path: {
      workspace: string;
      model: string;
    };
    query: never;
    body: CreateSemanticMetricBody;
    response: CreateSemanticMetricResponse;
  };
  "POST /api/workspaces/{workspace}/semantic/models/{model}/publish": {
    path: {
      workspace: string;
      model: string;
    };
    query: never;
    body: never;
    response: PublishSemanticModelResponse;
  };
  "POST /api/workspaces/{workspace}/semantic/models/{model}/relationships": {
    path: {
      workspace: string;
      model: string;
    };
    query: never;
    body: CreateSemanticRelationshipBody;
    response: CreateSemanticRelationshipResponse;
  };
  "POST /api/workspaces/{workspace}/semantic/models/{model}/validate": {
    path: {
      workspace: string;
      model: string;
    };
    query: never;
    body: never;
    response: ValidateSemanticModelResponse;
  };
  "POST /api/workspaces/{workspace}/sql/sessions": {
    path: {
      workspace: string;
    };
    query: never;
    body: CreateSqlSessionBody;
    response: CreateSqlSessionResponse;
  };
  "POST /api/workspaces/{workspace}/worksheets": {
    path: {
      workspace: string;
    };
    query: never;
    body: CreateWorksheetBody;
    response: CreateWorksheetResponse;
  };
  "PUT /api/admin/agents/{agent_id}/grants": {
    path: {
      agent_id: string;
    };
    query: never;
    body: PutAgentGrantBody;
    response: PutAgentGrantResponse;
  };
  "PUT /api/admin/maintenance/policy": {
    path: never;
    query: never;
    body: PutMaintenancePolicyBody;
    response: PutMaintenancePolicyResponse;
  };
  "PUT /api/workspaces/{workspace}/catalogs/{catalog}": {
    path: {
      workspace: string;
      catalog: string;
    };
    query: never;
    body: AttachWorkspaceCatalogBody;
    response: AttachWorkspaceCatalogResponse;
  };
  "PUT /api/workspaces/{workspace}/catalogs/{catalog}/grants": {
    path: {
      workspace: string;
      catalog: string;
    };
    query: never;
    body: PutWorkspaceCatalogGrantBody;
    response: PutWorkspaceCatalogGrantResponse;
  };
  "PUT /api/workspaces/{workspace}/members/{user_id}": {
    path: {
      workspace: string;
      user_id: string;
    };
    query: never;
    body: PutWorkspaceMemberBody;
    response: PutWorkspaceMemberResponse;
  };
}

/** The values each query parameter with a fixed set accepts, by operation (filters offer these). */
export const queryLiterals = {
  "DELETE /api/workspaces/{workspace}/semantic/imports": {
    provider: ["native", "transform"],
  },
  "GET /api/admin/actors": {
    live: ["true", "false"],
  },
  "GET /api/admin/audit": {
    action: ["auth.login", "auth.logout", "token.create", "token.revoke", "user.role_change", "workspace.member_change", "grant.change", "agent.bootstrap", "agent.credential_revoke", "catalog.change", "backend.change", "policy.reject", "worksheet.share", "access.denied", "schedule.run", "semantic.import", "lineage.import"],
    outcome: ["success", "failure"],
  },
  "GET /api/admin/machines/{kind}/diagram": {
    format: ["svg", "mermaid"],
  },
  "GET /api/queries/{query_id}/export": {
    format: ["csv", "parquet", "json"],
  },
  "GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/lineage": {
    direction: ["upstream", "downstream", "both"],
  },
  "GET /api/workspaces/{workspace}/queries": {
    sort: ["started_at", "duration"],
    dir: ["asc", "desc"],
    all_workspaces: ["true", "false"],
  },
  "GET /api/workspaces/{workspace}/schedule-runs": {
    status: ["queued", "running", "done", "failed", "skipped"],
  },
  "GET /api/workspaces/{workspace}/schedules/{schedule_id}/runs": {
    status: ["queued", "running", "done", "failed", "skipped"],
  },
  "GET /api/workspaces/{workspace}/semantic/models": {
    status: ["draft", "published", "deprecated"],
  },
  "GET /api/workspaces/{workspace}/semantic/search": {
    status: ["draft", "published", "deprecated"],
  },
  "GET /api/workspaces/{workspace}/worksheets": {
    scope: ["mine", "shared"],
  },
  "POST /api/workspaces/{workspace}/semantic/compile": {
    published_only: ["true", "false"],
  },
  "POST /api/workspaces/{workspace}/semantic/imports/{provider}": {
    reconcile: ["provider_run", "none"],
  },
} as const;
