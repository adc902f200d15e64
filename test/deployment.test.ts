// The production image and compose file (docs/guides/deploying.md "Deployment"), checked without a Docker engine:
// the Dockerfile and docker-compose.yml are parsed and their properties asserted. When the compose
// CLI plugin is installed, `docker compose config` validates the file as Docker reads it too.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_DRAIN_MS, DEFAULT_RUNNER_CONCURRENCY } from '@agentmesh/shared';
import t from 'tap';
import YAML from 'yaml';
import { startDemoModel } from '../demo/model/demo-model.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const compose = YAML.parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
const services: Record<string, Service> = compose.services;

interface Service {
  build?: unknown;
  image?: string;
  command?: string[] | string;
  environment?: Record<string, string | number | null>;
  ports?: (string | { target: number; published?: string | number })[];
  expose?: (string | number)[];
  healthcheck?: { test: string[] | string };
  restart?: string;
  stop_grace_period?: string;
  container_name?: string;
}

/** One instruction of a Dockerfile: its keyword and its arguments (continuation lines joined). */
interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's stages, each a list of instructions, in order. */
function dockerStages(text: string): Instruction[][] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const stages: Instruction[][] = [];
  for (const raw of joined.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [keyword = '', ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'FROM') stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return stages;
}

const stages = dockerStages(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
const final = stages.at(-1) ?? [];
const finalOf = (keyword: string) => final.filter((i) => i.keyword === keyword);
const execForm = (i: Instruction | undefined): string[] => {
  try {
    return i ? (JSON.parse(i.args) as string[]) : [];
  } catch {
    return []; // shell form: a shell would be PID 1's child and swallow signals
  }
};

/** A compose duration (`45s`, `1m30s`, `500ms`) in milliseconds. */
function durationMs(text: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001 };
  let total = 0;
  for (const [, n, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|us|h|m|s)/g))
    total += Number(n) * units[unit!]!;
  return total;
}

/** The value compose gives a variable written as a literal or `${VAR:-default}` when VAR is unset. */
function defaultOf(value: string | number | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  const m = /^\$\{[A-Z0-9_]+:?-([^}]*)\}$/.exec(String(value));
  return m ? m[1] : String(value);
}

const words = (s: Service) => (Array.isArray(s.command) ? s.command : (s.command ?? '').split(/\s+/));
const healthText = (s: Service) => [s.healthcheck?.test ?? []].flat().join(' ');

t.test(
  'the image is built in two stages and runs compiled JavaScript without dev dependencies',
  async (t) => {
    t.ok(stages.length >= 2, 'a build stage and a run stage');
    const build = stages.slice(0, -1).flat();
    t.ok(
      build.some((i) => i.keyword === 'RUN' && /npm run build/.test(i.args)),
      'the build stage compiles',
    );
    const installs = finalOf('RUN').filter((i) => /\bnpm (ci|install)\b/.test(i.args));
    t.ok(installs.length > 0, 'the run stage installs its dependencies');
    for (const i of installs) t.match(i.args, /--omit=dev/, `no dev dependencies: ${i.args}`);
    for (const i of finalOf('COPY')) {
      t.notMatch(i.args, /node_modules/, `no node_modules copied from the build stage: ${i.args}`);
    }
    t.match(
      finalOf('ENV')
        .map((i) => i.args)
        .join(' '),
      /NODE_ENV=production/,
    );
  },
);

t.test('node runs behind an init that forwards signals, as a non-root user', async (t) => {
  const entrypoint = execForm(finalOf('ENTRYPOINT').at(-1));
  t.match(entrypoint[0] ?? '', /(^|\/)(tini|docker-init|dumb-init)$/, 'an init is PID 1');
  t.ok(
    finalOf('RUN').some((i) => /apt-get install[^&]*\btini\b/.test(i.args)),
    'tini comes from Debian',
  );
  const cmd = execForm(finalOf('CMD').at(-1));
  t.equal(cmd[0], 'node', 'node is the child process (exec form, not npm)');
  t.ok(
    cmd.some((a) => /dist\/main\.js$/.test(a)),
    'compiled JavaScript',
  );
  const user = finalOf('USER').at(-1)?.args;
  t.ok(user && !/^(root|0)(:|$)/.test(user), `a non-root user: ${user}`);
});

t.test('every compose service runs node (never npm) and restarts on failure', async (t) => {
  for (const [name, s] of Object.entries(services)) {
    t.match(s.restart ?? '', /^(always|unless-stopped|on-failure(:\d+)?)$/, `${name} has a restart policy`);
    if (!s.build) continue; // redis: its own image
    t.equal(words(s)[0], 'node', `${name} runs node as the init's child: ${words(s).join(' ')}`);
  }
  for (const name of ['redis', 'gateway', 'tool-host', 'agent-runner'])
    t.ok(services[name], `${name} exists`);
});

/** The mesh's own services (a `services/<name>/dist/main.js`), by the variable that sets their HTTP port. */
const meshPorts: Record<string, string> = {
  gateway: 'GATEWAY_PORT',
  'tool-host': 'TOOL_HOST_PORT',
  'agent-runner': 'RUNNER_METRICS_PORT',
};

t.test('every service has a healthcheck; the mesh services on /readyz, without curl', async (t) => {
  // Every service here is long-running (a one-shot job would have `restart: "no"`).
  for (const [name, s] of Object.entries(services)) {
    const test = [s.healthcheck?.test ?? []].flat();
    t.ok(test.length > 0 && test[0] !== 'NONE', `${name} has a healthcheck`);
    if (s.build) t.notMatch(healthText(s), /\b(curl|wget)\b/, `${name}: the image has no curl`);
  }
  const mesh = Object.keys(services).filter((name) =>
    words(services[name]!).some((w) => /^services\/[^/]+\/dist\/main\.js$/.test(w)),
  );
  t.strictSame(mesh.sort(), Object.keys(meshPorts).sort(), 'the mesh services');
  for (const name of mesh) {
    const port = defaultOf(services[name]!.environment?.[meshPorts[name]!]);
    t.ok(Number(port) > 0, `${name} has an HTTP port: ${port}`);
    t.match(
      healthText(services[name]!),
      new RegExp(`^CMD node -e .*fetch\\('http://127\\.0\\.0\\.1:${port}/readyz'`),
      `${name}: readiness on /readyz`,
    );
  }
});

t.test('the demo model’s healthcheck asks its own port for a path it serves', async (t) => {
  const demo = services['demo-model']!;
  const target = /fetch\('http:\/\/127\.0\.0\.1:(\d+)(\/[^']*)'/.exec(healthText(demo));
  t.ok(target, `an HTTP healthcheck: ${healthText(demo)}`);
  t.equal(target?.[1], defaultOf(demo.environment?.PORT), 'on the port it listens on');
  const model = await startDemoModel();
  t.teardown(() => model.close());
  const res = await fetch(`http://127.0.0.1:${model.port}${target?.[2]}`);
  t.equal(res.status, 200, `the demo model answers ${target?.[2]}`);
});

t.test('a runner stops within its grace period, after its drain', async (t) => {
  const runner = services['agent-runner']!;
  const drain = Number(defaultOf(runner.environment?.RUNNER_DRAIN_MS) ?? DEFAULT_DRAIN_MS);
  const grace = durationMs(runner.stop_grace_period ?? '10s');
  t.ok(grace > drain, `stop_grace_period ${runner.stop_grace_period} > RUNNER_DRAIN_MS ${drain} ms`);
  t.ok(
    durationMs(services['tool-host']!.stop_grace_period ?? '10s') > 30_000,
    'tool calls in flight (30 s timeout by default) end before the tool-host is killed',
  );
});

t.test(
  'a runner in compose gets the shipped slot count unless RUNNER_CONCURRENCY says otherwise',
  async (t) => {
    const runner = services['agent-runner']!;
    const value = runner.environment?.RUNNER_CONCURRENCY;
    t.match(String(value), /^\$\{RUNNER_CONCURRENCY:-/, 'the operator may set it');
    t.equal(Number(defaultOf(value)), DEFAULT_RUNNER_CONCURRENCY, 'the default is the services’ own');
  },
);

t.test('each runner replica has a scrapeable metrics port without a fixed host port', async (t) => {
  const runner = services['agent-runner']!;
  const port = Number(defaultOf(runner.environment?.RUNNER_METRICS_PORT));
  t.ok(port > 0, `RUNNER_METRICS_PORT is on: ${port}`);
  const host =
    defaultOf(runner.environment?.HOST) ??
    /HOST=(\S+)/.exec(
      finalOf('ENV')
        .map((i) => i.args)
        .join(' '),
    )?.[1];
  t.equal(host, '0.0.0.0', 'metrics listen on every interface of the container');
  t.notOk(runner.container_name, 'no container_name: --scale needs distinct names');
  const reachable = [...(runner.expose ?? []), ...(runner.ports ?? [])].map((p) =>
    typeof p === 'object' ? String(p.target) : String(p).split(':').at(-1),
  );
  t.ok(reachable.includes(String(port)), `port ${port} is exposed to scrapers: ${reachable.join(', ')}`);
  for (const p of runner.ports ?? []) {
    const published = typeof p === 'string' ? p.split(':').slice(-2, -1)[0] : p.published;
    t.notOk(published, `no fixed host port for ${JSON.stringify(p)}: replicas would collide`);
  }
});

t.test('the internal token is required for the tool-host and the runners', async (t) => {
  for (const name of ['tool-host', 'agent-runner']) {
    t.match(
      String(services[name]!.environment?.MESH_INTERNAL_TOKEN),
      /^\$\{MESH_INTERNAL_TOKEN:\?.+\}$/,
      `${name}: compose refuses to start without MESH_INTERNAL_TOKEN`,
    );
  }
});

const composeCli = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
t.test(
  '`docker compose config` accepts the file and refuses it without MESH_INTERNAL_TOKEN',
  { skip: composeCli.status !== 0 && 'the docker compose CLI plugin is not installed' },
  async (t) => {
    const run = (env: Record<string, string>) =>
      spawnSync('docker', ['compose', '-f', 'docker-compose.yml', 'config', '--quiet'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      });
    const ok = run({ MESH_INTERNAL_TOKEN: 'x'.repeat(32) });
    t.equal(ok.status, 0, ok.stderr);
    const refused = run({});
    t.not(refused.status, 0);
    t.match(refused.stderr, /MESH_INTERNAL_TOKEN/);
  },
);
