export { formatLogLine } from './format-log-line.js';
export { type LogFormat, logFormat } from './log-format.js';
export { loggerOptions, type ServiceLoggerOptions } from './logger-options.js';
export { prettyOptions } from './pretty-options.js';
export { failedToStart, type ServiceStart, startService } from './start-service.js';
