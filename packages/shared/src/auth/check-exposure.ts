import { MeshError } from '../errors/mesh-error.js';

/** True for addresses only this machine reaches: 127.0.0.0/8, `::1` and `localhost` (docs/reference/rest-api.md). */
export function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  const parts = v4.split('.');
  return (
    parts.length === 4 && parts[0] === '127' && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)
  );
}

/** What a listener is exposed with: its address and whether the secret that guards it is set. */
export interface Exposure {
  /** `gateway` or `tool-host`, for the message. */
  service: string;
  host: string;
  /** The env var holding the secret (`MESH_API_KEYS`, `MESH_INTERNAL_TOKEN`). */
  secretVar: string;
  secretSet: boolean;
  allowAnonymous: boolean;
}

/**
 * Secure by default (docs/reference/rest-api.md): a non-loopback listener without its secret refuses to start,
 * unless `MESH_ALLOW_ANONYMOUS=true` says it is intended; then the warning to log is returned.
 */
export function checkExposure(e: Exposure): string | undefined {
  if (e.secretSet || isLoopback(e.host)) return undefined;
  const why = `the ${e.service} listens on ${e.host}, reachable from other machines, and ${e.secretVar} is not set`;
  if (e.allowAnonymous) return `${why}: anyone who reaches it may use it (MESH_ALLOW_ANONYMOUS=true)`;
  throw new MeshError(
    'invalid_config',
    `Refusing to start: ${why}. Set ${e.secretVar}, listen on a loopback address (HOST=127.0.0.1), or set MESH_ALLOW_ANONYMOUS=true if anonymous access is intended.`,
    [{ path: e.secretVar, message: 'required on a non-loopback address' }],
  );
}
