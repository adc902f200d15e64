// `npm start` for real: no Redis at REDIS_URL, so it starts its own; no model, so the offline demo
// model answers; human-readable lines (LOG_FORMAT=pretty, as on a terminal), one per invocation
// started and finished; SIGTERM to npm stops every process it started.

import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import t from 'tap';
import { isListening } from '../scripts/free-port.js';
import { atMost, processes, until, withoutCoverage } from './support/npm-start.js';
import { freePort } from './support/redis-server.js';
import { spawnUntracked } from './support/untracked-spawn.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const groupProcesses = (pgid: number) => processes('-g', String(pgid));
// The private redis-server has its own process group (Ctrl-C must not stop it before the services).
const redisProcesses = (port: number) =>
  processes('-e').filter((p) => p.includes(`redis-server 127.0.0.1:${port}`));

t.test(
  'npm start runs the whole mesh on a private Redis and the demo model, and SIGTERM stops all of it',
  async (t) => {
    const redisPort = await freePort();
    const gatewayPort = await freePort();
    const toolHostPort = await freePort();
    t.notOk(await isListening(redisPort), 'nothing listens at REDIS_URL');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      GATEWAY_PORT: String(gatewayPort),
      TOOL_HOST_PORT: String(toolHostPort),
      RUNNERS: '2',
      LOG_FORMAT: 'pretty',
    };
    for (const name of [
      'MODEL_BASE_URL',
      'TOOL_HOST_URL',
      'MESH_CONFIG',
      'MESH_API_KEYS',
      'MESH_PREFIX',
      'HOST',
      'LOG_LEVEL',
      'RUNNER_METRICS_PORT',
    ])
      delete env[name];
    // Its own process group, so the teardown can kill whatever is left even if the test fails.
    const npm = spawnUntracked('npm', ['start'], {
      cwd: ROOT,
      env: withoutCoverage(env),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pgid = npm.pid!;
    let output = '';
    npm.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
    });
    npm.stderr!.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const npmExited = new Promise((resolve) => npm.once('exit', resolve));
    // Every process of npm start shares these pipes: they end once the last one has exited.
    const outputEnded = Promise.all(
      [npm.stdout!, npm.stderr!].map((s) => new Promise((r) => s.once('end', r))),
    );
    let redisPid: number | undefined;
    t.teardown(() => {
      for (const target of [-pgid, redisPid]) {
        try {
          if (target !== undefined) process.kill(target, 'SIGKILL');
        } catch {
          // gone already, as it should be
        }
      }
    });
    const gateway = `http://127.0.0.1:${gatewayPort}`;
    try {
      await until('the docs URL', 180_000, () => {
        if (npm.exitCode !== null) throw new Error(`npm start exited early (${npm.exitCode})`);
        // The banner, not the gateway's own `gateway ready docs=…` line: that one comes before ready.
        return output.includes(`API docs (Swagger UI): ${gateway}/docs`) ? true : undefined;
      });
    } catch (e) {
      t.fail(`${(e as Error).message}\n${output.slice(-3000)}`);
      return;
    }
    t.match(output, 'starting a private redis-server', 'it says it starts its own Redis');
    t.match(output, /answers come from the OFFLINE DEMO MODEL/, 'it says who answers');
    t.match(
      output,
      `curl -s -X POST '${gateway}/agents/planner/invoke?wait=60'`,
      'it prints a curl for the planner',
    );
    const privateRedis = Number(/private Redis ready at redis:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
    t.ok(
      privateRedis > 0 && privateRedis !== 6379 && privateRedis !== redisPort,
      `private Redis on port ${privateRedis}`,
    );
    t.equal((await fetch(`${gateway}/readyz`)).status, 200, 'the gateway is ready');

    const res = await fetch(`${gateway}/agents/planner/invoke?wait=60`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        prompt:
          'How do BullMQ flows wait for child jobs, and how does Redis persist data? Also compute 3 * 16.',
      }),
    });
    const view = (await res.json()) as {
      id: string;
      status: string;
      output: unknown;
      calls: { kind: string; name: string }[];
    };
    t.equal(res.status, 200, 'the planner answers within the wait', { view });
    t.equal(view.status, 'succeeded');
    t.ok(String(view.output).startsWith('[offline demo model] '), 'the answer is labelled', {
      output: view.output,
    });
    t.match(view.output, 'calculator: 3 * 16 = 48');
    t.match(view.output, 'BullMQ flows: parent and child jobs', 'the answer cites a document title');
    t.ok(view.calls.filter((c) => c.kind === 'subagent').length >= 2, 'the planner delegated twice');

    // What the terminal shows: a line per invocation started and finished, none per request.
    const plain = () => stripVTControlCharacters(output);
    const finished = new RegExp(
      `^runner-[12]\\s+\\| \\[[0-9:]+\\] INFO: invocation finished agent=planner invocationId=${view.id} status=succeeded durationMs=\\d+ rootId=${view.id}$`,
      'm',
    );
    await until('the planner finished line', 30_000, () => (finished.test(plain()) ? true : undefined)).catch(
      () => undefined,
    );
    t.match(plain(), finished, 'a line says the planner finished, with its id, status and duration');
    t.match(
      plain(),
      new RegExp(
        `^runner-[12]\\s+\\| \\[[0-9:]+\\] INFO: invocation started agent=planner invocationId=${view.id} rootId=${view.id}$`,
        'm',
      ),
      'a line says it started',
    );
    const children = view.calls.filter((c) => c.kind === 'subagent').length;
    t.equal(
      plain().match(/INFO: invocation started agent=(researcher|fact_checker) /g)?.length,
      children,
      'a started line per delegation',
    );
    t.match(
      plain(),
      /^gateway\s+\| \[[0-9:]+\] INFO: gateway ready docs=/m,
      'services say when they are ready',
    );
    t.notMatch(plain(), /incoming request|request completed|reqId=/, 'no per-request lines');
    t.notMatch(plain(), /\|\s*\{"level"/, 'no JSON lines');

    const before = groupProcesses(pgid);
    const [redisLine] = redisProcesses(privateRedis);
    redisPid = Number(redisLine?.split(' ')[0]);
    t.ok(redisPid > 0, 'the private redis-server runs');
    for (const main of ['tool-host', 'agent-runner', 'gateway']) {
      const own = before.filter((p) => p.includes(`services/${main}/dist/main.js`));
      t.ok(own.length > 0, `${main} runs in the group, compiled`);
      t.notMatch(own.join('\n'), /tsx/, `${main} runs without a TypeScript loader`);
    }
    t.equal(
      before.filter((p) => p.includes('services/agent-runner/dist/main.js')).length,
      2,
      'two runners run',
    );

    process.kill(pgid, 'SIGTERM'); // npm itself, as a supervisor would
    await npmExited;
    const left = await until('every process of npm start to exit', 40_000, () => {
      const now = groupProcesses(pgid);
      return now.length === 0 ? now : undefined;
    }).catch(() => groupProcesses(pgid));
    t.strictSame(left, [], 'no process of npm start is left', { output: output.slice(-3000) });
    t.strictSame(redisProcesses(privateRedis), [], 'no redis-server of npm start is left');
    await atMost(outputEnded, 5000);
    t.match(output, /mesh\s+\| stopped/, 'it says it stopped');
    t.notOk(await isListening(privateRedis), 'the private Redis is gone');
    t.notOk(await isListening(gatewayPort), 'the gateway is gone');
    t.notOk(await isListening(toolHostPort), 'the tool-host is gone');
  },
);
