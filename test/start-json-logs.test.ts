// `npm start` off a terminal (its output piped, as under a supervisor): JSON lines only, one per
// invocation started and finished, no per-request lines; a second `npm start` on the same ports
// stops before starting anything and never announces ready.
import t from 'tap';
import { atMost, npmStart, startEnv, until } from './support/npm-start.js';
import { freePort, startRedis } from './support/redis-server.js';

interface LogRecord {
  level: number;
  service: string;
  msg: string;
  [field: string]: unknown;
}

/** Every complete line of stdout but npm's own `> script` banner, parsed (a line that is not JSON throws). */
function records(stdout: string): LogRecord[] {
  const lines = stdout.split('\n').slice(0, -1);
  return lines.filter((l) => l !== '' && !l.startsWith('> ')).map((l) => JSON.parse(l) as LogRecord);
}

t.test('npm start writes JSON lines when its output is not a terminal', async (t) => {
  const redis = await startRedis();
  const gatewayPort = await freePort();
  const toolHostPort = await freePort();
  const env = startEnv({
    REDIS_URL: redis.url,
    GATEWAY_PORT: String(gatewayPort),
    TOOL_HOST_PORT: String(toolHostPort),
    RUNNERS: '1',
  });
  const npm = npmStart(env);
  // The mesh drains against Redis: it stops first.
  t.teardown(async () => {
    process.kill(-npm.pgid, 'SIGTERM');
    await atMost(npm.exited, 30_000);
    npm.kill();
    await redis.stop();
  });
  const gateway = `http://127.0.0.1:${gatewayPort}`;
  let ready: LogRecord;
  try {
    ready = await until('the ready line', 180_000, () => {
      if (npm.exitCode !== null) throw new Error(`npm start exited early (${npm.exitCode})`);
      return records(npm.stdout()).find((r) => r.service === 'mesh' && r.msg.startsWith('ready'));
    });
  } catch (e) {
    t.fail(`${(e as Error).message}\n${npm.output().slice(-3000)}`);
    return;
  }
  t.equal(ready.docs, `${gateway}/docs`, 'the ready line carries the docs URL');
  t.match(ready.curl, `curl -s -X POST '${gateway}/agents/planner/invoke?wait=60'`, 'and the curl hint');

  const res = await fetch(`${gateway}/agents/researcher/invoke?wait=60`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'How does Redis persist data?' }),
  });
  const view = (await res.json()) as { id: string; status: string };
  t.equal(view.status, 'succeeded', 'the researcher answers');
  const mine = (msg: string) =>
    records(npm.stdout()).filter((r) => r.msg === msg && r.invocationId === view.id);
  const finished = await until('the invocation finished line', 30_000, () => mine('invocation finished')[0]);
  t.match(
    mine('invocation started'),
    [{ level: 30, service: 'agent-runner', agent: 'researcher', invocationId: view.id }],
    'one line when the invocation started',
  );
  t.equal(mine('invocation started').length, 1);
  t.match(finished, {
    level: 30,
    service: 'agent-runner',
    agent: 'researcher',
    invocationId: view.id,
    status: 'succeeded',
    durationMs: Number,
  });
  t.equal(mine('invocation finished').length, 1, 'one line when it finished');

  const all = records(npm.stdout()); // throws if a line is not JSON
  t.ok(all.length > 0, `${all.length} JSON lines`);
  t.notOk(
    all.some((r) => r.reqId !== undefined || /incoming request|request completed/.test(r.msg)),
    'no per-request lines at the default level',
  );
  for (const service of ['mesh', 'gateway', 'agent-runner', 'tool-host'])
    t.ok(
      all.some((r) => r.service === service),
      `${service} speaks JSON`,
    );

  // The second npm start on the same ports: refused before anything starts.
  const pid = Number((await fetch(`${gateway}/healthz`)).headers.get('x-agentmesh-pid'));
  t.ok(pid > 0, 'the gateway tells its pid');
  const second = npmStart({ ...env, LOG_FORMAT: 'pretty' });
  t.teardown(() => second.kill());
  t.equal(await second.exited, 1, 'the second npm start exits with 1');
  const output = second.output();
  t.match(
    output,
    `GATEWAY_PORT=${gatewayPort}: port ${gatewayPort} is already taken by another agentmesh gateway (pid ${pid}`,
    'it says the gateway port is held by another agentmesh gateway',
  );
  t.match(output, `TOOL_HOST_PORT=${toolHostPort}: port ${toolHostPort} is already taken`);
  t.notMatch(output, /mesh\s+\| ready|\/docs|using Redis/, 'it never says ready, nor looks for Redis');
  t.equal((await fetch(`${gateway}/readyz`)).status, 200, 'the first mesh still serves');
});
