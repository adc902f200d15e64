import { MeshError } from '../errors/mesh-error.js';

/** How a service writes its logs: pino's JSON lines, or one human-readable line each (pino-pretty). */
export type LogFormat = 'json' | 'pretty';

/** LOG_FORMAT as given (`json` or `pretty`); unset, pretty only when stdout is a terminal. */
export function logFormat(raw: string | undefined, stdoutIsTTY: boolean): LogFormat {
  if (raw === undefined || raw === '') return stdoutIsTTY ? 'pretty' : 'json';
  if (raw === 'json' || raw === 'pretty') return raw;
  throw new MeshError('invalid_config', `LOG_FORMAT must be json or pretty, got "${raw}".`, [
    { path: '/LOG_FORMAT', message: 'must be json or pretty' },
  ]);
}
