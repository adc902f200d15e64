/** One registered route: its method and its URL pattern as a regular expression. */
interface RoutePattern {
  method: string;
  pattern: RegExp;
}

/**
 * The methods the app's routes answer on a concrete path, for a 405's `Allow` header. Fed by an
 * `onRoute` hook with fastify's URL patterns (`/invocations/:id`, `/docs/static/*`).
 */
export class AllowedMethods {
  private readonly routes: RoutePattern[] = [];

  /** Records a route; `GET` routes answer `HEAD` too (fastify's exposeHeadRoutes). */
  add(methods: string | string[], url: string): void {
    const pattern = toPattern(url);
    for (const method of [methods].flat()) {
      this.routes.push({ method, pattern });
      if (method === 'GET') this.routes.push({ method: 'HEAD', pattern });
    }
  }

  /** The methods some route answers on `path` (sorted, each once); empty when none does. */
  on(path: string): string[] {
    const found = new Set(this.routes.filter((r) => r.pattern.test(path)).map((r) => r.method));
    return [...found].sort();
  }
}

/** `/a/:id/b` → `^/a/[^/]+/b$`, `/s/*` → `^/s/.*$`, `/p/` → `^/p/?$`; every other character is literal. */
function toPattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) return '[^/]+';
      if (segment === '*') return '.*';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  // A prefix's own route (`/docs/`) is served without its trailing slash too.
  return new RegExp(url.length > 1 && url.endsWith('/') ? `^${source}?$` : `^${source}$`);
}
