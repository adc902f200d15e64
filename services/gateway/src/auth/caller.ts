/**
 * Who sent a request, as the routes need to know it: which agents it may use, which invocations
 * it may see, and the owner to record on the invocations it starts.
 */
export interface Caller {
  /** sha256 hex of the caller's API key (never the key itself); undefined when auth is off. */
  readonly owner: string | undefined;
  /** True when the caller may invoke or describe `agent`. */
  mayUse(agent: string): boolean;
  /** True when the caller may see an invocation recorded with `owner` (the hash stored on it). */
  sees(owner: string | undefined): boolean;
}

/** The caller of every request when `MESH_API_KEYS` is unset: anything goes, as before auth. */
export const ANYONE: Caller = Object.freeze({
  owner: undefined,
  mayUse: () => true,
  sees: () => true,
});

/** The caller of an open route (`/healthz`…) while auth is on: it may use and see nothing. */
export const NOBODY: Caller = Object.freeze({
  owner: undefined,
  mayUse: () => false,
  sees: () => false,
});

/** The caller holding one API key: its scope, and only the invocations that key started. */
export function keyCaller(owner: string, agents: readonly string[] | undefined): Caller {
  const scope = agents && new Set(agents);
  return Object.freeze({
    owner,
    mayUse: (agent: string) => !scope || scope.has(agent),
    // An invocation started before auth was turned on has no owner, and so no key sees it.
    sees: (recorded: string | undefined) => recorded === owner,
  });
}
