import {
  compileSchema,
  describeValidation,
  type Logger,
  MeshError,
  ToolInvokeRequest,
  type ToolRunContext,
} from '@agentmesh/shared';
import type { FastifyPluginAsync } from 'fastify';
import type { LoadedTool } from '../load-tools.js';

const DEFAULT_TIMEOUT_MS = 30_000;

/** `GET /tools` and `POST /tools/{name}/invoke`. */
export const toolRoutes: FastifyPluginAsync<{ tools: LoadedTool[] }> = async (app, { tools }) => {
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
      const timeoutMs = tool.info.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const abort = new AbortController();
      const timer = setTimeout(
        () => abort.abort(new MeshError('tool_timeout', `no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      // The request stream closes as soon as its body has been read; only the connection closing
      // while the tool still runs means the caller went away.
      let settled = false;
      reply.raw.on('close', () => {
        if (!settled) abort.abort(new MeshError('cancelled', 'the caller went away'));
      });
      const ctx: ToolRunContext = {
        ...context,
        deadline: new Date(context.deadline),
        signal: abort.signal,
        log: req.log.child({
          invocationId: context.invocationId,
          callId: context.callId,
          tool: tool.info.name,
        }) as Logger,
      };
      try {
        const result = await Promise.race([
          Promise.resolve(tool.run(args, ctx)),
          new Promise<never>((_, reject) =>
            abort.signal.addEventListener('abort', () => reject(abort.signal.reason)),
          ),
        ]);
        if (tool.info.output) {
          const out = compileSchema(tool.info.output)(result);
          if (!out.ok)
            throw new MeshError(
              'tool_failed',
              `the result does not match the output schema: ${describeValidation(out.details)}`,
            );
        }
        return { result: result === undefined ? null : result };
      } catch (e) {
        if (e instanceof MeshError) throw e;
        throw new MeshError('tool_failed', (e as Error)?.message ?? String(e));
      } finally {
        settled = true;
        clearTimeout(timer);
      }
    },
  );
};
