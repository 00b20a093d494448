// The assistant's tools are /mcp's own (http/mcpTools.ts), offered to the model as chat-completions functions and
// called in-process through the REST API with the turn's token, exactly as /mcp calls them with its caller's: the
// routes' authentication, roles, tiers, policy and grants judge every call. Only two things differ from /mcp: the
// result caps (ASSISTANT_RESULT_*) and writes, which run when the user approved the call (not per MCP_ALLOW_WRITES).
import type { FastifyInstance } from 'fastify';
import { Exit, Schema } from 'effect';
import { principalFromToken } from '../domain/identity.ts';
import { hasDocPages } from '../domain/docsIndex.ts';
import type { ToolBridge, ToolOutcome } from '../domain/assistant/turn.ts';
import type { ChatTool } from '../domain/assistant/model.ts';
import type { AppContext } from '../usecases/context.ts';
import { jsonSchemaOf } from './route.ts';
import { TOOLS, ToolError, injectedApi, type Tool } from './mcpTools.ts';

/** The tools on offer now: the documentation tools only while ASSISTANT_DOCS_ENABLED and the docs are indexed. */
async function offered(ctx: AppContext): Promise<Tool[]> {
  const docs = ctx.config.ASSISTANT_DOCS_ENABLED && (await hasDocPages(ctx.db));
  return TOOLS.filter((t) => !t.docs || docs);
}

function chatTool(t: Tool): ChatTool {
  const description = t.writes ? `${t.description} In this assistant a statement that writes runs only once the user approves it.` : t.description;
  return { type: 'function', function: { name: t.name, description, parameters: { type: 'object', ...jsonSchemaOf(t.input) } } };
}

const decode = (t: Tool, args: unknown) => Schema.decodeUnknownExit(t.input as Schema.Codec<unknown, unknown>)(args ?? {});

/** The tools acting with `token` (a turn's own token of its user). */
export async function assistantToolBridge(ctx: AppContext, server: FastifyInstance, token: string): Promise<ToolBridge> {
  const tools = await offered(ctx);
  const principal = await principalFromToken(ctx.db, token);
  if (!principal) throw new Error('the turn token does not authenticate');
  const authorization = `Bearer ${token}`;
  const api = injectedApi(server, authorization);
  return {
    tools: tools.map(chatTool),
    async writes(name, args) {
      const tool = tools.find((t) => t.name === name);
      if (!tool?.writes) return false;
      const decoded = decode(tool, args);
      return Exit.isSuccess(decoded) ? tool.writes(ctx, decoded.value) : false;
    },
    async run(name, args, opts): Promise<ToolOutcome> {
      const tool = tools.find((t) => t.name === name);
      if (!tool) return { outcome: 'unknown_tool', message: `no tool ${name}; tools: ${tools.map((t) => t.name).join(', ')}` };
      const decoded = decode(tool, args);
      if (Exit.isFailure(decoded)) {
        return { outcome: 'invalid_arguments', message: `invalid arguments for ${name}: ${String(decoded.cause).split('\n').slice(0, 3).join(' ')}` };
      }
      try {
        return { outcome: 'ok', value: await tool.run({ ctx, principal, api, caps: opts.caps, allowWrites: opts.allowWrites }, decoded.value) };
      } catch (e) {
        if (e instanceof ToolError) return { outcome: 'tool_error', message: e.message };
        ctx.logger.error({ tool: name, err: (e as Error).message }, 'assistant tool failed');
        return { outcome: 'internal_error', message: 'the tool failed on the server' };
      }
    },
  };
}
