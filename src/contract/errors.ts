/**
 * One error vocabulary for every surface. Each code maps once per boundary: an HTTP status here, an MCP
 * `isError` result, a CLI exit code. The codes are part of the public contract.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  denied_field: 400,
  invalid_cursor: 400,
  idempotency_key_missing: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_approved: 403,
  not_found: 404,
  method_not_allowed: 405,
  digest_mismatch: 409,
  selection_incomplete: 409,
  idempotency_in_progress: 409,
  conflict: 409,
  expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  idempotency_key_reused: 422,
  rate_limited: 429,
  upstream_unavailable: 502,
  store_unavailable: 503,
  internal: 500,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** Exit codes for the CLI: 2 for the caller's mistake, 3 for a refusal by policy, 4 upstream, 1 a bug. */
export function exitCodeOf(code: ErrorCode): number {
  const status = ERROR_STATUS[code]
  if (code === 'internal') return 1
  if (status >= 500) return 4
  if (status === 400 || status === 404 || status === 405 || status === 415 || status === 422 || status === 431) return 2
  return 3
}

export interface ErrorBody {
  readonly error: { readonly code: ErrorCode; readonly message: string; readonly details?: unknown }
}

/**
 * The one error type Warrant throws across module boundaries.
 *
 * @example throw new WarrantError('denied_field', 'field "card_token" is denied', { field: 'card_token' })
 */
export class WarrantError extends Error {
  override readonly name = 'WarrantError'
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message)
  }

  get status(): number {
    return ERROR_STATUS[this.code]
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } }
  }
}

export function isWarrantError(value: unknown): value is WarrantError {
  return value instanceof WarrantError
}
