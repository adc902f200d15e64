// Framework errors answer in the contract's error shape (docs/reference/bounds.md), over a real socket where Node's
// HTTP server answers before fastify: bad URL encoding, too long a URL, header overflow, Expect,
// requests whose headers or body never complete; and @fastify/static's refusals, GET on invoke.
import net from 'node:net';
import t, { type Test } from 'tap';
import { startGateway } from './support/gateway.js';

const gw = await startGateway(t, {
  agentsYaml: '  chat: {instructions: "@agent chat"}\n',
  gateway: { headersTimeoutMs: 300, requestTimeoutMs: 600 },
});
await gw.app.listen({ port: 0, host: '127.0.0.1' });
const port = (gw.app.server.address() as { port: number }).port;

interface RawAnswer {
  status: number;
  headers: string;
  body: any;
  /** True when the server closed the connection. */
  closed: boolean;
}

/** Sends raw bytes (optionally in parts) and reads until the server closes or `idleMs` pass without data. */
function raw(parts: string[], idleMs = 3000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    let closed = false;
    let timer: NodeJS.Timeout;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const [head = '', body = ''] = data.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = body;
      }
      resolve({ status, headers: head, body: json, closed });
    };
    const idle = () => {
      clearTimeout(timer);
      timer = setTimeout(finish, idleMs);
    };
    socket.on('data', (d) => {
      data += d.toString('latin1');
      idle();
    });
    socket.on('end', () => {
      closed = true;
      finish();
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('error', (e) => (data ? finish() : reject(e)));
    socket.on('connect', () => {
      for (const p of parts) socket.write(p);
      idle();
    });
  });
}

/** One request without a body; `Connection: close`, so each answer ends with its connection. */
const request = (line: string, headers: string[] = []) => [
  `${line}\r\nHost: x\r\nConnection: close\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`,
];

/** Asserts an answer is exactly `{"error": {code, message}}` with that status. */
function contract(t: Test, res: RawAnswer, status: number, code: string) {
  t.equal(res.status, status, `${code} is ${status}`);
  t.match(res.headers, /content-type: application\/json/i, 'a JSON body');
  t.strictSame(
    Object.keys(res.body ?? {}),
    ['error'],
    `the body holds only error: ${JSON.stringify(res.body)}`,
  );
  t.equal(res.body?.error?.code, code);
  t.type(res.body?.error?.message, 'string');
}

t.test('a path with bad percent-encoding is 400 invalid_url', async (t) => {
  for (const path of ['/invocations/%E0%A4%A', '/agents/%zz', '/%']) {
    contract(t, await raw(request(`GET ${path} HTTP/1.1`)), 400, 'invalid_url');
  }
});

t.test('a URL past 8 KiB is 414 url_too_long, also past Node header limit', async (t) => {
  for (const size of [9000, 20_000, 70_000]) {
    contract(t, await raw(request(`GET /agents?x=${'a'.repeat(size)} HTTP/1.1`)), 414, 'url_too_long');
  }
});

t.test('headers past the limit are 431 headers_too_large', async (t) => {
  const headers = Array.from({ length: 40 }, (_, i) => `x-filler-${i}: ${'b'.repeat(1000)}`);
  const res = await raw(request('GET /healthz HTTP/1.1', headers));
  contract(t, res, 431, 'headers_too_large');
  t.ok(res.closed, 'the connection is closed');
});

t.test('an Expect other than 100-continue is 417 expectation_failed', async (t) => {
  contract(
    t,
    await raw(request('GET /healthz HTTP/1.1', ['Expect: something-else'])),
    417,
    'expectation_failed',
  );
});

t.test('a request whose headers never complete is answered 408 request_timeout and closed', async (t) => {
  const res = await raw(['GET /healthz HTTP/1.1\r\nHost: x\r\n'], 10_000);
  contract(t, res, 408, 'request_timeout');
  t.ok(res.closed, 'the connection is closed');
});

t.test('a connection that sends nothing is answered 408 request_timeout and closed', async (t) => {
  // Node's own headers timeout, from the connection's start (a closing server stops it: close-connections.ts).
  const res = await raw([], 10_000);
  contract(t, res, 408, 'request_timeout');
  t.ok(res.closed, 'the connection is closed');
});

t.test('a request whose body never completes is answered 408 request_timeout and closed', async (t) => {
  const res = await raw(
    [
      'POST /agents/chat/invoke?wait=0 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"prompt":',
    ],
    10_000,
  );
  contract(t, res, 408, 'request_timeout');
  t.ok(res.closed, 'the connection is closed');
});

t.test("@fastify/static's refusals of paths outside its root are 404 not_found", async (t) => {
  for (const path of [
    '/docs/static/../../package.json',
    '/docs/static/..%2f..%2fpackage.json',
    '/docs/static/%2e%2e/x',
  ]) {
    const res = await raw(request(`GET ${path} HTTP/1.1`));
    t.not(res.status, 500, path);
    if (res.status !== 200) contract(t, res, 404, 'not_found');
    t.notMatch(JSON.stringify(res.body), /"name":\s*"agentmesh/, 'no file outside the static root is served');
  }
});

t.test('GET on an invoke path is 405 method_not_allowed with Allow: POST', async (t) => {
  const res = await raw(request('GET /agents/chat/invoke HTTP/1.1'));
  contract(t, res, 405, 'method_not_allowed');
  t.match(res.headers, /allow: POST/i);
});

t.test('the gateway still serves after all of it', async (t) => {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`);
  t.equal(res.status, 200);
});
