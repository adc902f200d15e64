// The protocol SDKs load only where their protocol is used. The MCP SDK (docs/guides/mcp.md): its
// schemas cost each process that imports it about 0.2 s of CPU at start (0.5 s in a test process),
// so a gateway loads it with the first POST /mcp and a tool-host only when its config mounts an MCP
// server. The A2A SDK and jose, which it imports (docs/guides/a2a-and-remote-agents.md): about
// 0.1 s and 10 MiB, so a gateway loads it with the first A2A request and a runner with the first
// remote agent it runs or watches. A process importing all three services, as an in-process test
// mesh does, and using neither protocol loads none of them.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// A loader hook writing every module URL the process loads to a file (synchronously: no line is lost at exit).
const recorder = (file: string) =>
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(file)}, url + '\\n');
  return next(url, context);
}`)}`;

/** The module URLs `script` loads (run as an ES module from the repository's root). */
async function loadedBy(script: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-loading-'));
  const file = join(dir, 'loaded.txt');
  try {
    const register = `import { register } from 'node:module'; register(${JSON.stringify(recorder(file))});`;
    await promisify(execFile)(
      process.execPath,
      [
        '--import',
        `data:text/javascript,${encodeURIComponent(register)}`,
        '--input-type=module',
        '-e',
        script,
      ],
      { cwd: ROOT, timeout: 60_000 },
    );
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const isMcpSdk = (url: string) => url.includes('/@modelcontextprotocol/sdk/');
const isA2aSdk = (url: string) => url.includes('/@a2a-js/sdk/') || url.includes('/node_modules/jose/');

t.test(
  'importing the three services and mounting no MCP server loads no module of the MCP SDK, nor of the A2A SDK',
  async (t) => {
    const loaded = await loadedBy(`
    await import('@agentmesh/gateway');
    await import('@agentmesh/agent-runner');
    const { mountMcpServers } = await import('@agentmesh/tool-host');
    const mounted = await mountMcpServers({ file: '/nowhere/mesh.yaml', tools: ['./tools.js'] }, [], console);
    if (mounted.servers.length !== 0) process.exit(3);
  `);
    t.ok(
      loaded.some((url) => url.includes('/gateway/')),
      'the recorder saw the services load',
    );
    t.same(loaded.filter(isMcpSdk), []);
    t.same(loaded.filter(isA2aSdk), []);
  },
);

t.test("a tool-host mounting an MCP server loads the SDK's client", async (t) => {
  const loaded = await loadedBy(`
    const { mountMcpServers } = await import('@agentmesh/tool-host');
    // An MCP entry whose command cannot start: mounting it fails, after loading the client.
    await mountMcpServers(
      { file: '/nowhere/mesh.yaml', tools: [{ mcp: { command: '/nonexistent/mcp-server', args: [] } }] },
      [],
      { info() {}, warn() {}, error() {}, debug() {} },
      { retryInitialMs: 1, retryMaxMs: 1, stableMs: 1, pingIntervalMs: 1000, requestTimeoutMs: 1000, startWaitMs: 1 },
    ).catch(() => {});
  `);
  t.ok(loaded.some(isMcpSdk), "the tool-host's MCP client loads the SDK");
});
