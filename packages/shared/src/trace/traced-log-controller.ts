import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { RequestContexts } from './request-contexts.js';

/**
 * fastify's request lines, each inside its request's trace context: "incoming request" (written
 * before any hook runs) once a hook has opened the context, "request completed" and a stream's
 * error (written from the response's events) back inside it. A subclass, as fastify's docs have it
 * for changing its own lines; what each line says, and at which level, stays fastify's. The gateway
 * and the tool-host both write their request lines through it.
 */
export class TracedLogController extends LogController {
  // A private field of our own: no name fastify's class has or may add.
  readonly #contexts: RequestContexts<FastifyRequest>;

  constructor(contexts: RequestContexts<FastifyRequest>) {
    super();
    this.#contexts = contexts;
  }

  override incomingRequest(
    req: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    this.#contexts.early(req, () => super.incomingRequest(req, reply, metadata));
  }

  override requestCompleted(
    error: Error | null | undefined,
    req: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    this.#contexts.within(req, () => super.requestCompleted(error, req, reply, metadata));
  }

  override streamError(
    error: Error,
    req: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    this.#contexts.within(req, () => super.streamError(error, req, reply, metadata));
  }
}
