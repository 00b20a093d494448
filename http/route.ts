// A route is declared once: method, path, operation id, who may call it, and effect Schemas for its inputs and
// outputs. The same declaration validates requests, documents the route in OpenAPI, and feeds the authorization
// matrix test, so a route added later is covered by all three automatically.
import { Cause, Exit, Schema, SchemaIssue } from 'effect';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AlongWithCaller, Permission, Principal } from '../domain/identity.ts';
import type { AuditAction } from '../domain/audit.ts';
import type { WorkspaceAccess, WorkspaceRole } from '../domain/workspaces.ts';
import { AppError } from '../domain/errors.ts';
import type { AppContext } from '../usecases/context.ts';
import type { ActorWatch } from '../actors/types.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call a route. Checked before any input is decoded, in this order: authentication, then access. */
export type Access =
  | { kind: 'public' }
  | { kind: 'authenticated' }
  | { kind: 'permission'; permission: Permission }
  | { kind: 'admin' }
  | { kind: 'workspace'; role: WorkspaceRole }
  /** the handler decides (per-resource tiers such as agents or queries); the matrix only checks authentication */
  | { kind: 'resource'; note: string };

interface HandlerInput<P, Q, B> {
  ctx: AppContext;
  principal: Principal;
  params: P;
  query: Q;
  body: B;
  ws: WorkspaceAccess | undefined;
  /** what the route's `along` read with the credential (undefined when it declares none, or read nothing) */
  along: Record<string, unknown> | undefined;
  /** the watch the route's `watchFirst` began before that statement (null when it declares none, or began none) */
  watch: ActorWatch | null;
  req: FastifyRequest;
  reply: FastifyReply;
}

/** What a handler returns for one declared status: the body is that status's schema type (nothing for a null one). */
type ReplyFor<S, Status extends number> = S extends Schema.Top
  ? { status: Status; body: S['Type']; headers?: Record<string, string> }
  : { status: Status; body?: undefined; headers?: Record<string, string> };

/** A handler's reply: one of the statuses the route declares, with the body its schema describes. */
export type ReplyOf<R extends Responses> = { [K in keyof R & number]: ReplyFor<R[K], K> }[keyof R & number];

/** Documented responses; a null schema documents an empty body. */
export type Responses = Record<number, Schema.Top | null>;

/** The decoded type of an optional request part. */
type Decoded<S> = S extends Schema.Top ? S['Type'] : undefined;

/** What every route declares besides its schemas and handler: the OpenAPI and authorization facts. */
interface RouteMeta {
  method: Method;
  path: string;
  operationId: string;
  summary: string;
  /** longer OpenAPI description: rules a client must know that the schemas cannot say */
  description?: string;
  tags: string[];
  access: Access;
  /** raw routes skip JSON replies (HTML, SVG, text) */
  produces?: string;
  /**
   * The media types a request body may be sent as (`application/json` when absent). Any other Content-Type on a
   * POST, PUT, PATCH or DELETE is 415, so an HTML form (urlencoded, multipart, text/plain) cannot post to the route.
   */
  consumes?: readonly string[];
  /**
   * A sensitive route: the server appends a `failure` row of `action` for every refusal once the caller is known
   * (access, input, the handler's own errors), and with `success` also the row of a success (routes whose handler
   * records its success in its own transaction leave it out). `target` names the path parameter holding its id.
   */
  audit?: { action: AuditAction; success?: boolean; target?: { kind: string; param: string } };
  /** A feature switch, checked once the caller is let in and before any input is decoded: throws its answer when off. */
  gate?: (ctx: AppContext) => void;
  /**
   * A resource route's read of its resource, made in the statement that checks the caller's credential (a round trip
   * fewer), from the raw path parameters; undefined to read nothing there (the handler then reads it itself). A
   * long-poll's read is one too, its watch begun first (`watchFirst`).
   */
  along?: (params: Record<string, string>, ctx: AppContext) => AlongWithCaller | undefined;
  /**
   * A long-poll's watch of its resource, begun from the raw path parameters and query string before the statement
   * that checks the credential and reads `along`: a transition after that read still wakes it. Cancelled once the
   * request is answered, whatever the outcome (a refused caller's included); null to watch nothing.
   */
  watchFirst?: (params: Record<string, string>, query: unknown, ctx: AppContext) => ActorWatch | null;
}

/** A route as declared: its schemas type its handler's inputs and replies, so a handler never sees `any`. */
export interface RouteSpec<
  PS extends Schema.Top | undefined,
  QS extends Schema.Top | undefined,
  BS extends Schema.Top | undefined,
  R extends Responses,
  Ret extends ReplyOf<R> = ReplyOf<R>,
> extends RouteMeta {
  params?: PS;
  query?: QS;
  body?: BS;
  responses: R;
  // The reply is inferred as a const type (so a nested literal such as `status: 'ready'` keeps its literal type
  // without `as const`) and then checked against the replies R declares.
  handler: (input: HandlerInput<Decoded<PS>, Decoded<QS>, Decoded<BS>>) => Promise<Ret>;
}

/** A declared route with its types erased, as the server, OpenAPI and the authorization matrix consume it. */
export interface RouteDef extends RouteMeta {
  params?: Schema.Top;
  query?: Schema.Top;
  body?: Schema.Top;
  responses: Responses;
  handler: (input: HandlerInput<unknown, unknown, unknown>) => Promise<{ status: number; body?: unknown; headers?: Record<string, string> }>;
}

export function route<
  const R extends Responses,
  PS extends Schema.Top | undefined = undefined,
  QS extends Schema.Top | undefined = undefined,
  BS extends Schema.Top | undefined = undefined,
  const Ret extends ReplyOf<NoInfer<R>> = ReplyOf<NoInfer<R>>,
>(def: RouteSpec<PS, QS, BS, R, Ret>): RouteDef {
  return def as unknown as RouteDef;
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1();

// An absent body, an empty one sent as `application/json`, and `{}` are one request: a route whose body is an object
// decodes `{}` when none came, so a body without required fields may be left out and one with them names them.
const isObjectBody = (schema: Schema.Top): boolean => (schema.ast as { _tag: string })._tag === 'Objects';

/**
 * The JSON body parser every route shares: Fastify's own (with its prototype-poisoning guards) except that an empty
 * body is no body, where Fastify would answer 400 before the route could apply its default.
 */
export function useJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) =>
    body.length === 0 ? done(null, undefined) : parse(req, body as string, done),
  );
}

/** Decodes one request part; failures become 422 naming every bad field. */
export function decodePart<T>(schema: Schema.Top | undefined, value: unknown, where: 'path' | 'query' | 'body'): T {
  if (!schema) return value as T;
  // A route's schemas need no services to decode (the declarations hold only plain schemas).
  const exit = Schema.decodeUnknownExit(schema as Schema.Codec<unknown, unknown>)(value ?? (where === 'body' && !isObjectBody(schema) ? undefined : {}), { errors: 'all' });
  if (Exit.isSuccess(exit)) return exit.value as T;
  const failure = exit.cause.reasons.find(Cause.isFailReason);
  const issues = failure ? formatter(failure.error.issue).issues : [];
  const fields = issues.map((i) => ({
    field: i.path && i.path.length ? i.path.map(String).join('.') : where,
    in: where,
    message: i.message,
  }));
  const summary = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
  throw new AppError(422, 'unprocessable_content', `invalid ${where}: ${summary || 'malformed'}`, { fields });
}

/**
 * JSON Schema for OpenAPI from an effect Schema (inline definitions, no $refs). A recursive schema (an operator tree)
 * is inlined once: where a definition refers to itself again, any JSON is allowed, so inlining ends.
 */
export function jsonSchemaOf(schema: Schema.Top): Record<string, unknown> {
  const doc = Schema.toJsonSchemaDocument(schema);
  const defs: Record<string, unknown> = doc.definitions ?? {};
  const inline = (node: unknown, open: ReadonlySet<string>): unknown => {
    if (Array.isArray(node)) return node.map((n) => inline(n, open));
    if (node && typeof node === 'object') {
      const ref = (node as { $ref?: unknown }).$ref;
      if (typeof ref === 'string') {
        const name = ref.split('/').pop() ?? '';
        return defs[name] && !open.has(name) ? inline(defs[name], new Set([...open, name])) : {};
      }
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v, open)]));
    }
    return node;
  };
  return inline(doc.schema, new Set()) as Record<string, unknown>;
}

// ---- shared schema pieces ----------------------------------------------------------------------------------

export const Uuid = Schema.String.check(Schema.isUUID());
export const Limit = Schema.optionalKey(
  Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 })),
);
export const Cursor = Schema.optionalKey(Schema.String);
export const PageQuery = Schema.Struct({ limit: Limit, cursor: Cursor });
/** A page of a listing: its items, the cursor of the next page (null on the last) and whether there is one. */
export const pageOfSchema = <S extends Schema.Top>(item: S) =>
  Schema.Struct({ items: Schema.Array(item), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean });
/** A query parameter that may repeat: always decoded to an array. */
export const repeatable = <S extends Schema.Top>(item: S) =>
  Schema.optionalKey(Schema.Union([item, Schema.Array(item)]));
export const asArray = <T>(v: T | readonly T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? [...v] : [v as T]);
