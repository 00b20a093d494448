// What every handler may reach: the database, configuration, logger and the process's services.
import type { Db } from '../runtime/db.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { Config } from '../runtime/config.ts';
import type { Logger } from '../runtime/logger.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type { ElasticCompute } from '../actors/elasticCompute.ts';
import type { AgentSockets } from '../runtime/agentSockets.ts';
import type { ActorHost } from '../actors/types.ts';
import type { CatalogClient } from '../runtime/catalogClient.ts';
import type { AgentLink } from '../actors/agentLink.ts';
import type { LdapSettings } from '../domain/ldap.ts';
import type { OidcClients } from '../domain/oidc.ts';

export interface AppContext {
  db: Db;
  config: Config;
  logger: Logger;
  metrics: Metrics | undefined;
  version: string;
  /** the setup token of this replica (spec: checked against the local file) */
  setupToken: string;
  /** true once shutdown began: readiness answers 503 */
  draining: { value: boolean };
  /** hooks that later subsystems register to run inside first-admin setup (default workspace, catalog attach) */
  /** the actor host running this replica's lifecycles */
  host: ActorHost;
  /** this replica's live agent sockets */
  sockets: AgentSockets;
  /** reaches any agent: on this replica's socket, or through the replica holding it */
  link: AgentLink;
  /** this replica's id and the address its peers reach it at */
  replica: { readonly id: string; readonly internalUrl: string };
  /** LDAP sign-in settings; null when LDAP_ENABLED is off */
  ldap: LdapSettings | null;
  /** the configured OIDC providers and their relying-party clients (none configured: an empty list) */
  oidc: OidcClients;
  /** SECRET_KEY (or the generated one): signs the OIDC handshake cookie */
  secretKey: string;
  /** this process's tracer (a no-op one when OTEL_EXPORTER_OTLP_ENDPOINT is unset) */
  tracing: Tracing;
  /** the catalog service client; absent when this process runs without one */
  catalog?: CatalogClient;
  /** elastic compute; absent while ELASTIC_COMPUTE_ENABLED is off */
  elastic?: ElasticCompute;
  /** storage migrations: `tickNow` runs the leader-elected runner's tick at once (a new migration begins sooner) */
  migrations?: { tickNow(): Promise<unknown> };
  onFirstAdmin: Array<(tx: import('../runtime/db.ts').Queryable, adminId: string, workspaceId: string) => Promise<void>>;
}
