// Every REST route of the api, in one table (the OpenAPI document and the authorization matrix read it).
import type { RouteDef } from '../route.ts';
import { systemRoutes } from './system.ts';
import { identityRoutes } from './identity.ts';
import { workspaceRoutes } from './workspaces.ts';
import { agentRoutes } from './agents.ts';
import { queryRoutes } from './queries.ts';
import { inspectionRoutes } from './inspection.ts';
import { catalogRoutes } from './catalogs.ts';
import { auditRoutes } from './audit.ts';
import { oidcRoutes } from './oidc.ts';
import { semanticRoutes } from './semantic.ts';
import { sqlSessionRoutes } from './sqlSessions.ts';
import { scheduleRoutes } from './schedules.ts';
import { worksheetRoutes } from './worksheets.ts';
import { lineageRoutes } from './lineage.ts';
import { assistantRoutes } from './assistant.ts';
import { maintenanceRoutes } from './maintenance.ts';
import { migrationRoutes } from './migrations.ts';

export const allRoutes: RouteDef[] = [
  ...systemRoutes,
  ...identityRoutes,
  ...oidcRoutes,
  ...workspaceRoutes,
  ...agentRoutes,
  ...queryRoutes,
  ...catalogRoutes,
  ...migrationRoutes,
  ...inspectionRoutes,
  ...auditRoutes,
  ...semanticRoutes,
  ...sqlSessionRoutes,
  ...scheduleRoutes,
  ...worksheetRoutes,
  ...lineageRoutes,
  ...assistantRoutes,
  ...maintenanceRoutes,
];
