import fs from 'node:fs';
import path from 'node:path';

/** A Lua step as ioredis `defineCommand` takes it. */
export interface LuaScript {
  /** Absent for a step whose number of keys varies: its caller passes the count first. */
  numberOfKeys?: number;
  lua: string;
}

/** A constant a `.lua` file may declare: a number, a string, or a list of strings. */
export type LuaConstant = number | string | readonly string[];

// The three directives of a `.lua` file, each alone on its line (BullMQ's `--- @include`):
// - `--- @include "name"` is replaced by `includes/name.lua`, once per script (cycles refused);
// - `--- @const NAME` by `local NAME = <value>` from the loader's table, once per script;
// - `--- @insert NAME` by text the caller hands over: BullMQ's own steps, read from its package.
const INCLUDE = /^--- @include "([\w-]+)"\s*$/;
const CONST = /^--- @const (\w+)\s*$/;
const INSERT = /^--- @insert (\w+)\s*$/;

/**
 * The mesh's Lua script loader (docs/architecture/durability-and-fencing.md). Scripts are the
 * `.lua` files of its folders, fragments those of their `includes/` subfolders; a script or include
 * is looked up in the folders in order, so a service's own folder can include the shared ones.
 */
export class LuaLoader {
  private readonly dirs: readonly string[];
  private readonly texts = new Map<string, string>();

  constructor(
    dirs: readonly string[],
    private readonly constants: Readonly<Record<string, LuaConstant>> = {},
  ) {
    this.dirs = dirs.map(sourceDir);
  }

  /** A loader looking in `dir` first, then in this one's folders, with `constants` added. */
  extend(dir: string, constants: Readonly<Record<string, LuaConstant>> = {}): LuaLoader {
    return new LuaLoader([dir, ...this.dirs], { ...this.constants, ...constants });
  }

  /** The scripts of the loader's first folder (its own), by name, without their includes. */
  names(): string[] {
    return fs
      .readdirSync(this.dirs[0]!)
      .filter((f) => f.endsWith('.lua'))
      .map((f) => f.slice(0, -'.lua'.length))
      .sort();
  }

  /** The fragments of the loader's first folder (its `includes/`), by name. */
  includeNames(): string[] {
    const dir = path.join(this.dirs[0]!, 'includes');
    if (!fs.existsSync(dir)) return [];
    return fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.lua'))
      .map((f) => f.slice(0, -'.lua'.length))
      .sort();
  }

  /** Script `name` as ioredis defines it. */
  script(name: string, numberOfKeys?: number): LuaScript {
    const lua = this.text(name);
    return numberOfKeys === undefined ? { lua } : { numberOfKeys, lua };
  }

  /** Fragment `name` (of an `includes/` folder) resolved as a script would be: for tests. */
  fragment(name: string): string {
    return this.text(`includes/${name}`);
  }

  /**
   * Script `name` with its includes and constants resolved, and each `--- @insert NAME` replaced by
   * `inserts[NAME]` (cached without them).
   */
  text(name: string, inserts: Readonly<Record<string, string>> = {}): string {
    let text = this.texts.get(name);
    if (text === undefined) {
      text = this.resolve(this.find(name, name), new Set(), new Set(), []);
      this.texts.set(name, text);
    }
    return text
      .split('\n')
      .map((line) => {
        const m = INSERT.exec(line);
        if (!m) return line;
        const insert = inserts[m[1]!];
        if (insert === undefined) throw new Error(`lua ${name}: nothing given for "--- @insert ${m[1]}"`);
        return insert;
      })
      .join('\n');
  }

  private find(relative: string, from: string): string {
    for (const dir of this.dirs) {
      const file = path.join(dir, `${relative}.lua`);
      if (fs.existsSync(file)) return file;
    }
    throw new Error(`lua ${from}: no ${relative}.lua in ${this.dirs.join(', ')}`);
  }

  private resolve(file: string, included: Set<string>, declared: Set<string>, stack: string[]): string {
    if (stack.includes(file)) throw new Error(`lua include cycle: ${[...stack, file].join(' -> ')}`);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const out: string[] = [];
    for (const line of lines) {
      const include = INCLUDE.exec(line);
      const constant = CONST.exec(line);
      if (include) {
        const name = include[1]!;
        if (!included.has(name)) {
          const found = this.find(`includes/${name}`, file);
          out.push(this.resolve(found, included, declared, [...stack, file]).replace(/\n$/, ''));
          included.add(name);
        }
      } else if (constant) {
        const name = constant[1]!;
        const value = this.constants[name];
        if (value === undefined) throw new Error(`lua ${file}: no constant ${name} in the loader's table`);
        if (!declared.has(name)) out.push(`local ${name} = ${luaLiteral(value)}`);
        declared.add(name);
      } else out.push(line);
    }
    return out.join('\n');
  }
}

/** A constant as a Lua literal. */
function luaLiteral(value: LuaConstant): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`lua constant ${value}: only integers`);
    return String(value);
  }
  if (typeof value === 'string')
    return `'${value.replace(/[\\'\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))}'`;
  return `{${value.map(luaLiteral).join(', ')}}`;
}

/**
 * The folder holding the `.lua` files of `dir`: `dir` itself, or for compiled code running from a
 * workspace's `dist/` (which tsc fills with JavaScript only), the same folder under `src/`.
 */
function sourceDir(dir: string): string {
  const parts = dir.split(path.sep);
  const at = parts.lastIndexOf('dist');
  if (at < 0 || holdsLua(dir)) return dir;
  return [...parts.slice(0, at), 'src', ...parts.slice(at + 1)].join(path.sep);
}

function holdsLua(dir: string): boolean {
  return fs.existsSync(dir) && fs.readdirSync(dir).some((f) => f.endsWith('.lua'));
}
