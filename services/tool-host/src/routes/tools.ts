import {
  compileSchema,
  DEFAULT_TOOL_TIMEOUT_MS,
  describeValidation,
  type Logger,
  MeshError,
  ToolInvokeRequest,
} from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { CancelWatch } from '../cancel/cancel-watch.js';
import { argsHash } from '../idempotency/args-hash.js';
import type { OutcomeStore, StoredOutcome } from '../idempotency/outcome-store.js';
import type { LoadedTool } from '../load-tools.js';
import { runTool } from '../run-tool.js';

/**
 * Options of the tool routes; without an outcome store, calls are not deduplicated; without a
 * cancel watch, nothing aborts a call but its timeout.
 */
export interface ToolRoutesOptions {
  tools: LoadedTool[];
  outcomes?: OutcomeStore | undefined;
  cancels?: CancelWatch | undefined;
  /** Bytes of a result answered and kept (MESH_MAX_RESULT_BYTES, boundedResult). */
  maxResultBytes?: number | undefined;
}

const BUSY_POLL_MS = 100;
/** The longest Idempotency-Key accepted (docs/reference/bounds.md). */
const MAX_KEY_BYTES = 512;
/** Bodies up to this size get every schema problem listed; bigger ones stop at the first. */
const FULL_REPORT_BYTES = 64 * 1024;

/** `GET /tools` and `POST /tools/{name}/invoke`. */
export const toolRoutes: FastifyPluginAsync<ToolRoutesOptions> = async (
  app,
  { tools, outcomes, cancels, maxResultBytes },
) => {
  const byName = new Map(tools.map((t) => [t.info.name, t]));
  // Runs whose caller may be gone: closing the app lets them end and record their outcomes.
  const inFlight = new Set<Promise<unknown>>();
  app.addHook('onClose', async () => {
    await Promise.allSettled([...inFlight]);
  });

  app.get('/tools', async () => ({ tools: tools.map((t) => t.info) }));

  app.post<{ Params: { name: string }; Body: ToolInvokeRequest }>(
    '/tools/:name/invoke',
    { schema: { body: ToolInvokeRequest } },
    async (req, reply) => {
      const tool = byName.get(req.params.name);
      if (!tool) throw new MeshError('tool_not_found', `Tool ${req.params.name} does not exist.`);
      const { args, context } = req.body;
      // Every problem is listed for a small body; a big one stops at the first (listing every one
      // of a huge wrong value costs seconds of CPU).
      const small = Number(req.headers['content-length'] ?? Number.POSITIVE_INFINITY) <= FULL_REPORT_BYTES;
      const check = compileSchema(tool.info.input, { firstErrorOnly: !small })(args);
      if (!check.ok) {
        throw new MeshError(
          'invalid_input',
          `Invalid arguments: ${describeValidation(check.details)}`,
          check.details,
        );
      }
      const key = context.idempotencyKey;
      if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) {
        throw new MeshError('invalid_input', `The Idempotency-Key is longer than ${MAX_KEY_BYTES} bytes.`, [
          { path: '/context/idempotencyKey', message: `must be at most ${MAX_KEY_BYTES} bytes` },
        ]);
      }
      const scope = { tool: tool.info.name, argsHash: scopeHash(args) };
      // The request stream closes once its body is read; only the response closing while the
      // call is open means the caller went away. That ends a wait, never a running tool.
      const callerGone = new AbortController();
      let answered = false;
      reply.raw.on('close', () => {
        if (!answered) callerGone.abort(new MeshError('cancelled', 'the caller went away'));
      });
      const log = req.log.child({
        invocationId: context.invocationId,
        callId: context.callId,
        tool: tool.info.name,
      }) as Logger;
      const watched = cancels ? await cancels.watch(context.invocationId) : undefined;
      const cancelled = watched?.signal ?? new AbortController().signal;
      const waitUntil = Date.now() + (tool.info.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS);
      try {
        if (cancelled.aborted) throw cancelled.reason;
        if (!outcomes)
          return answer(
            (await runTool(tool, args, context, log, cancelled, req.headers, maxResultBytes)).outcome,
          );
        for (;;) {
          const admission = await outcomes.admit(key, scope, tool.info.idempotent);
          if (admission.kind === 'done') return answer(admission.outcome);
          if (admission.kind === 'reused') {
            // Never the stored result: the key may be another caller's.
            throw new MeshError(
              'idempotency_key_reused',
              `This Idempotency-Key was used with another tool or other arguments; tool ${tool.info.name} was not run.`,
            );
          }
          if (admission.kind === 'in_doubt') {
            throw new MeshError(
              'tool_in_doubt',
              `The call may or may not have taken effect: it started before and its outcome was lost. Tool ${tool.info.name} is not idempotent, so it was not run again.`,
            );
          }
          if (admission.kind === 'busy') {
            // The same call runs elsewhere (a retry after a lost caller): wait for its outcome.
            if (cancelled.aborted) throw cancelled.reason;
            if (callerGone.signal.aborted) throw new MeshError('cancelled', 'the caller went away');
            if (Date.now() > waitUntil)
              throw new MeshError('tool_timeout', 'the same call is still running elsewhere');
            await new Promise((r) => setTimeout(r, BUSY_POLL_MS));
            continue;
          }
          const running = runTool(tool, args, context, log, cancelled, req.headers, maxResultBytes).then(
            async (run) => {
              if (run.abandoned) await admission.lease.abandon();
              else await admission.lease.release(run.outcome);
              return run;
            },
          );
          inFlight.add(running);
          const run = await running.finally(() => inFlight.delete(running));
          if (callerGone.signal.aborted) log.info('the caller went away; the outcome is kept for its retry');
          return answer(run.outcome);
        }
      } finally {
        answered = true;
        watched?.stop();
      }
    },
  );
};

/** The hash a key's scope keeps of the arguments; arguments too deep to hash are refused. */
function scopeHash(args: unknown): string {
  try {
    return argsHash(args);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new MeshError('invalid_input', 'The arguments are nested too deeply.', [
      { path: '/args', message: 'is nested too deeply' },
    ]);
  }
}

function answer(outcome: StoredOutcome): { result: unknown } {
  if (outcome.ok) return { result: outcome.result };
  throw new MeshError(outcome.error.code, outcome.error.message);
}
