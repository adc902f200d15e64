// The mesh's Lua loaders, and its steps as Redis runs them, for the tests of the .lua files
// (test/lua-files.test.ts, test/lua-keys.test.ts).
import { createHash } from 'node:crypto';
import { type LuaLoader, meshLua } from '@agentmesh/shared/redis';
import { modelLua } from '../../services/agent-runner/src/loop/model/concurrency-limited-model.js';
import { bullmqScript } from '../../services/agent-runner/src/queue/fast-path/bullmq-script.js';
import { fetchScripts } from '../../services/agent-runner/src/queue/fast-path/fetch-scripts.js';
import { GUARDED_ADD } from '../../services/agent-runner/src/queue/fast-path/guarded-add.js';
import { GUARDED_PARK } from '../../services/agent-runner/src/queue/fast-path/guarded-park.js';
import { runnerLua } from '../../services/agent-runner/src/queue/fast-path/runner-lua.js';
import { takeStepLua } from '../../services/agent-runner/src/queue/fast-path/take-step.js';
import { outcomeLua } from '../../services/tool-host/src/idempotency/outcome-store.js';

/** A script's hash as Redis names it; `latin1` for MONITOR's text, one char per byte sent. */
export const sha1 = (text: string, encoding: 'utf8' | 'latin1' = 'utf8') =>
  createHash('sha1').update(text, encoding).digest('hex');

/** Any insert a file names, given as nothing: the file alone, as Redis compiles it. */
export const NOTHING = new Proxy({}, { get: () => '' }) as Record<string, string>;

/** The loaders of the mesh's plain steps, each over its own folder: each step touches its KEYS only. */
export const PLAIN: [string, LuaLoader][] = [
  ['packages/shared/src/lua', meshLua],
  ['services/agent-runner/src/loop/model/lua', modelLua],
  ['services/tool-host/src/idempotency/lua', outcomeLua],
];

/** The loaders of the fast path's Lua, which goes into BullMQ's steps. */
export const FAST_PATH: [string, LuaLoader][] = [
  ['services/agent-runner/src/queue/fast-path/lua', runnerLua],
];

/** Every .lua file of the source trees is in one of these. */
export const LOADERS = [...PLAIN, ...FAST_PATH];

/** A file's header: its leading comment lines, kept verbatim in every step built from it. */
export const header = (lua: LuaLoader, name: string) =>
  lua
    .text(name, NOTHING)
    .split('\n')
    .filter((_, i, lines) => lines.slice(0, i + 1).every((l) => l.startsWith('--')))
    .join('\n');

/** The fast path's steps as defined, BullMQ's text with the mesh's Lua in it. */
export const FAST_STEPS: Record<string, string> = {
  take: takeStepLua(),
  finishing: fetchScripts()[1]!.lua,
  'guarded-add': GUARDED_ADD.lua,
  'guarded-park': GUARDED_PARK.lua,
  'gone-runner-lease': runnerLua.text('gone-runner-lease'),
  'gone-runner-release': runnerLua.text('gone-runner-release'),
  'reclaim-gone': runnerLua.text('reclaim-gone', {
    STALLED_CHECK: bullmqScript('moveStalledJobsToWait', 9).content,
  }),
};
