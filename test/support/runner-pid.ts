import type { TestMesh } from './mesh.js';
import { waitUntil } from './wait-until.js';

/** The process id inside a runner id (`<host>-<pid>-<random>`): the process to SIGKILL. */
export function runnerPid(runnerId: string): number {
  const m = /-(\d+)-[a-z0-9]+$/.exec(runnerId);
  if (!m) throw new Error(`not a runner id: ${runnerId}`);
  return Number(m[1]);
}

/** The runner that recorded call `callId` of invocation `id` as `started`, once it has. */
export async function runnerOfCall(mesh: TestMesh, id: string, callId: string): Promise<string> {
  const call = await waitUntil(
    async () =>
      (await mesh.get(`/invocations/${id}`)).json?.calls?.find(
        (c: { callId: string; runner?: string }) => c.callId === callId && c.runner,
      ),
    20_000,
    () => `${callId} of ${id} started`,
  );
  return call.runner as string;
}
