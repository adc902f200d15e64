import { jsonDepth, MeshError } from '@agentmesh/shared';
import type { FastifyInstance } from 'fastify';

/**
 * JSON bodies nest at most this deep. Deeper ones are refused before parsing: JSON.stringify and
 * every other recursive walk of the input (hashing, validation, prompts) would overflow the stack
 * at ~4,100 levels, and no agent input needs a fraction of this.
 */
export const MAX_JSON_DEPTH = 256;

/** Replaces fastify's JSON parser with one that first refuses bodies nested deeper than MAX_JSON_DEPTH. */
export function installJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (jsonDepth(body as string, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      done(
        new MeshError(
          'invalid_json',
          `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
        ),
        undefined,
      );
      return;
    }
    parse(req, body as string, done);
  });
}
