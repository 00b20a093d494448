// Names for the generated shapes (generated.ts, written from the server's OpenAPI document by `node bin/eider.ts
// openapi --typescript`) that screens pass between components; a call's own types come from its operation (call in
// client.ts). The profile's recursive operator tree and the rows of a page are closed here over the generated types.
import type * as Api from './generated.ts';

export type User = Api.GetMeResponse;
export type Workspace = Api.ListWorkspacesResponse[number];
export type Token = Api.ListMyPatsResponse[number];
export type IssuedToken = Api.CreateMyPatResponse;
export type QueryOut = Api.GetQueryResponse;
export type ColumnSchema = NonNullable<QueryOut['column_schema']>[number];
/** the server declares rows opaque (see http/routes/queries.ts); each is an object keyed by column name */
export type RowsPage = Omit<Api.GetQueryRowsResponse, 'rows'> & { rows: Array<Record<string, unknown>> };
export const asRowsPage = (page: Api.GetQueryRowsResponse) => page as RowsPage;
export type Agent = Api.ListAgentsResponse[number];
/** an elastic agent's lifecycle: null on agents that were not provisioned by elastic compute */
export type ElasticInfo = NonNullable<Agent['elastic']>;
export type ComputeOption = Api.GetAgentComputeOptionsResponse[number];
export type CatalogOut = Api.ListCatalogsResponse[number];
/** a catalog as a workspace's listing shows it: with is_default and the attachment's access_mode */
export type WorkspaceCatalog = Api.ListWorkspaceCatalogsResponse[number];
export type TableOut = Api.GetCatalogTableResponse;
export type StorageBackend = Api.ListStorageBackendsResponse[number];
export type UpdateStorageBackendCredentialsBody = Api.UpdateStorageBackendCredentialsBody;
export type Cluster = Api.GetClusterResponse;
export type Lineage = Api.GetTableLineageResponse;
export type SavedQuery = Api.GetSavedQueryResponse;
export type SavedQueryPage = Api.ListSavedQueriesResponse;
/** a worksheet kept on the server: the caller's own (editable), or one another member shared with the workspace */
export type WorksheetOut = Api.GetWorksheetResponse;
export type WorksheetPage = Api.ListWorksheetsResponse;
export type Schedule = Api.GetScheduleResponse;
export type ActorSummary = Api.ListActorsResponse['items'][number];
/** a workspace table's health as the Lakehouse health page lists it (worst first) */
export type TableHealthRow = Api.ListWorkspaceTableHealthResponse[number];
export type TableHealth = Api.GetCatalogTableHealthResponse;
export type Recommendation = Api.ListMaintenanceRecommendationsResponse['items'][number];
export type RecommendationKind = Recommendation['kind'];
export type RecommendationStatus = Recommendation['status'];
export type MaintenancePolicy = Api.GetMaintenancePolicyResponse;
export type MaintenancePolicyBody = Api.PutMaintenancePolicyBody;
export type ScanReport = Api.ScanMaintenanceResponse;

/** The profile as the server declares it; the operator tree is recursive, which the generated type leaves open. */
type GeneratedOperator = NonNullable<Api.GetQueryProfileResponse['operators']>;
export type ProfileOperator = Omit<GeneratedOperator, 'children'> & { children: ProfileOperator[] };
export type QueryProfile = Omit<Api.GetQueryProfileResponse, 'operators'> & { operators: ProfileOperator | null };
export const asProfile = (profile: Api.GetQueryProfileResponse) => profile as QueryProfile;

/** an actor as the inspection endpoint answers it: the actor with a page of its transitions */
export type ActorDetail = Api.GetActorResponse;
export type ActorOut = Omit<ActorDetail, 'transitions'>;
export type TransitionOut = ActorDetail['transitions']['items'][number];
export type SemanticModel = Api.GetSemanticModelResponse;
export type CompiledQuery = Api.CompileSemanticQueryResponse;
