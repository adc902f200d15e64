// Notes when each hop of a run happens in this process, for bench/hops.ts
// (docs/architecture/where-the-time-goes.md, "Where a single run's time goes"). Loaded into every
// process of a traced mesh with `NODE_OPTIONS=--import <this file>`; plain JavaScript, so compiled
// services load it as they are.
//
// It subscribes to nothing until SIGUSR2, so an untraced process runs as it would without it. While
// on, it reads only Node's diagnostics channels, which the libraries publish themselves (nothing is
// patched): HTTP requests served (node:http), HTTP requests made (undici, which Node's fetch is too),
// and Redis commands sent and answered (ioredis's `ioredis:command` tracing channel). The next
// SIGUSR2 stops it and writes what it noted, one `<µs> <event>` line each (CLOCK_MONOTONIC, which
// every process on the machine shares), to $HOP_TRACE_DIR/<role>-<pid>.txt.
import dc from 'node:diagnostics_channel';
import fs from 'node:fs';
import path from 'node:path';
import { stepName } from './step-name.mjs';

/** This process's part, from its entry file: the role every line of its file is read as. */
const entry = process.argv[1] ?? '';
const role = /agent-runner|bare-runner/.test(entry)
  ? 'runner'
  : /gateway/.test(entry)
    ? 'gateway'
    : /tool-host/.test(entry)
      ? 'tool-host'
      : /model/.test(entry)
        ? 'model'
        : 'client';

/** @type {string[]} */
let lines = [];
const now = () => process.hrtime.bigint() / 1000n;
/** @param {string} event */
const note = (event) => {
  lines.push(`${now()} ${event}`);
};

/**
 * A Redis command as a line names it (step-name.mjs).
 * @param {{command: string, args?: string[]}} c
 */
const commandOf = (c) => stepName(c.command, c.args?.[1], c.args?.[2]);

/** @type {[string, (message: any) => void][]} */
const plain = [
  ['http.server.request.start', () => note('http in')],
  ['http.server.response.finish', () => note('http out')],
  ['undici:request:create', () => note('request create')],
  ['undici:client:sendHeaders', () => note('request sent')],
  ['undici:request:headers', () => note('response headers')],
  ['undici:request:trailers', () => note('response end')],
];
const redis = dc.tracingChannel('ioredis:command');
const redisHandlers = {
  /** @param {any} c */
  start: (c) => note(`redis> ${commandOf(c)}`),
  /** @param {any} c */
  asyncEnd: (c) => note(`redis< ${commandOf(c)}`),
  end: () => undefined,
  asyncStart: () => undefined,
  error: () => undefined,
};

let on = false;
/** Starts noting (true) or stops and writes what was noted (false). */
export function hopTrace(start) {
  if (start === on) return;
  on = start;
  if (start) {
    lines = [];
    for (const [name, fn] of plain) dc.subscribe(name, fn);
    redis.subscribe(redisHandlers);
    return;
  }
  for (const [name, fn] of plain) dc.unsubscribe(name, fn);
  redis.unsubscribe(redisHandlers);
  const dir = process.env.HOP_TRACE_DIR;
  if (dir) fs.writeFileSync(path.join(dir, `${role}-${process.pid}.txt`), lines.join('\n') + '\n');
}

/** A mark of the process's own (the client's send and answer). */
export const hopMark = note;

process.on('SIGUSR2', () => hopTrace(!on));
