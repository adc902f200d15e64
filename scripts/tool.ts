// `npm run tool -- <name> '<json args>'` (docs/guides/getting-started.md): runs one tool through the running tool-host's
// own route, as a runner's call would (POST /tools/{name}/invoke with the context filled in: an
// invocation id, a call id, the deadline, a fresh Idempotency-Key), and prints its result as JSON,
// or its error; an unknown name lists the tools. Approvals are the runners' (docs/guides/approvals-and-budgets.md): a tool
// that needs one runs here at once.
import { randomUUID } from 'node:crypto';
import { DEFAULT_TOOL_TIMEOUT_MS, loadConfig, newRootId, serviceEnv, type ToolInfo } from '@agentmesh/shared';

const USAGE = `usage: npm run tool -- <name> '<json args>'   (e.g. npm run tool -- calculator '{"expression": "2 * 21"}')`;
// How long past the tool's own timeout the answer may take (the tool-host's timeout ends it first).
const MARGIN_MS = 5000;

const [name, raw = '{}', ...extra] = process.argv.slice(2);
if (!name || name.startsWith('-') || extra.length > 0) fail(USAGE, 2);
let args: unknown;
try {
  args = JSON.parse(raw);
} catch (e) {
  fail(`the arguments are not JSON (${(e as Error).message}): ${raw}\n${USAGE}`, 2);
}

const env = readEnv();
const base = (await toolHostUrl()).replace(/\/$/, '');
const headers: Record<string, string> = { 'content-type': 'application/json' };
if (env.internalToken) headers.authorization = `Bearer ${env.internalToken}`;

const tools = await listTools();
const tool = tools.find((t) => t.name === name);
if (!tool) {
  const names = tools.map((t) => t.name).join(', ') || 'none';
  fail(`no tool is named ${name}; the tool-host at ${base} serves: ${names}`, 1);
}
const timeoutMs = tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
const context = {
  invocationId: newRootId(),
  callId: 'npm-run-tool',
  agent: 'npm-run-tool',
  deadline: new Date(Date.now() + timeoutMs).toISOString(),
  idempotencyKey: `npm-run-tool-${randomUUID()}`,
};
const res = await request(`${base}/tools/${encodeURIComponent(name)}/invoke`, {
  method: 'POST',
  headers,
  body: JSON.stringify({ args, context }),
  signal: AbortSignal.timeout(timeoutMs + MARGIN_MS),
});
const body = (await res.json().catch(() => undefined)) as
  | {
      result?: unknown;
      error?: { code: string; message: string; details?: { path: string; message: string }[] };
    }
  | undefined;
if (res.ok && body && 'result' in body) {
  process.stdout.write(`${JSON.stringify(body.result, null, 2)}\n`);
  process.exit(0);
}
const error = body?.error;
if (!error) fail(`the tool-host answered ${res.status} without an error body`, 1);
fail(`${name} failed: ${error.code}: ${error.message}`, 1);

/**
 * The tool-host's URL: TOOL_HOST_URL; else loopback on TOOL_HOST_PORT when it is set (as
 * `TOOL_HOST_PORT=… npm start` runs it); else the config's `toolHost`.
 */
async function toolHostUrl(): Promise<string> {
  if (env.toolHostUrl) return env.toolHostUrl;
  const loopback = `http://127.0.0.1:${env.toolHostPort}`;
  if (process.env.TOOL_HOST_PORT) return loopback;
  try {
    return (await loadConfig(env.configFile, process.env)).toolHost;
  } catch {
    return loopback;
  }
}

async function listTools(): Promise<ToolInfo[]> {
  const listed = await request(`${base}/tools`, { headers, signal: AbortSignal.timeout(10_000) });
  if (!listed.ok) fail(`the tool-host at ${base} answered GET /tools with ${listed.status}`, 1);
  return ((await listed.json()) as { tools: ToolInfo[] }).tools;
}

async function request(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (e) {
    const why = (e as Error).name === 'TimeoutError' ? 'no answer in time' : (e as Error).message;
    return fail(
      `cannot reach the tool-host at ${base} (${why}): start the mesh (npm start), or set TOOL_HOST_URL`,
      1,
    );
  }
}

function readEnv(): ReturnType<typeof serviceEnv> {
  try {
    return serviceEnv(process.env);
  } catch (e) {
    return fail((e as Error).message, 2);
  }
}

function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
