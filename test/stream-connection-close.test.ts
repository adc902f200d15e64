// A client that sends `Connection: close` gets its connection closed once a streamed answer ends
// (RFC 9112 §9.6), as it does after any other answer. The streams used to name
// `Connection: keep-alive` in their headers, which made Node keep such a connection open until
// its keep-alive timeout (72 s): found by the hostile-input property test, a streamed chat
// completion over raw TCP with no answer's end in sight. MCP's streams come from the MCP SDK, which
// names the header too: the gateway drops it on their way out.
import net from 'node:net';
import t from 'tap';
import { listen, startMesh } from './support/mesh.js';

/** Sends `bytes` on a new connection and resolves with what came back once the server closed it, or `undefined` after 10 s. */
function untilClosed(port: number, bytes: Buffer): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(undefined);
    }, 10_000);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    socket.write(bytes);
  });
}

const post = (path: string, body: unknown, headers: string[] = []) => {
  const payload = Buffer.from(JSON.stringify(body));
  const head = [
    `POST ${path} HTTP/1.1`,
    'host: localhost',
    'connection: close',
    'content-type: application/json',
    ...headers,
    `content-length: ${payload.length}`,
  ];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), payload]);
};

t.test('every streamed answer closes a connection its client asked to close', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `\n  echo: {description: Echoes., instructions: "@agent echo"}\n`,
    script: () => ({ final: 'ok', chunks: 2, chunkDelayMs: 20 }),
  });
  const base = await listen(mesh);
  const port = Number(new URL(base).port);
  const streams: [string, Buffer, RegExp][] = [
    ['invoke?stream=true', post('/agents/echo/invoke?stream=true', { prompt: 'hi' }), /"status":"succeeded"/],
    [
      'a streamed chat completion',
      post('/v1/chat/completions', {
        model: 'echo',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      }),
      /data: \[DONE\]/,
    ],
    [
      'A2A SendStreamingMessage',
      post(
        '/a2a/echo',
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendStreamingMessage',
          params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
        },
        ['a2a-version: 1.0'],
      ),
      /TASK_STATE_COMPLETED/,
    ],
    [
      'an MCP tools/call',
      post(
        '/mcp',
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'echo', arguments: { prompt: 'hi' } },
        },
        ['accept: application/json, text/event-stream'],
      ),
      /"content":\[\{"type":"text","text":"ok"\}\]/,
    ],
  ];
  for (const [name, bytes, end] of streams) {
    const answer = await untilClosed(port, bytes);
    t.ok(answer !== undefined, `${name}: the connection closed after the stream`);
    t.match(answer ?? '', /^HTTP\/1\.1 200 /, `${name}: answered 200`);
    t.match(answer ?? '', /text\/event-stream/, `${name}: as a stream`);
    t.match(answer ?? '', end, `${name}: to its end`);
    t.notMatch(answer ?? '', /\r\nconnection: keep-alive\r\n/i, `${name}: not announced as kept alive`);
  }
});
