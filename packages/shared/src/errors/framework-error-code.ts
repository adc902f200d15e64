import type { ErrorCode } from './error-codes.js';

/** fastify's own error codes, by the mesh code they stand for. */
const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_json',
};

/** Client errors of plugins (no fastify code of their own), by status. */
const CLIENT_ERRORS: Readonly<Record<number, ErrorCode>> = {
  400: 'invalid_input',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  414: 'url_too_long',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
};

/** What a framework error thrown by fastify or a plugin carries. */
export interface FrameworkError {
  code?: string | undefined;
  statusCode?: number | undefined;
}

/**
 * The registry code of a client error fastify or a plugin raised (a bad body, an unsupported media
 * type, …), for the gateway and the tool-host alike; undefined when it is not the client's fault.
 */
export function frameworkErrorCode(err: FrameworkError): ErrorCode | undefined {
  const mapped = err.code ? FASTIFY_CODES[err.code] : undefined;
  if (mapped) return mapped;
  const status = err.statusCode ?? 0;
  // fastify's JSON parser rethrows the SyntaxError itself with a 400 and no code of its own.
  if (status >= 400 && status < 500 && err instanceof SyntaxError) return 'invalid_json';
  return CLIENT_ERRORS[status];
}
