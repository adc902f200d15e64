import type { Options } from 'ajv';
import { RE2JS } from 're2js';

type RegExpEngine = NonNullable<NonNullable<Options['code']>['regExp']>;

/**
 * The engine Ajv runs schema `pattern` and `patternProperties` with: RE2 (re2js, pure
 * JavaScript), which matches in time linear in the input. Schemas come from users and MCP
 * servers and are applied to model output and request bodies, so a pattern like `^(a+)+$` must
 * not be able to stall a process (docs/reference/bounds.md). RE2 has no backreferences or lookaround: a schema
 * using them is refused when it is compiled, with RE2's reason.
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    // Ajv passes `u`; RE2 always matches by code point, so the flag needs no counterpart.
    const re = RE2JS.compile(pattern);
    // Ajv caches compiled patterns by `toString()`: it must name the pattern, as RegExp's does.
    return { test: (s: string) => re.test(s), toString: () => `/${pattern}/${flags}` };
  },
  { code: 'linearRegExp' },
);
