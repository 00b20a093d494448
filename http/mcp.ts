// /mcp: the Model Context Protocol endpoint for AI agents (Streamable HTTP, stateless: every POST is one JSON-RPC
// exchange answered as JSON). A bearer token is required and the tools act with it (http/mcpTools.ts); an Origin
// not in CORS_ORIGINS is refused (a browser page must not drive a user's token); MCP_ENABLED is read per request.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Exit, Schema } from 'effect';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { authenticate } from './auth.ts';
import type { AppContext } from '../usecases/context.ts';
import { jsonSchemaOf } from './route.ts';
import { envelope } from './server.ts';
import { TOOLS, ToolError, injectedApi, type Tool } from './mcpTools.ts';
import { SpanKind } from '../telemetry/tracing.ts';

const INSTRUCTIONS = [
  'Eider is a control plane for SQL analytics over Apache Iceberg tables; agents run DuckDB SQL.',
  'Start with list_workspaces, then list_catalogs / list_schemas / list_tables / describe_table to find data.',
  'run_sql runs DuckDB SQL in a workspace and returns the first rows; page on with get_query_result.',
  'Prefer governed numbers: search_semantic, get_semantic_model, then query_metric (explain_metric shows its SQL).',
  'search_docs and read_doc_page read the Eider documentation.',
  'Every tool acts with your token: you see exactly what it may see through the REST API.',
].join('\n');

function refuse(reply: FastifyReply, status: number, code: string, message: string) {
  return reply.status(status).type('application/json').send(envelope(code, message));
}

export function registerMcp(app: FastifyInstance, ctx: AppContext, opts: { docsIndexed: () => boolean }) {
  const allowedOrigins = () =>
    new Set(
      ctx.config.CORS_ORIGINS.split(/[\s,]+/)
        .map((o) => o.trim())
        .filter(Boolean),
    );

  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: '/mcp',
    schema: { hide: true },
    // A body that is not JSON never reaches the handler (the shared parser refuses it): JSON-RPC 2.0 answers it with
    // its parse error object, not the REST envelope. Everything else goes to the server's error handler.
    errorHandler: (err: { code?: string }, req: FastifyRequest, reply: FastifyReply) => {
      if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
        return reply.status(400).type('application/json').send({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not valid JSON' }, id: null });
      }
      throw err;
    },
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      if (!ctx.config.MCP_ENABLED) return refuse(reply, 503, 'unavailable', 'the /mcp endpoint is switched off on this server (MCP_ENABLED)');
      const origin = req.headers.origin;
      if (origin !== undefined && !allowedOrigins().has(origin)) return refuse(reply, 403, 'forbidden', `origin ${origin} is not allowed (CORS_ORIGINS)`);
      if (!req.headers.authorization) return refuse(reply, 401, 'unauthorized', 'a bearer token is required (Authorization: Bearer <personal access token>)');
      const principal = (await authenticate(ctx.db, req).catch(() => undefined))?.principal;
      if (!principal) return refuse(reply, 401, 'unauthorized', 'invalid, expired or revoked token');
      if (req.method !== 'POST') {
        reply.header('allow', 'POST');
        return refuse(reply, 405, 'bad_request', 'this MCP endpoint is stateless: POST JSON-RPC requests');
      }

      const authorization = req.headers.authorization;
      const api = injectedApi(app, authorization);
      const tools = (): Tool[] => TOOLS.filter((t) => !t.docs || (ctx.config.ASSISTANT_DOCS_ENABLED && opts.docsIndexed()));

      const server = new Server({ name: 'eider', version: ctx.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: tools().map((t) => ({ name: t.name, description: t.description, inputSchema: { type: 'object' as const, ...jsonSchemaOf(t.input) } })),
      }));
      server.setRequestHandler(CallToolRequestSchema, async (request) => {
        const name = request.params.name;
        const tool = tools().find((t) => t.name === name);
        const count = (outcome: string) => ctx.metrics?.mcpToolCalls.inc({ tool: tool ? name : 'unknown', outcome });
        const text = (value: unknown, isError = false) => ({ content: [{ type: 'text' as const, text: typeof value === 'string' ? value : JSON.stringify(value) }], ...(isError ? { isError } : {}) });
        if (!tool) {
          count('unknown_tool');
          return text(`no tool ${name}; tools: ${tools().map((t) => t.name).join(', ')}`, true);
        }
        const decoded = Schema.decodeUnknownExit(tool.input as Schema.Codec<unknown, unknown>)(request.params.arguments ?? {});
        if (Exit.isFailure(decoded)) {
          count('invalid_arguments');
          return text(`invalid arguments for ${name}: ${String(decoded.cause).split('\n').slice(0, 3).join(' ')}`, true);
        }
        return ctx.tracing.span(`mcp ${name}`, { kind: SpanKind.INTERNAL, attributes: { 'eider.mcp_tool': name } }, async () => {
          try {
            const value = await tool.run({ ctx, principal, api }, decoded.value);
            count('ok');
            return text(value);
          } catch (e) {
            if (e instanceof ToolError) {
              count('tool_error');
              return text(e.message, true);
            }
            count('internal_error');
            ctx.logger.error({ tool: name, err: (e as Error).message }, 'mcp tool failed');
            return text('the tool failed on the server; try again', true);
          }
        });
      });

      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    },
  });
}
