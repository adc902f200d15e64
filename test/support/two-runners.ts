import { keyLayout } from '@agentmesh/shared';
import type { Test } from 'tap';
import type { FakeScript } from './fake-model.js';
import { startMesh, startService } from './mesh.js';
import { PARENT_AND_CHILD } from './parent-and-child.js';
import { freePort } from './redis-server.js';
import { waitUntil } from './wait-until.js';

/**
 * A mesh of PARENT_AND_CHILD with two runner processes of their own (to SIGKILL or SIGSTOP), each
 * with a lock of `lockMs` (RUNNER_LOCK_MS's default without) and serving its metrics on one of
 * `ports`; resolves once both serve.
 */
export async function twoRunners(t: Test, script: FakeScript, lockMs?: number) {
  const mesh = await startMesh(t, { runners: 0, agentsYaml: PARENT_AND_CHILD, script });
  const ports = [await freePort(), await freePort()];
  const runners = ports.map((port) =>
    startService(t, 'runner', {
      ...mesh.env,
      ...(lockMs === undefined ? {} : { RUNNER_LOCK_MS: String(lockMs) }),
      RUNNER_METRICS_PORT: String(port),
    }),
  );
  await waitUntil(
    async () => (await mesh.client.zcount(keyLayout(mesh.prefix).runners(), Date.now(), '+inf')) === 2,
    60_000,
    () => runners.map((r) => r.output()).join('\n'),
  );
  return { mesh, runners, ports };
}
