import { createHmac, timingSafeEqual } from 'node:crypto'
import { z } from 'zod'
import { CURSOR_KIND_TEXT, WarrantError, cursorKindOf } from '../contract/index.js'

/**
 * Signed, opaque walk cursors.
 *
 * Format: `base64url(JSON payload) + "." + base64url(HMAC-SHA256(key, <the base64url payload text>))`.
 * The payload is not secret (anyone can base64-decode it), only unforgeable: it holds per-source positions,
 * never credentials or record contents. A cursor belongs to one query (its fingerprint) and has a maximum age.
 */

/** Where a walk stands on one source. */
export interface SourceProgress {
  readonly source: string
  /** The connector's opaque position to resume at; null = from the start of the source. */
  readonly position: string | null
  /** True once the upstream said `next === null`, or once the source can no longer be read in this walk. */
  readonly finished: boolean
  /**
   * Gaps this source already has in the walk: a resumed walk keeps reporting them, so the last part of a
   * walk never says `complete: true` for a walk that lost part of a source earlier.
   */
  readonly gaps: readonly SourceGap[]
  /** Transient failures of this source in a row (a 5xx, a timeout, a 429): the walk gives up past a few. */
  readonly attempts?: number
  /** Records matched so far in this pass over the source, to hold against the upstream's total at the end. */
  readonly count?: number
  /** The last total the upstream gave for this source, and whether it changed during the walk. */
  readonly total?: number
  readonly totalMoved?: boolean
}

/** A part of a source the walk could not account for. */
export interface SourceGap {
  readonly code: GapCode
  /** For RESULT_LIMIT_REACHED: the upstream's limit, when it said. */
  readonly limit?: number
  /** The status the upstream answered with, for a source that failed or refused the credential. */
  readonly status?: number
  /** For SHAPE_MISMATCH: how many records could not be judged so far in the walk. */
  readonly count?: number
  /** For SHAPE_MISMATCH: declared fields those records lacked, and those they carried with another type. */
  readonly absent?: readonly string[]
  readonly mistyped?: readonly string[]
  /** For SHAPE_MISMATCH: of `count`, the rows whose id column is NULL. */
  readonly idless?: { readonly field: string; readonly count: number }
  /** For SHAPE_MISMATCH: of `count`, the records with no version to freeze (`field` absent: no ETag). */
  readonly versionless?: { readonly field?: string; readonly count: number }
  /**
   * For SOURCE_UNAVAILABLE: why the walk ended the source when it was not refused (see `UNAVAILABLE_ENDINGS`), and
   * for a wait or repeated failure the seconds a new walk should wait: the reason must not say "the same request
   * would fail the same way" of an upstream that only asked to be asked later.
   */
  readonly ended?: UnavailableEnding
  readonly wait?: number
}

/**
 * Ways a source's part is cut other than a refusal: ended though it could be read later or by other means, or
 * (`ids_repeated`) read on to its end with records lost to ids it repeats.
 */
export const UNAVAILABLE_ENDINGS = ['wait_too_long', 'rate_limited_repeatedly', 'failed_repeatedly', 'position_too_long', 'ids_repeated'] as const
export type UnavailableEnding = (typeof UNAVAILABLE_ENDINGS)[number]

export const GAP_CODES = [
  'RESULT_LIMIT_REACHED',
  'TIME_BUDGET_EXCEEDED',
  'CURSOR_EXPIRED',
  'SNAPSHOT_INVALIDATED',
  'SOURCE_UNAVAILABLE',
  'VISIBILITY_RESTRICTED',
  'SHAPE_MISMATCH',
] as const
export type GapCode = (typeof GAP_CODES)[number]

/** Everything a continuation cursor carries: enough to resume the same walk, and to check it is the same walk. */
export interface WalkCursorState {
  /** `queryFingerprint()` of the query the walk answers; a cursor is refused for any other query. */
  readonly fingerprint: string
  /** One entry per connector source, in declared order. */
  readonly sources: readonly SourceProgress[]
  /** The snapshot the first part of the walk read (connector's own identifier), or null. */
  readonly snapshot: string | null
  /** Every part so far read the same consistent snapshot. */
  readonly consistent: boolean
  /** Every part so far read a snapshot or positions that survive movement, and saw no movement it could not undo. */
  readonly proven?: boolean
  /** For a `retry_after` continuation: the cursor is refused before this time (ms since the epoch). */
  readonly notBefore?: number
  /** Records the walk has returned in all its parts up to this cursor (absent from a cursor issued before it counted: then the total is not known). */
  readonly returned?: number
  /** The one page size a walk over page numbers (`Connector.sizedPositions`) asks every page at, continuations included. */
  readonly pageSize?: number
}

/** A decoded cursor: the state, when it was issued, and whether it is older than its maximum age. */
export interface DecodedCursor extends WalkCursorState {
  readonly issuedAt: number
  readonly maxAgeMs: number
  /** Past its maximum age: the walk must report CURSOR_EXPIRED, never restart silently. */
  readonly expired: boolean
}

export interface CursorCodec {
  encode(state: WalkCursorState): string
  /**
   * Verifies and decodes a cursor. Throws `WarrantError('invalid_cursor')` for a malformed, truncated, forged
   * or altered cursor, or one issued for another query. An old cursor decodes with `expired: true`.
   */
  decode(token: string, expectedQueryFingerprint: string): DecodedCursor
  /**
   * HMAC-SHA256 of `text` under the cursor key, base64url (43 characters): for a token simpler than a walk's,
   * such as a position in a frozen list, which needs no age, snapshot or gaps.
   *
   * @example
   * const token = `${ord}.${codec.sign(`list/${selectionId}/${ord}`)}`
   */
  sign(text: string): string
  /** How long a cursor it encodes may be followed: a walk never names a wait past it. */
  readonly maxAgeMs: number
}

export interface CursorCodecOptions {
  /** The HMAC key: at least 32 bytes (a string is taken as UTF-8). Keep it stable across gateway instances. */
  readonly key: string | Uint8Array
  /** Maximum age of a cursor; default one hour. */
  readonly maxAgeMs?: number
  readonly clock?: { now(): number }
}

export const DEFAULT_CURSOR_MAX_AGE_MS = 60 * 60 * 1000
const CURSOR_VERSION = 1
const SIGNATURE_BYTES = 32
/** base64url of 32 bytes, unpadded. */
const SIGNATURE_CHARS = 43
const BASE64URL = /^[A-Za-z0-9_-]+$/

const gapSchema = z.strictObject({
  code: z.enum(GAP_CODES),
  limit: z.number().optional(),
  status: z.number().int().optional(),
  count: z.number().int().nonnegative().optional(),
  absent: z.array(z.string()).optional(),
  mistyped: z.array(z.string()).optional(),
  idless: z.strictObject({ field: z.string(), count: z.number().int().nonnegative() }).optional(),
  versionless: z.strictObject({ field: z.string().optional(), count: z.number().int().nonnegative() }).optional(),
  ended: z.enum(UNAVAILABLE_ENDINGS).optional(),
  wait: z.number().nonnegative().optional(),
})

/** The wire payload: short keys, because cursors travel in URLs and tool arguments. */
const payloadSchema = z.strictObject({
  v: z.literal(CURSOR_VERSION),
  fp: z.string(),
  iat: z.number(),
  max: z.number().positive(),
  snap: z.string().nullable(),
  cons: z.boolean(),
  pv: z.boolean().optional(),
  nb: z.number().optional(),
  n: z.number().int().nonnegative().optional(),
  ps: z.number().int().positive().optional(),
  src: z.array(
    z.strictObject({
      s: z.string(),
      p: z.string().nullable(),
      f: z.boolean(),
      g: z.array(gapSchema).optional(),
      a: z.number().int().nonnegative().optional(),
      n: z.number().int().nonnegative().optional(),
      t: z.number().int().nonnegative().optional(),
      tm: z.boolean().optional(),
    }),
  ),
})
type Payload = z.infer<typeof payloadSchema>

/**
 * @example
 * const codec = createCursorCodec({ key: process.env.WARRANT_CURSOR_KEY! })
 * const token = codec.encode(state)
 * const again = codec.decode(token, queryFingerprint(query)) // throws invalid_cursor for another query
 */
export function createCursorCodec(options: CursorCodecOptions): CursorCodec {
  const key = typeof options.key === 'string' ? Buffer.from(options.key, 'utf8') : Buffer.from(options.key)
  if (key.length < 32) throw new TypeError('the cursor key must be at least 32 bytes')
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_CURSOR_MAX_AGE_MS
  if (!(maxAgeMs > 0)) throw new TypeError('maxAgeMs must be positive')
  const clock = options.clock ?? { now: () => Date.now() }

  const sign = (payloadText: string): Buffer => createHmac('sha256', key).update(payloadText, 'utf8').digest()

  return {
    maxAgeMs,
    encode(state) {
      const payload: Payload = {
        v: CURSOR_VERSION,
        fp: state.fingerprint,
        iat: clock.now(),
        max: maxAgeMs,
        snap: state.snapshot,
        cons: state.consistent,
        ...(state.proven === undefined ? {} : { pv: state.proven }),
        ...(state.notBefore === undefined ? {} : { nb: state.notBefore }),
        ...(state.returned === undefined ? {} : { n: state.returned }),
        ...(state.pageSize === undefined ? {} : { ps: state.pageSize }),
        src: state.sources.map((s) => ({
          s: s.source,
          p: s.position,
          f: s.finished,
          ...(s.gaps.length > 0 ? { g: s.gaps.map(gapOf) } : {}),
          ...(s.attempts ? { a: s.attempts } : {}),
          ...(s.count ? { n: s.count } : {}),
          ...(s.total === undefined ? {} : { t: s.total }),
          ...(s.totalMoved ? { tm: true } : {}),
        })),
      }
      const text = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url')
      return `${text}.${sign(text).toString('base64url')}`
    },

    sign: (text) => sign(text).toString('base64url'),

    decode(token, expectedQueryFingerprint) {
      if (typeof token !== 'string' || token.length === 0) throw invalid('the cursor is empty or not a string', 'malformed')
      const parts = token.split('.')
      if (parts.length !== 2) throw invalid('the cursor is malformed or truncated (expected "<payload>.<signature>")', 'malformed')
      const [text, signatureText] = parts as [string, string]
      // a frozen list's page cursor (`<ord>.<signature>`) handed to a walk: say what it is, not "altered"
      if (cursorKindOf(token) === 'list_page')
        throw invalid("the cursor is a page cursor of a frozen list (a selection's records or excluded records, a plan's changes), not a search's continuation: continue a search only with the continuation.cursor a search with the same arguments gave", 'malformed')
      // an operation's results cursor handed to a search or a list's pages: say what it is, not "unknown shape"
      if (cursorKindOf(token) === 'results')
        throw invalid(`the cursor is ${CURSOR_KIND_TEXT.results}, not a search's continuation nor a page cursor of a selection or plan: use a cursor only with the tool and arguments that gave it`, 'other_tool')
      if (!isCanonicalBase64url(text)) throw invalid('the cursor payload is not valid base64url: it was altered or truncated', 'altered')
      if (signatureText.length < SIGNATURE_CHARS) throw invalid('the cursor signature is truncated', 'truncated')
      if (signatureText.length > SIGNATURE_CHARS || !isCanonicalBase64url(signatureText))
        throw invalid('the cursor signature is not a valid signature: it was altered', 'altered')
      const signature = Buffer.from(signatureText, 'base64url')
      if (signature.length !== SIGNATURE_BYTES) throw invalid('the cursor signature is not a valid signature: it was altered', 'altered')
      if (!timingSafeEqual(signature, sign(text))) throw invalid('the cursor signature does not match: the cursor was forged or altered', 'forged_or_altered')

      let raw: unknown
      try {
        raw = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
      } catch {
        throw invalid('the cursor payload is not valid JSON', 'malformed')
      }
      const parsed = payloadSchema.safeParse(raw)
      if (!parsed.success) throw invalid('the cursor payload has an unknown shape or version', 'malformed')
      const p = parsed.data
      if (p.fp !== expectedQueryFingerprint)
        throw invalid(
          'the cursor belongs to another query: resource, environment, filter or fields differ from the ones it was issued for, or the resource\'s connector reads another table or list, or names records by another id, than when it was issued',
          'other_query',
        )

      return {
        fingerprint: p.fp,
        snapshot: p.snap,
        consistent: p.cons,
        ...(p.pv === undefined ? {} : { proven: p.pv }),
        ...(p.nb === undefined ? {} : { notBefore: p.nb }),
        ...(p.n === undefined ? {} : { returned: p.n }),
        ...(p.ps === undefined ? {} : { pageSize: p.ps }),
        sources: p.src.map((s) => ({
          source: s.s,
          position: s.p,
          finished: s.f,
          gaps: (s.g ?? []).map(gapOf),
          ...(s.a === undefined ? {} : { attempts: s.a }),
          ...(s.n === undefined ? {} : { count: s.n }),
          ...(s.t === undefined ? {} : { total: s.t }),
          ...(s.tm === undefined ? {} : { totalMoved: s.tm }),
        })),
        issuedAt: p.iat,
        maxAgeMs: p.max,
        expired: clock.now() - p.iat > p.max,
      }
    },
  }
}

/** A gap with only the keys it has: cursors stay short, and an absent key never becomes `undefined`. */
function gapOf(g: SourceGap): z.infer<typeof gapSchema> {
  return {
    code: g.code,
    ...(g.limit === undefined ? {} : { limit: g.limit }),
    ...(g.status === undefined ? {} : { status: g.status }),
    ...(g.count === undefined ? {} : { count: g.count }),
    ...(g.absent === undefined ? {} : { absent: [...g.absent] }),
    ...(g.mistyped === undefined ? {} : { mistyped: [...g.mistyped] }),
    ...(g.idless === undefined ? {} : { idless: { field: g.idless.field, count: g.idless.count } }),
    ...(g.versionless === undefined ? {} : { versionless: { ...(g.versionless.field === undefined ? {} : { field: g.versionless.field }), count: g.versionless.count } }),
    ...(g.ended === undefined ? {} : { ended: g.ended }),
    ...(g.wait === undefined ? {} : { wait: g.wait }),
  }
}

/** Non-empty, only base64url characters, and the one spelling Node would produce for these bytes (no slack bits). */
function isCanonicalBase64url(text: string): boolean {
  return BASE64URL.test(text) && Buffer.from(text, 'base64url').toString('base64url') === text
}

/** Why a cursor was refused, in `details.reason` of the `invalid_cursor` error. */
export type InvalidCursorReason = 'malformed' | 'truncated' | 'altered' | 'forged_or_altered' | 'other_query' | 'other_tool'

function invalid(message: string, reason: InvalidCursorReason): WarrantError {
  return new WarrantError('invalid_cursor', message, { reason })
}
