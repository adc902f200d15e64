import { formatLogLine } from './format-log-line.js';

/** pino-pretty's options for a service's terminal: time, level, then `formatLogLine`'s one line. */
export function prettyOptions(): {
  sync: boolean;
  translateTime: string;
  ignore: string;
  hideObject: boolean;
  messageFormat: (log: Record<string, unknown>, messageKey: string) => string;
} {
  return {
    // Written as they come: a service that exits right after logging must not lose the line.
    sync: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,service',
    // formatLogLine shows the fields on the message's line; pino-pretty would add lines of its own.
    hideObject: true,
    messageFormat: (log, messageKey) => formatLogLine(log, messageKey),
  };
}
