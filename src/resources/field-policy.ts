import { clauseTypeProblem, clausesOf, type Filter, type FieldOmissionReason, WarrantError, type Warning } from '../contract/index.js'
import { slipsOf, type ResourceConfig } from '../config/index.js'
import { projector, type Projector } from './projector.js'

/**
 * Which fields may leave the gateway for a resource. Only review fields are ever returned; denied fields
 * (secrets, tokens, free text) can be neither requested nor filtered on, since a filter on a secret leaks it
 * one bit at a time.
 */
export interface FieldPolicy {
  /** The requested field list, checked; defaults to every review field. Always includes the id field. */
  fields(requested: readonly string[] | undefined): readonly string[]
  /** Throws `denied_field` / `invalid_request` naming the first field the filter may not use. */
  checkFilter(filter: Filter, where?: string): void
  /** The record's requested fields, nothing else. */
  project(fields: Readonly<Record<string, unknown>>, selected: readonly string[]): Record<string, unknown>
  /** For one record: a PARTIAL_FIELD_SET warning naming every field not returned and why, or none. */
  omissions(fields: Readonly<Record<string, unknown>>, selected: readonly string[]): Warning | null
}

/** @example createFieldPolicy(config.resources.subscriptions).fields(['id', 'status']) */
export function createFieldPolicy(resource: ResourceConfig): FieldPolicy {
  const review = new Set(resource.review_fields)
  const denied = new Set(resource.denied_fields)
  const declared = resource.fields
  /** each list of fields a walk projects its records to (the same array for every record of the walk), compiled once */
  const projectors = new WeakMap<readonly string[], Projector>()

  // a filter may use every declared field not denied; a field list returns review fields only: an unknown field
  // is answered with the names that may stand where it was written, and the one it is a slip of
  const filterable = Object.keys(declared).filter((f) => !denied.has(f))
  const checkField = (field: string, use: 'requested' | 'filtered on') => {
    if (denied.has(field))
      throw new WarrantError('denied_field', `field "${field}" is denied: it never leaves the gateway and cannot be ${use}`, { field })
    if (!(field in declared)) {
      const names = use === 'requested' ? resource.review_fields : filterable
      const near = slipsOf(names, field)
      const meant = near.length > 0 ? `; did you mean ${near.map((n) => `"${n}"`).join(' or ')}?` : ''
      const listed = use === 'requested' ? `review fields are: ${names.join(', ')}` : `fields a filter may use: ${names.join(', ')}`
      throw new WarrantError('invalid_request', `unknown field "${field}"${meant}; ${listed}`, { field })
    }
  }

  return {
    fields(requested) {
      if (!requested) return resource.review_fields
      if (!Array.isArray(requested)) throw new WarrantError('invalid_request', 'fields must be a list of field names', { field: 'fields' })
      for (const f of requested) {
        checkField(f, 'requested')
        if (!review.has(f))
          throw new WarrantError('invalid_request', `field "${f}" is not a review field; review fields are: ${resource.review_fields.join(', ')}`, { field: f })
      }
      const unique = [...new Set(requested)]
      return unique.includes(resource.id_field) ? unique : [resource.id_field, ...unique]
    },
    checkFilter(filter, where = 'filter') {
      for (const clause of clausesOf(filter)) {
        checkField(clause.field, 'filtered on')
        const problem = clauseTypeProblem(clause, declared[clause.field]!)
        if (problem !== null) throw new WarrantError('invalid_request', `${where}.${clause.field}: ${problem}`, { field: clause.field, operator: clause.op })
      }
    },
    project(fields, selected) {
      let project = projectors.get(selected)
      if (project === undefined) projectors.set(selected, (project = projector(selected)))
      return project(fields)
    },
    omissions(fields, selected) {
      const chosen = new Set(selected)
      const omitted: { field: string; reason: FieldOmissionReason }[] = []
      for (const f of Object.keys(declared)) {
        if (chosen.has(f) && f in fields && fields[f] !== undefined) continue
        omitted.push({ field: f, reason: denied.has(f) ? 'denied' : !chosen.has(f) ? 'not_requested' : 'absent_upstream' })
      }
      if (omitted.length === 0) return null
      return {
        code: 'PARTIAL_FIELD_SET',
        message: `${omitted.length} field(s) not returned: ${omitted.map((o) => `${o.field} (${o.reason})`).join(', ')}`,
        fields: omitted,
      }
    },
  }
}
