import { sdkBaseline } from '../sdk-baseline.js';
import type { BenchContext } from './bench-context.js';
import type { BenchOptions } from './bench-options.js';
import { cpuTimeMs, cpuTimeOfMs } from './cpu-time-ms.js';
import { meshClient } from './mesh-client.js';
import { meshStreamClient } from './mesh-stream-client.js';
import type { BenchModel } from './start-bench-model.js';
import type { MeshProcesses } from './start-mesh-processes.js';

/** The context every figure gets (bench-context.ts), over a started fake model and mesh. */
export function makeBenchContext(
  opts: BenchOptions,
  model: BenchModel,
  mesh: MeshProcesses,
  note: (text: string) => void,
): BenchContext {
  const invoke = meshClient(mesh.gatewayUrl);
  const invokeFetch = meshClient(mesh.gatewayUrl, 'fetch');
  const sdk = sdkBaseline(model.url);
  return {
    opts,
    model,
    mesh,
    invoke,
    invokeFetch,
    clients: [
      { name: 'undici', invoke, stream: meshStreamClient(mesh.gatewayUrl) },
      { name: 'fetch', invoke: invokeFetch, stream: meshStreamClient(mesh.gatewayUrl, 'fetch') },
    ],
    sdk: sdk.run,
    sdkStream: sdk.stream,
    meshCpuMs: () => cpuTimeOfMs(mesh.pids()),
    meshCpuByPart: () => ({
      redis: cpuTimeMs(mesh.redisPid),
      gateway: cpuTimeMs(mesh.gateway.pid),
      toolHost: cpuTimeMs(mesh.toolHost.pid),
      runners: cpuTimeOfMs(mesh.runners.map((r) => r.pid)),
    }),
    sdkCpuMs: () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    },
    modelCpuMs: () => cpuTimeMs(model.pid),
    note,
  };
}
