import { sameFieldValue, sameValue, type FieldTypeNames } from '../contract/index.js'
import type { RenderedWrite } from '../plans/plan-service.js'

// the one rule for "the same record" lives in contract, shared with `warrant check`; re-exported for this folder
export { sameValue, sameVersion } from '../contract/index.js'

/** What an upstream's answer to a write, or the record re-read after it, says about the approved effect. */
export type EffectCheck =
  | { readonly kind: 'holds'; readonly values: Readonly<Record<string, unknown>> | null }
  | { readonly kind: 'contradicted'; readonly message: string }

type Expect = RenderedWrite['expect']

/** The status must be one the action expects; a status alone never proves the effect (the record does). */
export function checkStatus(status: number, expect: Expect): Extract<EffectCheck, { kind: 'contradicted' }> | null {
  if (expect.status.includes(status)) return null
  return { kind: 'contradicted', message: `the upstream answered ${status}; the approved action expects ${expect.status.join(' or ')}` }
}

/** What comparing the whole record before and after a write found outside the fields the write may change. */
export type UntouchedCheck =
  | { readonly kind: 'holds' }
  /** `vanishedOnly`: every problem is a field absent after, which a partial answer body cannot tell from erased. */
  | { readonly kind: 'contradicted'; readonly message: string; readonly vanishedOnly: boolean }

/** Paths named in a message about fields outside the set; values are never quoted (they may be denied fields). */
const NAMED_PATHS = 5

/**
 * Every field of `before` outside the `exempt` dotted paths (the set fields, the version, what the upstream
 * stamps itself) must be in `after` with the same JSON value, nested objects walked field by field. Fields
 * that appear only after are not destruction and are ignored.
 */
export function checkUntouched(before: unknown, after: unknown, exempt: readonly string[]): UntouchedCheck {
  const changed: string[] = []
  const vanished: string[] = []
  // Paths compare segment by segment, so a key that itself contains a dot is never taken for a nested path.
  // (the exempt paths are grouped by their first segment once per level, and a field's path is spelled only when
  // named: this runs for every target of an operation)
  const walk = (b: object, a: object, exempts: readonly (readonly string[])[], prefix: readonly string[]) => {
    const exemptUnder = new Map<string, (readonly string[])[]>()
    for (const e of exempts) {
      const head = e[0]!
      const under = exemptUnder.get(head)
      if (under) under.push(e)
      else exemptUnder.set(head, [e])
    }
    for (const key of Object.keys(b)) {
      const under = exemptUnder.get(key)
      if (under?.some((e) => e.length === 1)) continue
      const bv = (b as Record<string, unknown>)[key]
      if (!Object.hasOwn(a, key)) {
        vanished.push([...prefix, key].join('.'))
        continue
      }
      const av = (a as Record<string, unknown>)[key]
      if (under !== undefined && isContainer(bv) && isContainer(av) && Array.isArray(bv) === Array.isArray(av))
        walk(bv, av, under.map((e) => e.slice(1)), [...prefix, key])
      else if (!sameValue(bv, av)) changed.push([...prefix, key].join('.'))
    }
  }
  if (!isContainer(before)) return { kind: 'holds' }
  if (!isContainer(after)) return { kind: 'contradicted', message: 'the record after the write is not a JSON object', vanishedOnly: false }
  walk(before, after, exempt.map((e) => e.split('.')), [])
  if (changed.length + vanished.length === 0) return { kind: 'holds' }
  const name = (paths: string[]) => `${paths.slice(0, NAMED_PATHS).map((p) => `"${p}"`).join(', ')}${paths.length > NAMED_PATHS ? ` and ${paths.length - NAMED_PATHS} more` : ''}`
  const parts = [changed.length ? `${name(changed)} changed` : '', vanished.length ? `${name(vanished)} vanished` : ''].filter(Boolean)
  return {
    kind: 'contradicted',
    message: `the write touched what the action does not set: ${parts.join(', ')} (a write must leave every field outside the set as it was${changed.length ? '; a field the upstream stamps itself on every write belongs in write.may_change' : ''})`,
    vanishedOnly: changed.length === 0,
  }
}

function isContainer(value: unknown): value is object {
  return value !== null && typeof value === 'object'
}

/** Every expected field present, with the approved value, compared as its field is declared (`types`). */
export function checkRecordFields(fields: Readonly<Record<string, unknown>>, expected: Readonly<Record<string, unknown>>, types: FieldTypeNames): EffectCheck {
  for (const [field, value] of Object.entries(expected)) {
    if (!Object.hasOwn(fields, field)) return { kind: 'contradicted', message: `the answer has no field "${field}" (unexpected shape); the approved effect sets it to ${showValue(value)}` }
    // a timestamp read back in another spelling is the same instant; a number, the same value (sameAsDeclared)
    if (!sameFieldValue(fields[field], value, Object.hasOwn(types, field) ? types[field] : undefined))
      return { kind: 'contradicted', message: `field "${field}" is ${showValue(fields[field])} where ${showValue(value)} was approved` }
  }
  return { kind: 'holds', values: fields }
}

/** A version as a sentence says it: an empty one (frozen before versionless records were refused) is none, never a blank. */
export function versionText(version: string): string {
  return version === '' ? 'no version' : `version ${version}`
}

/** The named fields of a record, those it has. */
export function pick(fields: Readonly<Record<string, unknown>> | null | undefined, names: Iterable<string>): Record<string, unknown> | null {
  if (!fields) return null
  const out: Record<string, unknown> = {}
  for (const name of names) if (Object.hasOwn(fields, name)) out[name] = fields[name]
  return out
}

/** A value as a message quotes it: its JSON. */
export function showValue(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'undefined'
  } catch {
    return String(value)
  }
}
