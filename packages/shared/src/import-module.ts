import { pathToFileURL } from 'node:url';

// This file runs as TypeScript only under a TypeScript loader (tests, `npm run gateway`): then
// user modules in TypeScript load as they are. Compiled, it registers tsx's loader the first
// time a config names a TypeScript module, so a mesh of JavaScript modules never loads it (the
// production image has no tsx at all: docs/guides/deploying.md, no TypeScript runtime).
const underLoader = import.meta.url.endsWith('.ts');
let loader: Promise<unknown> | undefined;

/** Imports a user module (tools, code agents, `mesh.config.ts`) by path, TypeScript included. */
export async function importModule(file: string): Promise<Record<string, unknown>> {
  if (!underLoader && /\.[cm]?tsx?$/.test(file)) {
    loader ??= import('tsx/esm/api').then((tsx) => tsx.register());
    try {
      await loader;
    } catch {
      loader = undefined;
      throw new Error(
        `${file} is TypeScript and no TypeScript loader is installed (tsx, an optional dependency ` +
          'the production image leaves out): compile it to JavaScript and name the .js file',
      );
    }
  }
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}
