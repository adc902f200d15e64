import type { SdkAgent } from '../sdk-baseline.js';
import type { BenchOptions } from './bench-options.js';
import type { MeshInvoke } from './mesh-client.js';
import type { BenchModel } from './start-bench-model.js';
import type { MeshProcesses } from './start-mesh-processes.js';

/** What every figure gets: the sizes, the fake model, the mesh and both ways to run an agent. */
export interface BenchContext {
  opts: BenchOptions;
  model: BenchModel;
  mesh: MeshProcesses;
  invoke: MeshInvoke;
  /** The same through Node's global fetch (reported beside the single round trip). */
  invokeFetch: MeshInvoke;
  sdk: (agent: SdkAgent) => Promise<string>;
  /** CPU ms used so far by every mesh process and Redis. */
  meshCpuMs(): number;
  /** The same, by part: redis, gateway, tool-host and all runners together. */
  meshCpuByPart(): Record<'redis' | 'gateway' | 'toolHost' | 'runners', number>;
  /** CPU ms used so far by this process (the SDK side), from process.cpuUsage(). */
  sdkCpuMs(): number;
  /** Prints a progress note on stderr (stdout holds only figure lines and the table). */
  note(text: string): void;
}
