import { ERROR_CODES, type ErrorCode, messageOf } from './error-codes.js';

/** One problem inside an error, located by a path (`/agents/planner/tools/0`, `body.prompt`). */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** The JSON error body of every HTTP answer: `{"error": {code, message, details?}}`. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetail[] };
}

/** An error with a stable code; HTTP status and retryability derive from the code. */
export class MeshError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;

  constructor(code: ErrorCode, message?: string, details?: ErrorDetail[]) {
    super(message ?? messageOf(code));
    this.name = 'MeshError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (this.details && this.details.length > 0) error.details = this.details;
    return { error };
  }
}

/** True when `e` is a MeshError, optionally of the given code. */
export function isMeshError(e: unknown, code?: ErrorCode): e is MeshError {
  return e instanceof MeshError && (code === undefined || e.code === code);
}
