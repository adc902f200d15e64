import { signal } from '@preact/signals';

/** Where the page is: `#/invocations`, `#/invocations/<id>` or `#/agents` (docs/guides/console.md deep links). */
export type Route = { page: 'invocations' } | { page: 'invocation'; id: string } | { page: 'agents' };

// An invocation id: `inv_`, 32 hex digits, and a child's 16 more (ids.ts of the mesh).
const INVOCATION = /^#\/invocations\/(inv_[0-9a-f]{32}(?:-[0-9a-f]{16})?)$/;

/** The route a location hash names; anything unknown is the invocations list. */
export function parseRoute(hash: string): Route {
  const m = INVOCATION.exec(hash);
  if (m) return { page: 'invocation', id: m[1]! };
  if (hash === '#/agents') return { page: 'agents' };
  return { page: 'invocations' };
}

/** The current route, following the location hash. */
export const route = signal<Route>(parseRoute(location.hash));
addEventListener('hashchange', () => {
  route.value = parseRoute(location.hash);
});

/** Opens an invocation's tree. */
export function openInvocation(id: string): void {
  location.hash = `#/invocations/${id}`;
}
