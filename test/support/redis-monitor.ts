import net from 'node:net';

/** One command MONITOR saw: who ran it (`lua` for a script's own commands) and its arguments. */
export interface MonitoredCommand {
  source: string;
  args: string[];
}

/**
 * Records every command a Redis server runs (MONITOR on a raw socket: ioredis's monitor splits
 * arguments naively, so a script body with quotes comes out wrong). Stop it before reading.
 */
export async function monitorRedis(port: number): Promise<{ seen: MonitoredCommand[]; stop(): void }> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const seen: MonitoredCommand[] = [];
  let pending = '';
  let ready: () => void;
  const started = new Promise<void>((resolve, reject) => {
    ready = resolve;
    // A server gone before MONITOR's reply fails the start, never leaves it waiting.
    socket.once('close', () => reject(new Error(`MONITOR on port ${port}: the connection closed`)));
    socket.on('error', () => {}); // 'close' follows it; a server stopped mid-test ends the record, no more
  });
  socket.setEncoding('latin1'); // one char per byte, so \xhh escapes rebuild the exact bytes
  socket.on('data', (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf('\r\n'); end >= 0; end = pending.indexOf('\r\n')) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 2);
      if (line === '+OK') ready();
      else if (line.startsWith('+')) seen.push(parseLine(line));
    }
  });
  socket.write('MONITOR\r\n');
  await started;
  return { seen, stop: () => socket.destroy() };
}

/** `+<time> [<db> <source>] "arg" "arg" …`, each argument escaped as sdscatrepr does. */
function parseLine(line: string): MonitoredCommand {
  const open = line.indexOf('[');
  const close = line.indexOf(']', open);
  const source = line.slice(open + 1, close).split(' ')[1] ?? '';
  const args: string[] = [];
  for (let i = close + 1; i < line.length; i++) {
    if (line[i] !== '"') continue;
    let bytes = '';
    for (i++; line[i] !== '"'; i++) {
      if (line[i] !== '\\') {
        bytes += line[i];
        continue;
      }
      const c = line[++i]!;
      if (c === 'x') {
        bytes += String.fromCharCode(Number.parseInt(line.slice(i + 1, i + 3), 16));
        i += 2;
      } else bytes += ESCAPES[c] ?? c;
    }
    args.push(Buffer.from(bytes, 'latin1').toString('utf8'));
  }
  return { source, args };
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' };
