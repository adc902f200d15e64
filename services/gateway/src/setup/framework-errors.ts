import { type ArrivalTimeouts, MAX_URL_BYTES, MeshError, setArrivalTimeouts } from '@agentmesh/shared';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** fastify's `frameworkErrors`: a path with bad percent-encoding answers 400 `invalid_url`. */
export function frameworkErrors(err: Error, _req: FastifyRequest, reply: FastifyReply): void {
  const e =
    (err as { code?: string }).code === 'FST_ERR_BAD_URL'
      ? new MeshError('invalid_url', 'The request URL has a malformed percent-encoding.')
      : new MeshError('invalid_input', 'The request could not be routed.');
  void reply.status(e.status).send(e.toBody());
}

/**
 * The rest of the framework errors: arrival timeouts on the HTTP server, `Expect:` other than
 * `100-continue` (417), a URL past `MAX_URL_BYTES` (414). Install before any other hook.
 */
export function installFrameworkErrors(app: FastifyInstance, t: ArrivalTimeouts): void {
  setArrivalTimeouts(app.server, t);
  app.server.on('checkExpectation', (_req, res) => {
    const e = new MeshError('expectation_failed');
    const body = JSON.stringify(e.toBody());
    res.writeHead(e.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
  });
  app.addHook('onRequest', async (req) => {
    if (Buffer.byteLength(req.url) > MAX_URL_BYTES)
      throw new MeshError('url_too_long', `The request URL is longer than ${MAX_URL_BYTES} bytes.`);
  });
}
