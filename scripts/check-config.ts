// The config check of `npm start` and `npm run dev`, in a process of its own: importing the tools
// and code agents' modules runs their top-level code, which must not stay in npm start's process,
// and a changed module is only read again by a new process (ESM has no reload). A resolve hook
// records who imports what, so that `npm run dev` knows which files belong to which part.
import { register } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import type { CheckedConfig } from './checked-config.js';
import { watchedFiles } from './checked-config.js';
import { inspectMeshConfig } from './inspect-mesh-config.js';

const HOOKS = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (context.parentURL?.startsWith('file:') && resolved.url.startsWith('file:'))
    port.postMessage([context.parentURL, resolved.url]);
  return resolved;
}`;

const imports = new Map<string, Set<string>>();
const { port1, port2 } = new MessageChannel();
port1.on('message', ([from, to]: [string, string]) => {
  const importer = fileURLToPath(from);
  if (!imports.has(importer)) imports.set(importer, new Set());
  imports.get(importer)!.add(fileURLToPath(to));
});
port1.unref();
register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, {
  data: { port: port2 },
  transferList: [port2],
});

const inspection = await inspectMeshConfig(process.env);
// The hooks' messages come from their own thread: let those of the last imports arrive.
await new Promise((r) => setTimeout(r, 50));
// The mesh's own packages are the services' code, run compiled: `npm run dev` does not rebuild them.
const own = ['packages/', 'services/'].map((d) => fileURLToPath(new URL(`../${d}`, import.meta.url)));
const checked: CheckedConfig = { ...inspection, watched: watchedFiles(inspection.roots, imports, own) };
if (process.send) process.send(checked, () => process.exit(0));
else {
  process.stdout.write(`${JSON.stringify(checked)}\n`);
  process.exit(0);
}
