// Answers for features of the spec that this server does not offer yet, in the shapes existing clients look for.
// SQL sessions: clients treat a 404 whose message contains "not enabled" as "SQL sessions are switched off".
import type { FastifyInstance } from 'fastify';
import { envelope } from './server.ts';

const SESSION_PATHS = ['/api/workspaces/:workspace/sql/sessions', '/api/sql/sessions/*'];

export function registerAbsentFeatures(app: FastifyInstance) {
  for (const url of SESSION_PATHS) {
    app.all(url, { schema: { hide: true } as any }, async (_req, reply) =>
      reply
        .status(404)
        .type('application/json')
        .send(envelope('not_found', 'SQL sessions are not enabled on this server (SQL_SESSIONS_ENABLED; the feature is not built yet)')),
    );
  }
}
