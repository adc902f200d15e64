import type { SdkAgent, SdkBaseline } from '../sdk-baseline.js';
import type { BenchOptions } from './bench-options.js';
import type { ClientName, MeshInvoke } from './mesh-client.js';
import type { MeshStream } from './mesh-stream-client.js';
import type { BenchModel } from './start-bench-model.js';
import type { MeshProcesses } from './start-mesh-processes.js';

/** A client of the mesh, named: a plain invoke and a streaming one through it. */
export interface BenchClient {
  name: ClientName;
  invoke: MeshInvoke;
  stream: MeshStream;
}

/** What every figure gets: the sizes, the fake model, the mesh and both ways to run an agent. */
export interface BenchContext {
  opts: BenchOptions;
  model: BenchModel;
  mesh: MeshProcesses;
  /** The mesh through undici's `request`, for figures no client takes part in (Redis commands). */
  invoke: MeshInvoke;
  /** The same through Node's global fetch. */
  invokeFetch: MeshInvoke;
  /** Both clients, named: every figure a client takes part in is reported for each (docs/reference/benchmarks.md). */
  clients: readonly BenchClient[];
  sdk: (agent: SdkAgent) => Promise<string>;
  /** The SDK's streamed run (`run(agent, input, {stream: true})`). */
  sdkStream: SdkBaseline['stream'];
  /** CPU ms used so far by every mesh process and Redis. */
  meshCpuMs(): number;
  /** The same, by part: redis, gateway, tool-host and all runners together. */
  meshCpuByPart(): Record<'redis' | 'gateway' | 'toolHost' | 'runners', number>;
  /**
   * CPU ms used so far by this process (process.cpuUsage): the SDK during the SDK's runs, the
   * mesh's caller (its clients) during the mesh's.
   */
  sdkCpuMs(): number;
  /** CPU ms used so far by the fake model's process, which either side needs. */
  modelCpuMs(): number;
  /** Prints a progress note on stderr (stdout holds only figure lines and the table). */
  note(text: string): void;
}
