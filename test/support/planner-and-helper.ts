import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import type { FakeScript } from './fake-model.js';
import { startMesh, startService, type TestMesh } from './mesh.js';
import { freePort } from './redis-server.js';
import { waitUntil } from './wait-until.js';

/** The agents of a small traced tree: a planner with the tool `calc` and the sub-agent `helper`. */
export const PLANNER_AND_HELPER = `
  planner: {instructions: "@agent planner", tools: [calc], subagents: [helper]}
  helper: {instructions: "@agent helper"}
`;

/** The script of PLANNER_AND_HELPER: the planner calls calc and delegates in one turn, then answers `done`; helper answers at once. */
export const plannerAndHelper: FakeScript = (r) => {
  if (r.agent === 'helper') return { final: 'helped' };
  return r.messages.some((m) => m.role === 'tool')
    ? { final: 'done' }
    : {
        calls: [
          { name: 'calc', args: { x: 1 } },
          { name: '_subagent_helper', args: { prompt: 'help' } },
        ],
      };
};

/** PLANNER_AND_HELPER as processes, its tree split over them (see startPlannerAndHelperProcesses). */
export interface PlannerAndHelperProcesses {
  mesh: TestMesh;
  /** The planner's runner, then the helper's. */
  runners: ReturnType<typeof startService>[];
  gateway: ReturnType<typeof startService>;
  /** Invokes the planner through the gateway inside the trace `traceId` (a traceparent header). */
  invokeTraced(traceId: string): Promise<{ id: string; status: string }>;
}

/**
 * Starts PLANNER_AND_HELPER with every service a process of its own, each given `env`: the
 * tool-host serving `tools` (an ES module's source), one runner per agent and a gateway; resolves
 * once the gateway is ready.
 */
export async function startPlannerAndHelperProcesses(
  t: Test,
  tools: string,
  env: Record<string, string>,
): Promise<PlannerAndHelperProcesses> {
  const toolsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'planner-tools-')), 'tools.mjs');
  fs.writeFileSync(toolsFile, tools);
  const mesh = await startMesh(t, {
    agentsYaml: PLANNER_AND_HELPER,
    toolsModule: toolsFile,
    toolHostEnv: env,
    runners: 0,
    script: plannerAndHelper,
  });
  const runners = ['planner', 'helper'].map((agent) =>
    startService(t, 'runner', { ...mesh.env, ...env, RUNNER_AGENTS: agent }),
  );
  const port = await freePort();
  const gateway = startService(t, 'gateway', { ...mesh.env, ...env, GATEWAY_PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  await waitUntil(
    async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
    60_000,
    () => 'the gateway to be ready',
  );
  const invokeTraced = async (traceId: string) => {
    const res = await fetch(`${base}/agents/planner/invoke?wait=30`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${'ab'.repeat(8)}-01` },
      body: JSON.stringify({ prompt: 'go' }),
    });
    return (await res.json()) as { id: string; status: string };
  };
  return { mesh, runners, gateway, invokeTraced };
}
