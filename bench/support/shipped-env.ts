/** What the mesh's services read from their environment (docs/guides/getting-started.md, docs/guides/deploying.md): every such variable's prefix. */
const SERVICE_VARIABLE = /^(MESH_|RUNNER_|REDIS_|GATEWAY_|TOOL_HOST_|LOG_|OTEL_|HOST$)/;

/**
 * `env` without any variable the services read: a service the bench starts runs with the shipped
 * defaults (docs/performance.md), whatever the shell that started the bench holds, plus what the bench sets
 * itself (its Redis, ports and config) and what a figure sets on purpose.
 */
export function shippedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (e): e is [string, string] => e[1] !== undefined && !SERVICE_VARIABLE.test(e[0]),
    ),
  );
}
