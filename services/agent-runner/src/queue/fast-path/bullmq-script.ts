import { createRequire } from 'node:module';

/** One of BullMQ's Lua steps as its package exports it. */
export interface BullScript {
  name: string;
  content: string;
  keys: number;
}

const require = createRequire(import.meta.url);

/** The installed BullMQ's version: its steps are defined under `<name>:<version>`. */
export const BULLMQ_VERSION = (require('bullmq/dist/cjs/version.js') as { version: string }).version;

/** BullMQ's step `name` with `keys` keys, its text as the installed package ships it. */
export function bullmqScript(name: string, keys: number): BullScript {
  const exported = require(`bullmq/dist/cjs/scripts/${name}-${keys}.js`) as Record<string, BullScript>;
  const script = exported[name];
  if (!script) throw new Error(`bullmq ${BULLMQ_VERSION} ships no step ${name} with ${keys} keys`);
  return script;
}
