import net from 'node:net';

/**
 * A raw connection to `port` that sends `bytes` (none by default) and then nothing, as a silent or
 * slow client does; resolves once the server has had them, with the connection's closing.
 */
export async function stalledConnection(port: number, bytes = ''): Promise<{ closed: Promise<void> }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  if (bytes) socket.write(bytes);
  await new Promise((resolve) => setTimeout(resolve, 50)); // the server has accepted and read them
  return { closed };
}

/** Resolves with how long `p` took, or rejects past `ms` (a close that would wait for ever). */
export async function within(p: Promise<unknown>, ms: number): Promise<number> {
  const began = Date.now();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`still not done after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
  return Date.now() - began;
}
