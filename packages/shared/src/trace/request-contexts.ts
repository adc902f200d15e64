import { type Context, context } from '@opentelemetry/api';

/**
 * The trace context of each request a server handles, for the lines its framework writes outside
 * that context (docs/reference/traces.md: trace ids on every line of a traced request). A request's context is
 * known once its first hook opens it (`enter`); a line written before (fastify's "incoming
 * request") waits for it (`early`), and one written later from outside it (from the response's
 * events: "request completed") is written back inside it (`within`). The services route fastify's
 * lines here from a subclass of its `LogController`, the extension point fastify documents for them.
 */
export class RequestContexts<R extends object> {
  readonly #contexts = new WeakMap<R, Context>();
  readonly #waiting = new WeakMap<R, () => void>();

  /**
   * Writes `line` once `req`'s context is known. The hook that opens it runs in the same tick as
   * the line, right after it; a request no hook sees (fastify's framework errors: a bad URL) has no
   * context, and its line goes out as it is once this tick's work is done.
   */
  early(req: R, line: () => void): void {
    this.#waiting.set(req, line);
    queueMicrotask(() => this.#release(req));
  }

  /** `req` runs in `ctx` from now on: a line waiting for it is written inside it. */
  enter(req: R, ctx: Context): void {
    this.#contexts.set(req, ctx);
    context.with(ctx, () => this.#release(req));
  }

  /** Writes `line` inside `req`'s context (as it is while `req` has none). */
  within(req: R, line: () => void): void {
    const ctx = this.#contexts.get(req);
    if (ctx) context.with(ctx, line);
    else line();
  }

  #release(req: R): void {
    const line = this.#waiting.get(req);
    this.#waiting.delete(req);
    line?.();
  }
}
