import net from 'node:net';

/**
 * A TCP proxy a test can freeze (while held, nothing the clients send reaches the server) or cut
 * (while cut, every connection is closed and new ones are refused: the server looks gone).
 */
export interface TcpProxy {
  port: number;
  url: string;
  /** Stop forwarding client → server bytes (they are kept and sent on release). */
  hold(): void;
  /** Close every connection and refuse new ones until release(). */
  cut(): void;
  /** Ends a hold or a cut. */
  release(): void;
  close(): Promise<void>;
}

/** Starts a proxy to 127.0.0.1:`targetPort` on a free port. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let held = false;
  let cut = false;
  const waiting: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (!held) upstream.write(chunk);
      // A client that died while held never had these bytes delivered: they are dropped.
      else waiting.push(() => client.destroyed || upstream.write(chunk));
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    hold: () => {
      held = true;
    },
    cut: () => {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    // On the next check phase, after the poll phase has seen the close of any client killed while
    // held: a stalled event loop runs a due release timer before it reads the pending close events.
    release: () =>
      setImmediate(() => {
        held = false;
        cut = false;
        for (const send of waiting.splice(0)) send();
      }),
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
