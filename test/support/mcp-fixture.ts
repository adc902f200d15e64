import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { spawnUntracked } from './untracked-spawn.js';
import { waitUntil } from './wait-until.js';

/** The fixture MCP server (SDK McpServer): tools echo, add (structured), fail (isError), whoami, wait. */
export const MCP_FIXTURE = path.resolve(import.meta.dirname, '../fixtures/mcp/fixture-server.mjs');

/** Files a fixture reports through: its pid, a line per call and cancellation, a file that holds its restarts off. */
export interface FixtureFiles {
  pidFile: string;
  events: string;
  /** While this file exists the fixture exits at start (a stdio server that cannot come back yet). */
  hold: string;
  /** The event lines so far. */
  lines(): string[];
  pid(): number;
}

/** A fresh directory of fixture files, removed at teardown. */
export function fixtureFiles(t: Test): FixtureFiles {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-mcp-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const files = {
    pidFile: path.join(dir, 'pid'),
    events: path.join(dir, 'events'),
    hold: path.join(dir, 'hold'),
  };
  fs.writeFileSync(files.events, '');
  return {
    ...files,
    lines: () => fs.readFileSync(files.events, 'utf8').split('\n').filter(Boolean),
    pid: () => Number(fs.readFileSync(files.pidFile, 'utf8')),
  };
}

/** The fixture's command-line options that report through `files`. */
export const fixtureArgs = (files: FixtureFiles): string[] => [
  '--pid-file',
  files.pidFile,
  '--events',
  files.events,
  '--refuse-if',
  files.hold,
];

/** A `tools:` entry (YAML flow text) mounting the fixture over stdio. */
export function stdioEntry(args: string[], extra = ''): string {
  const mcp = { command: process.execPath, args: [MCP_FIXTURE, '--stdio', ...args] };
  return `{mcp: ${JSON.stringify(mcp)}${extra}}`;
}

/** A `tools:` entry (YAML flow text) mounting the fixture served over Streamable HTTP on `port`. */
export function httpEntry(port: number, extra = ''): string {
  return `{mcp: {url: 'http://127.0.0.1:${port}/mcp'}${extra}}`;
}

/** The fixture served over Streamable HTTP on `port` until `stop()` or teardown. */
export async function startHttpFixture(
  t: Test,
  port: number,
  args: string[] = [],
): Promise<{ proc: ChildProcess; stop(): Promise<void> }> {
  const proc = spawnUntracked(process.execPath, [MCP_FIXTURE, '--http', String(port), ...args], {
    env: process.env,
    stdio: 'ignore',
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    await exited;
  };
  t.teardown(stop);
  // Any HTTP answer means it listens (a GET without a session is refused).
  await waitUntil(
    async () => (await fetch(`http://127.0.0.1:${port}/mcp`)).status > 0,
    30_000,
    () => `the HTTP fixture on port ${port}`,
  );
  return { proc, stop };
}
