import type { HttpContext } from './context.js'
import { fieldPath } from './record.js'
import { nestedDeeperThan } from './json-depth.js'
import { readPath } from './json-path.js'
import { REDACTED } from './redaction.js'

/**
 * Denied fields out of the upstream answers the gateway quotes (an error body in a target's message, the body
 * kept on a rejected write). An upstream that refuses a write often echoes what it received, and a replacing
 * write sends the whole record, denied fields included: quoted as is, that echo would hand a denied value to
 * whoever reads the results, the ledger or the review pages.
 *
 * A JSON answer has the value under every key that names a denied field (its name, or the last key of its
 * `field_paths` entry, at any depth, any case) replaced by the redaction marker. Any answer also has the denied
 * values the gateway holds for the record being written (`known`) replaced wherever they appear; one too short
 * to replace without mangling unrelated text that still appears means the answer is not quoted at all.
 */
export interface DeniedScrubber {
  /** A copy of a parsed answer with denied values replaced; the same value when it holds none. */
  json(value: unknown): unknown
  /** The answer text with denied values replaced, or null when it cannot be quoted safely. */
  text(body: string): string | null
}

/** Shortest denied value replaced wherever it appears; shorter ones would match unrelated text. */
const MIN_REPLACED_CHARS = 6
/** Most denied values taken from one record (leaves of a denied object field): enough for any real record. */
const MAX_KNOWN_VALUES = 64

/**
 * The denied values of the record a write sends, as text: the scalar leaves (strings, finite numbers) under
 * each denied field of its representation as re-read, and of its declared fields.
 */
export function deniedValuesOf(ctx: Pick<HttpContext, 'resource' | 'config'>, record: { readonly fields?: Readonly<Record<string, unknown>>; readonly representation?: unknown } | undefined): readonly string[] {
  if (!record) return []
  const out = new Set<string>()
  const collect = (value: unknown): void => {
    if (out.size >= MAX_KNOWN_VALUES) return
    if (typeof value === 'string' && value !== '') out.add(value)
    else if (typeof value === 'number' && Number.isFinite(value)) out.add(String(value))
    else if (Array.isArray(value)) value.forEach(collect)
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(collect)
  }
  for (const field of ctx.resource.denied_fields) {
    collect(record.fields?.[field])
    if (record.representation !== undefined) collect(readPath(record.representation, fieldPath(ctx, field)))
  }
  return [...out]
}

export function deniedScrubber(ctx: Pick<HttpContext, 'resource' | 'config'>, known: readonly string[] = []): DeniedScrubber {
  const keys = deniedKeys(ctx)
  // the value as written and as it sits inside a JSON string (escaped); longest first, so none is cut by another
  const long = [...new Set(known.filter((v) => v.length >= MIN_REPLACED_CHARS).flatMap((v) => [v, JSON.stringify(v).slice(1, -1)]))].sort((a, b) => b.length - a.length)
  const short = known.filter((v) => v.length < MIN_REPLACED_CHARS).map((v) => new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(v)}($|[^\\p{L}\\p{N}])`, 'u'))
  const replaceLong = (text: string): string => long.reduce((out, form) => out.split(form).join(REDACTED), text)
  const holdsShort = (text: string): boolean => short.some((pattern) => pattern.test(text))

  const knownText = new Set(known)
  const scrub = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const out = replaceLong(value)
      return holdsShort(out) ? REDACTED : out
    }
    if (typeof value === 'number') return knownText.has(String(value)) || holdsShort(String(value)) ? REDACTED : value
    if (Array.isArray(value)) return value.map(scrub)
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [replaceLong(k), keys.has(k.toLowerCase()) ? REDACTED : scrub(v)]))
    return value
  }
  const json = (value: unknown): unknown => {
    const out = scrub(value)
    return JSON.stringify(out) === JSON.stringify(value) ? value : out
  }
  return {
    json,
    text(body) {
      const parsed = parseOrUndefined(body)
      // too deep to scrub without overflowing the stack: its denied keys cannot be found, so it is not quoted
      if (nestedDeeperThan(parsed)) return null
      const scrubbed = parsed === undefined ? parsed : json(parsed)
      // re-serialized only when something was replaced: an answer without denied values is quoted as sent
      const text = replaceLong(scrubbed === parsed ? body : JSON.stringify(scrubbed))
      return holdsShort(text) ? null : text
    },
  }
}

/** Keys whose value is denied: each denied field's name and the last key of its path, lower-cased. */
function deniedKeys(ctx: Pick<HttpContext, 'resource' | 'config'>): ReadonlySet<string> {
  const keys = new Set<string>()
  for (const field of ctx.resource.denied_fields) {
    keys.add(field.toLowerCase())
    // `tokens.0`: the list is named by the key above the index
    const named = fieldPath(ctx, field)
      .split('.')
      .filter((key) => !/^(0|[1-9][0-9]*)$/.test(key))
      .at(-1)
    if (named !== undefined) keys.add(named.toLowerCase())
  }
  return keys
}

function parseOrUndefined(body: string): unknown {
  if (body.trim() === '') return undefined
  try {
    return JSON.parse(body) as unknown
  } catch {
    return undefined
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
