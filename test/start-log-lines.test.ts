// How services log: the format chosen from LOG_FORMAT and the terminal, per-request lines at debug,
// one human-readable line per record, each line written as it is logged.
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { formatLogLine, isMeshError, logFormat, loggerOptions } from '@agentmesh/shared';
import Fastify from 'fastify';
import { pino } from 'pino';
import t from 'tap';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino(loggerOptions('gateway', level), stream), lines };
}

t.test('LOG_FORMAT decides, else pretty only on a terminal', async (t) => {
  t.equal(logFormat(undefined, true), 'pretty');
  t.equal(logFormat('', true), 'pretty');
  t.equal(logFormat(undefined, false), 'json');
  t.equal(logFormat('json', true), 'json');
  t.equal(logFormat('pretty', false), 'pretty');
  let error: unknown;
  try {
    logFormat('PRETTY', true);
  } catch (e) {
    error = e;
  }
  t.ok(isMeshError(error, 'invalid_config'), 'any other value is a configuration error');
});

t.test("fastify's per-request lines are debug lines; warnings, errors and other lines stay", async (t) => {
  for (const level of ['info', 'debug']) {
    const { log, lines } = capture(level);
    const app = Fastify({ loggerInstance: log });
    app.get('/x', async (req) => {
      req.log.warn('odd request');
      return { ok: true };
    });
    t.equal((await app.inject({ method: 'GET', url: '/x' })).statusCode, 200);
    log.info({ agent: 'planner' }, 'invocation started');
    await app.close();
    const messages = lines.map((l) => `${l.level} ${l.msg}`);
    const perRequest = level === 'debug' ? ['20 incoming request', '20 request completed'] : [];
    t.same(
      messages.filter((m) => /request/.test(m)),
      [...perRequest.slice(0, 1), '40 odd request', ...perRequest.slice(1)],
      `at ${level}`,
    );
    t.ok(messages.includes('30 invocation started'), 'a line of the service itself stays at info');
    t.ok(
      lines.every((l) => l.service === 'gateway'),
      'every line names the service',
    );
  }
});

t.test('a record reads as its message, then its fields as key=value', async (t) => {
  t.equal(
    formatLogLine({
      level: 30,
      time: 1,
      pid: 2,
      hostname: 'h',
      service: 'agent-runner',
      msg: 'invocation finished',
      agent: 'planner',
      invocationId: 'inv_1',
      status: 'failed',
      durationMs: 12,
      error: { code: 'cancelled', message: 'The invocation was cancelled.' },
    }),
    'invocation finished agent=planner invocationId=inv_1 status=failed durationMs=12 error={"code":"cancelled","message":"The invocation was cancelled."}',
  );
  t.equal(
    formatLogLine({ msg: 'redis connection error', err: 'connect ECONNREFUSED' }),
    'redis connection error err="connect ECONNREFUSED"',
  );
  t.equal(formatLogLine({ msg: 'ready', agents: ['a', 'b'], ok: true }), 'ready agents=["a","b"] ok=true');
});

t.test(
  "a service's lines are written as they are logged: a process killed right after loses none",
  async (t) => {
    // pino's own default hands lines to a helper thread, and holds those logged while it writes: the
    // second line would die with the process.
    const probe = `
    import { startService } from '@agentmesh/shared';
    const { log } = await startService('probe', 'probe');
    log.info('first words');
    log.info('last words');
    process.kill(process.pid, 'SIGKILL');`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', probe], {
      cwd: import.meta.dirname, // where @agentmesh/shared resolves
      env: { ...process.env, LOG_FORMAT: 'json', LOG_LEVEL: 'info' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    t.equal(run.signal, 'SIGKILL', run.stderr);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; service: string });
    t.strictSame(
      lines.map((l) => l.msg),
      ['first words', 'last words'],
    );
    t.equal(lines[1]?.service, 'probe');
  },
);
