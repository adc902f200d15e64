import { WebSocket } from 'undici';

/** A service process started with `--inspect=127.0.0.1:<port>`, driven over the DevTools protocol. */
export interface InspectedProcess {
  /** A full garbage collection in the process (HeapProfiler.collectGarbage). */
  collectGarbage(): Promise<void>;
  /** The process's V8 heap in use, in MiB (process.memoryUsage().heapUsed). */
  heapUsedMb(): Promise<number>;
  close(): void;
}

/**
 * Connects to the inspector of the process listening on `port`. Memory read right after a full
 * collection is what the process keeps, not what its collector has not got to yet: a process's RSS
 * read at any other moment moves by tens of MiB with the collector's timing.
 */
export async function inspectProcess(port: number): Promise<InspectedProcess> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`the inspector on port ${port} refused the connection`));
  });
  let next = 0;
  const pending = new Map<number, (reply: { result?: unknown; error?: { message: string } }) => void>();
  ws.onmessage = (e) => {
    const reply = JSON.parse(String(e.data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
    };
    if (reply.id !== undefined) pending.get(reply.id)?.(reply);
    pending.delete(reply.id ?? -1);
  };
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++next;
      pending.set(id, (reply) =>
        reply.error ? reject(new Error(`${method}: ${reply.error.message}`)) : resolve(reply.result),
      );
      ws.send(JSON.stringify({ id, method, params }));
    });
  return {
    collectGarbage: async () => {
      await send('HeapProfiler.collectGarbage');
    },
    heapUsedMb: async () => {
      const r = (await send('Runtime.evaluate', {
        expression: 'process.memoryUsage().heapUsed',
        returnByValue: true,
      })) as { result: { value: number } };
      return r.result.value / 2 ** 20;
    },
    close: () => ws.close(),
  };
}
