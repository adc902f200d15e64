import type { IncomingMessage, ServerResponse } from 'node:http';
import { WaitingConnections } from '@agentmesh/shared';
import type { FastifyInstance } from 'fastify';

/**
 * How long a closing gateway lets the answers it had open finish before it drops their connections:
 * its streams are ended at once (`preClose`), so this only bounds a client that does not read its
 * last bytes (up to MESH_STREAM_BUFFER_BYTES, 1 MiB, behind them: 10 s is ~100 KB/s). It leaves
 * most of the stop grace period (30 s, docs/guides/deploying.md) to the rest of the shutdown.
 */
export const CLOSE_GRACE_MS = 10_000;

/**
 * Lets a closing gateway close its connections as soon as their answers end, not when their clients
 * let go of them. The server's close drops the connections idle at that moment, then waits for the
 * others; an answer open then (a stream the closing ends: events, invoke, chat completion, A2A, MCP)
 * had sent `Connection: keep-alive` with its headers, so once it ends its connection idles on, and
 * the close waits on the client's keep-alive (undici lets go after 4 s, others keep it up to the
 * server's keep-alive timeout, 72 s). So while closing, every answer that ends drops its
 * connection's idleness at once (`closeIdleConnections`, which spares a connection with a request
 * in progress), and every connection still open `graceMs` after the closing began is destroyed
 * (a hung answer, or a request's headers part-way); one that has sent nothing goes at once.
 *
 * This rather than each route waiting in `preClose` for its answers to flush: it takes in every
 * answer the closing catches open, whoever ends it and however (a route's own `preClose`, a waiter
 * released, the tree streams closed), with no ordering between hooks; and rather than
 * `Connection: close`, which a stream's headers, sent at its start, can no longer say (answers that
 * start while closing do say it: app.ts).
 */
export function closeConnectionsOnEnd(app: FastifyInstance, graceMs = CLOSE_GRACE_MS): void {
  const server = app.server;
  const connections = new WaitingConnections(server);
  let closing = false;
  let sweeping = false;
  // One sweep for all the answers that ended in the same turn (a shutdown ends them together).
  const closeIdle = () => {
    if (sweeping) return;
    sweeping = true;
    setImmediate(() => {
      sweeping = false;
      server.closeIdleConnections();
    });
  };
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    // After 'finish': the server has detached the answer from its socket, which idles now.
    res.once('close', () => {
      if (closing) closeIdle();
    });
  });
  app.addHook('preClose', async () => {
    if (closing) return;
    closing = true;
    // A connection with no request is no answer to finish (WaitingConnections says why it would wait).
    connections.dropSilent();
    setTimeout(() => connections.dropAll(), graceMs).unref();
  });
}
