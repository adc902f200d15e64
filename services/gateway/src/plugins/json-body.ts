import { MeshError } from '@agentmesh/shared';
import type { FastifyInstance } from 'fastify';

/**
 * JSON bodies nest at most this deep. Deeper ones are refused before parsing: JSON.stringify and
 * every other recursive walk of the input (hashing, validation, prompts) would overflow the stack
 * at ~4,100 levels, and no agent input needs a fraction of this.
 */
export const MAX_JSON_DEPTH = 256;

/** The deepest nesting of arrays and objects in JSON text, counted in one linear pass; stops past `limit`. */
export function jsonDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

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
