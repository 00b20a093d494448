// Operator inspection: machine definitions, server-rendered state charts, and a live actor with its history.
import { Schema } from 'effect';
import { route } from '../route.ts';
import { AppError, notFound } from '../../domain/errors.ts';
import { ActorOutSchema, ActorSummarySchema, ClusterOutSchema, clusterView, getActor, listActors, listMachineDefinitions, listTransitions, MachineDefinitionOutSchema, TransitionOutSchema } from '../../actors/inspection.ts';
import { machineKinds } from '../../machines/index.ts';
import { machineDefinition } from '../../machines/definition.ts';
import { toMermaid, toSvg } from '../../machines/diagram.ts';

const kinds = Object.keys(machineKinds);
const Kind = Schema.String;
const unknownKind = (k: string) => new AppError(404, 'not_found', `no machine kind ${k}; kinds: ${kinds.join(', ')}`);
const ActorPage = Schema.Struct({ items: Schema.Array(ActorSummarySchema), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean });

const ActorOut = Schema.Struct({
  ...ActorOutSchema.fields,
  /** its transitions in order, paged by `cursor` */
  transitions: Schema.Struct({ items: Schema.Array(TransitionOutSchema), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean }),
});
export const inspectionRoutes = [
  route({
    method: 'GET',
    path: '/api/admin/machines',
    operationId: 'list_machines',
    summary: 'Every lifecycle machine with its definition (states, events, transitions)',
    tags: ['inspection'],
    access: { kind: 'admin' },
    responses: { 200: Schema.Array(MachineDefinitionOutSchema) },
    handler: async () => ({ status: 200, body: listMachineDefinitions() }),
  }),
  route({
    method: 'GET',
    path: '/api/admin/machines/:kind/diagram',
    operationId: 'get_machine_diagram',
    summary: 'The state chart as SVG (or ?format=mermaid); ?actor={id} highlights that actor’s current state',
    tags: ['inspection'],
    access: { kind: 'admin' },
    params: Schema.Struct({ kind: Kind }),
    query: Schema.Struct({
      format: Schema.optionalKey(Schema.Literals(['svg', 'mermaid'])),
      actor: Schema.optionalKey(Schema.String),
    }),
    produces: 'image/svg+xml',
    responses: { 200: Schema.String, 404: null },
    handler: async ({ ctx, params, query, reply }) => {
      const k = (machineKinds as Record<string, (typeof machineKinds)[keyof typeof machineKinds]>)[params.kind];
      if (!k) throw unknownKind(params.kind);
      let current: string | undefined;
      if (query.actor) {
        const actor = await getActor(ctx.db, params.kind, query.actor);
        if (!actor) throw notFound('actor');
        current = actor.state;
      }
      const def = machineDefinition(k.machine);
      if (query.format === 'mermaid') {
        reply.type('text/plain; charset=utf-8');
        return { status: 200, body: toMermaid(def, current) };
      }
      return { status: 200, body: toSvg(def, current) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/cluster',
    operationId: 'get_cluster',
    summary: 'The api replicas (live, draining, what each owns), overdue deadlines and pending effects',
    tags: ['inspection'],
    access: { kind: 'admin' },
    responses: { 200: ClusterOutSchema },
    handler: async ({ ctx }) => ({ status: 200, body: await clusterView(ctx.db, ctx.config.AGENT_PRESENCE_TTL_S) }),
  }),
  route({
    method: 'GET',
    path: '/api/admin/actors',
    operationId: 'list_actors',
    summary: 'Actors newest first, filtered by kind, state, owner replica and liveness; paged',
    tags: ['inspection'],
    access: { kind: 'admin' },
    query: Schema.Struct({
      kind: Schema.optionalKey(Kind),
      state: Schema.optionalKey(Schema.String),
      owner: Schema.optionalKey(Schema.String),
      live: Schema.optionalKey(Schema.Literals(['true', 'false'])),
      cursor: Schema.optionalKey(Schema.String),
      limit: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 500 }))),
    }),
    responses: { 200: ActorPage, 400: null, 404: null },
    handler: async ({ ctx, query }) => {
      if (query.kind !== undefined && !kinds.includes(query.kind)) throw unknownKind(query.kind);
      try {
        const page = await listActors(ctx.db, { ...query, live: query.live === undefined ? undefined : query.live === 'true' });
        return { status: 200, body: { items: page.items, cursor: page.next_cursor, has_more: page.next_cursor !== null } };
      } catch (e) {
        if ((e as { code?: string }).code === 'invalid_cursor') throw new AppError(400, 'invalid_cursor', (e as Error).message);
        throw e;
      }
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/actors/:kind/:actor_id',
    operationId: 'get_actor',
    summary: 'A live actor: state, version, context summary (no secrets) and its transition history, paged',
    tags: ['inspection'],
    access: { kind: 'admin' },
    params: Schema.Struct({ kind: Kind, actor_id: Schema.String }),
    query: Schema.Struct({
      cursor: Schema.optionalKey(Schema.String),
      limit: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 500 }))),
    }),
    responses: { 200: ActorOut, 400: null, 404: null },
    handler: async ({ ctx, params, query }) => {
      if (!kinds.includes(params.kind)) throw unknownKind(params.kind);
      const actor = await getActor(ctx.db, params.kind, params.actor_id);
      if (!actor) throw notFound('actor');
      let page;
      try {
        page = await listTransitions(ctx.db, params.kind, params.actor_id, { cursor: query.cursor, limit: query.limit });
      } catch (e) {
        throw new AppError(400, 'invalid_cursor', (e as Error).message);
      }
      return {
        status: 200,
        body: { ...actor, transitions: { items: page.items, cursor: page.next_cursor, has_more: page.next_cursor !== null } },
      };
    },
  }),
];
