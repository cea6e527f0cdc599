import { canonicalJson } from '../contract/index.js'
import type { RenderedWrite } from '../plans/plan-service.js'

/** What an upstream's answer to a write says about the approved effect. */
export type EffectCheck =
  | { readonly kind: 'holds'; readonly values: Readonly<Record<string, unknown>> | null }
  | { readonly kind: 'contradicted'; readonly message: string }
  /** The answer carries nothing to check the fields against (an empty 204): re-read the record. */
  | { readonly kind: 'unverifiable' }

type Expect = RenderedWrite['expect']

/**
 * Checks an accepted write's answer against what was approved: the status must be one the action expects,
 * and every expected field must be present with exactly the approved value in the returned record (or body).
 * A wrapped body, a missing field or another value (role "admin" where "viewer" was approved) contradicts it.
 */
export function checkWriteAnswer(answer: { readonly status: number; readonly fields: unknown; readonly hasBody: boolean }, expect: Expect): EffectCheck {
  if (!expect.status.includes(answer.status))
    return { kind: 'contradicted', message: `the upstream answered ${answer.status}; the approved action expects ${expect.status.join(' or ')}` }
  const expected = Object.entries(expect.fields)
  if (answer.fields === undefined || answer.fields === null) {
    if (answer.hasBody) return { kind: 'contradicted', message: 'the upstream answered with a body that is not the record (unexpected shape)' }
    return expected.length === 0 ? { kind: 'holds', values: null } : { kind: 'unverifiable' }
  }
  if (typeof answer.fields !== 'object' || Array.isArray(answer.fields))
    return { kind: 'contradicted', message: 'the upstream answered with a body that is not a JSON object (unexpected shape)' }
  return checkRecordFields(answer.fields as Record<string, unknown>, expect.fields)
}

/** Every expected field present, with the approved value. */
export function checkRecordFields(fields: Readonly<Record<string, unknown>>, expected: Readonly<Record<string, unknown>>): EffectCheck {
  for (const [field, value] of Object.entries(expected)) {
    if (!Object.hasOwn(fields, field)) return { kind: 'contradicted', message: `the answer has no field "${field}" (unexpected shape); the approved effect sets it to ${show(value)}` }
    if (!sameValue(fields[field], value))
      return { kind: 'contradicted', message: `field "${field}" is ${show(fields[field])} where ${show(value)} was approved` }
  }
  return { kind: 'holds', values: fields }
}

/** Equal as JSON values, whatever their key order. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  try {
    return canonicalJson(a ?? null) === canonicalJson(b ?? null)
  } catch {
    return false
  }
}

/** Versions compare as text; timestamps also as instants (a driver may render the same instant differently). */
export function sameVersion(stored: string, expected: string): boolean {
  if (stored === expected) return true
  const iso = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/
  if (!iso.test(stored) || !iso.test(expected)) return false
  const a = Date.parse(stored)
  return !Number.isNaN(a) && a === Date.parse(expected)
}

/** The named fields of a record, those it has. */
export function pick(fields: Readonly<Record<string, unknown>> | null | undefined, names: Iterable<string>): Record<string, unknown> | null {
  if (!fields) return null
  const out: Record<string, unknown> = {}
  for (const name of names) if (Object.hasOwn(fields, name)) out[name] = fields[name]
  return out
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'undefined'
  } catch {
    return String(value)
  }
}
