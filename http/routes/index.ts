// Every REST route of the api, in one table (the OpenAPI document and the authorization matrix read it).
import type { RouteDef } from '../route.ts';
import { systemRoutes } from './system.ts';
import { identityRoutes } from './identity.ts';
import { workspaceRoutes } from './workspaces.ts';

export const allRoutes: RouteDef[] = [...systemRoutes, ...identityRoutes, ...workspaceRoutes];
