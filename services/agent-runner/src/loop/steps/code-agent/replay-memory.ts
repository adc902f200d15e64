import { type AgentMemory, normalizeResult } from '@agentmesh/shared';

/** Memory writes in the order they were made: key and value JSON, `''` for a delete. */
export type MemoryWrites = [key: string, valueJson: string][];

/**
 * A code agent's `ctx.memory` during one replay (docs/architecture/durability-and-fencing.md). Writes are buffered until the next
 * durable record commits them (`take`), and each record keeps the writes committed with it
 * (`CallRecord.memory`).
 *
 * Why memory is replayed per record rather than loaded whole at the start: a replay runs the code
 * from its beginning, so it must see at every point what the first run saw there. Loading the
 * final committed state up front breaks that for the plainest deterministic code — `n =
 * get('count') ?? 0; set('count', n + 1)` before a delegation would read the value it wrote on the
 * previous run and count again. Instead the replay starts empty (a new invocation's memory is
 * empty), re-executes the code's own writes, and when it reaches a recorded call applies the
 * writes committed with that record (`apply`): those are exactly the ones it cannot re-execute
 * (made inside a `ctx.step` fn, which a replay skips) plus ones it re-executes identically. So at
 * every durable call the replay's memory is what the first run had committed there, after a park
 * or on another runner after a crash alike.
 */
export class ReplayMemory implements AgentMemory {
  private readonly values = new Map<string, unknown>();
  private writes: MemoryWrites = [];

  // Arrow properties: `const { get } = ctx.memory` works too.
  readonly get = async <T>(key: string): Promise<T | undefined> =>
    structuredClone(this.values.get(key)) as T | undefined;

  readonly set = async (key: string, value: unknown): Promise<void> => {
    const json = normalizeResult(value ?? null);
    this.values.set(key, json);
    this.writes.push([key, JSON.stringify(json)]);
  };

  readonly delete = async (key: string): Promise<void> => {
    this.values.delete(key);
    this.writes.push([key, '']);
  };

  /** The writes made since the last call, to commit with the next record. */
  take(): MemoryWrites {
    const w = this.writes;
    this.writes = [];
    return w;
  }

  /**
   * At a recorded call: the writes the replay buffered since the previous call are the ones the
   * first run committed with this record, so they are dropped (committing them again would undo
   * later committed writes in Redis) and the record's own log is applied instead.
   */
  apply(log: MemoryWrites | undefined): void {
    this.writes = [];
    for (const [key, json] of log ?? []) {
      if (json === '') this.values.delete(key);
      else this.values.set(key, JSON.parse(json));
    }
  }
}
