import net from 'node:net';

/** A TCP port free on loopback right now (the OS picks it; another process may still take it first). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** How many of the OS's picks a listener outside the reserved ports reads before it gives up. */
const PICKS = 20;

/**
 * Something listening on a port the OS picked that is none of `reserved`: the ports npm start's own
 * services are told to listen on but do not hold yet. The OS may hand out such a port (nothing
 * listens on it yet), and the service started later would then fail on a port npm start itself had
 * given away. A pick on a reserved port is released and the OS asked again.
 */
export async function listenOutside<T extends { port: number }>(
  reserved: Iterable<number>,
  listen: () => Promise<T>,
  release: (held: T) => Promise<void>,
): Promise<T> {
  const taken = new Set(reserved);
  for (let i = 0; i < PICKS; i++) {
    const held = await listen();
    if (!taken.has(held.port)) return held;
    await release(held);
  }
  throw new Error(`no free port outside ${[...taken].join(', ')} after ${PICKS} picks`);
}

/** A free port (as freePort) that is none of `reserved` (as listenOutside). */
export async function freePortOutside(reserved: Iterable<number>, host = '127.0.0.1'): Promise<number> {
  const picked = await listenOutside(
    reserved,
    async () => ({ port: await freePort(host) }),
    async () => {},
  );
  return picked.port;
}

/** True when something accepts TCP connections on host:port within the timeout. */
export function isListening(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
