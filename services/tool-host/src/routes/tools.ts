import {
  compileSchema,
  describeValidation,
  type Logger,
  MeshError,
  ToolInvokeRequest,
} from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { OutcomeStore, StoredOutcome } from '../idempotency/outcome-store.js';
import type { LoadedTool } from '../load-tools.js';
import { runTool } from '../run-tool.js';

/** Options of the tool routes; without an outcome store, calls are not deduplicated. */
export interface ToolRoutesOptions {
  tools: LoadedTool[];
  outcomes?: OutcomeStore | undefined;
}

const BUSY_POLL_MS = 100;

/** `GET /tools` and `POST /tools/{name}/invoke`. */
export const toolRoutes: FastifyPluginAsync<ToolRoutesOptions> = async (app, { tools, outcomes }) => {
  const byName = new Map(tools.map((t) => [t.info.name, t]));

  app.get('/tools', async () => ({ tools: tools.map((t) => t.info) }));

  app.post<{ Params: { name: string }; Body: ToolInvokeRequest }>(
    '/tools/:name/invoke',
    { schema: { body: ToolInvokeRequest } },
    async (req, reply) => {
      const tool = byName.get(req.params.name);
      if (!tool) throw new MeshError('tool_not_found', `Tool ${req.params.name} does not exist.`);
      const { args, context } = req.body;
      const check = compileSchema(tool.info.input)(args);
      if (!check.ok) {
        throw new MeshError(
          'invalid_input',
          `Invalid arguments: ${describeValidation(check.details)}`,
          check.details,
        );
      }
      // The request stream closes once its body is read; only the response closing while the
      // tool still runs means the caller went away.
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
      const key = context.idempotencyKey;
      const waitUntil = Date.now() + (tool.info.timeoutMs ?? 30_000);
      try {
        if (!outcomes) return answer((await runTool(tool, args, context, log, callerGone.signal)).outcome);
        for (;;) {
          const admission = await outcomes.admit(key, tool.info.idempotent);
          if (admission.kind === 'done') return answer(admission.outcome);
          if (admission.kind === 'in_doubt') {
            throw new MeshError(
              'tool_in_doubt',
              `The call may or may not have taken effect: it started before and its outcome was lost. Tool ${tool.info.name} is not idempotent, so it was not run again.`,
            );
          }
          if (admission.kind === 'busy') {
            // The same call runs elsewhere (a retry after a lost connection): wait for its outcome.
            if (callerGone.signal.aborted) throw new MeshError('cancelled', 'the caller went away');
            if (Date.now() > waitUntil)
              throw new MeshError('tool_timeout', 'the same call is still running elsewhere');
            await new Promise((r) => setTimeout(r, BUSY_POLL_MS));
            continue;
          }
          const run = await runTool(tool, args, context, log, callerGone.signal);
          if (run.abandoned) await admission.lease.abandon();
          else await admission.lease.release(run.outcome);
          return answer(run.outcome);
        }
      } finally {
        answered = true;
      }
    },
  );
};

function answer(outcome: StoredOutcome): { result: unknown } {
  if (outcome.ok) return { result: outcome.result };
  throw new MeshError(outcome.error.code as MeshError['code'], outcome.error.message);
}
