// Response shapes the app reads, as the service spec and decisions define them. Fields the spec leaves open are
// optional here and read defensively.

export interface User {
  id: string;
  email: string | null;
  name: string;
  role: string;
  auth_provider: string;
  is_active: boolean;
  permissions: string[];
  created_at: string;
}

export interface AuthMethods {
  local: boolean;
  ldap: boolean;
  oidc_providers: Array<{ id: string; label: string }>;
}

export interface Workspace {
  id: string;
  slug: string;
  name: string;
  created_at: string;
  default_catalog: string | null;
  role?: string;
}

export interface Page<T> {
  items: T[];
  cursor: string | null;
  has_more: boolean;
}

export interface Token {
  id: string;
  created_at: string;
  expires_at: string | null;
  current?: boolean;
}

export interface IssuedToken extends Token {
  token: string;
}

export interface ServiceAccount {
  id: string;
  name: string;
  role: string;
  is_active: boolean;
  permissions: string[];
  created_at: string;
}

export interface ColumnSchema {
  name: string;
  type: string;
}

export type QueryStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

export interface QueryOut {
  id: string;
  workspace_id: string;
  agent_id: string | null;
  user_id: string;
  sql: string;
  status: QueryStatus;
  statement_type: string | null;
  origin?: string;
  session_id: string | null;
  row_count: number | null;
  duration_ms: number | null;
  error: string | null;
  error_code?: string | null;
  columns: string[] | null;
  column_schema: ColumnSchema[] | null;
  started_at: string | null;
  running_at?: string | null;
  finished_at: string | null;
}

export interface RowsPage {
  rows: Array<Record<string, unknown>>;
  columns: string[];
  column_schema: ColumnSchema[] | null;
  cursor: string | null;
  total: number;
}

export interface ProfileOperator {
  name: string;
  timing_ms: number;
  cardinality: number;
  children: ProfileOperator[];
}

export interface QueryProfile {
  summary: { total_ms: number; rows: number; peak_memory_bytes: number | null; cpu_ms?: number };
  operators: ProfileOperator | null;
}

export interface Agent {
  id: string;
  name: string;
  status: string;
  version?: string | null;
  capabilities?: Record<string, unknown> | null;
  access_tier?: string;
  access_mode?: string;
  owner_url?: string | null;
  connected_at?: string | null;
  last_heartbeat_at?: string | null;
  /** id of the live connection actor, when the server exposes it (its state chart is keyed by it) */
  connection_id?: string | null;
}

export interface CatalogOut {
  id: string;
  slug: string;
  storage_backend_id?: string;
  storage_kind?: string;
  root_uri?: string;
  created_by?: string;
  created_at?: string;
  is_default?: boolean;
  access_mode?: string;
}

export interface TableOut {
  name: string;
  schema: string;
  catalog: string;
  columns: Array<{ name: string; type: string; nullable?: boolean; id?: number; doc?: string }>;
  location?: string;
  current_snapshot_id?: string | null;
  row_count?: number | null;
  size_bytes?: number | null;
  last_write?: unknown;
}

export interface StorageBackend {
  id: string;
  name: string;
  kind: string;
  root_uri: string;
  endpoint?: string | null;
  region?: string | null;
  created_at?: string;
}

export interface ActorOut {
  kind: string;
  id: string;
  state: string;
  status: string;
  version: number;
  terminal: boolean;
  deadline_at: string | null;
  last_error: string | null;
  context?: unknown;
  created_at: string;
  updated_at: string;
}

export interface TransitionOut {
  seq: number;
  event: string;
  payload?: unknown;
  from_state: string | null;
  to_state: string;
  at: string;
  replica?: string;
}
