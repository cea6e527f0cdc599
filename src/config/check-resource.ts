import type { z } from 'zod'
import { type Filter, clauseTypeProblem, clausesOf } from '../contract/index.js'
import { checkHttpList } from './check-http-list.js'
import type { ResourceConfig } from './schema.js'

/**
 * Rules across keys of one resource that a per-key schema cannot state: every named field exists, no field
 * is both reviewed and denied, actions only set and test declared fields.
 */
/**
 * Names that differ only in case, each with the earlier name it collides with. A reviewer reading
 * "Subscriptions" and "subscriptions", an agent choosing between them, would take one for the other.
 */
export function caseCollisions(names: readonly string[]): { name: string; earlier: string }[] {
  const seen = new Map<string, string>()
  const out: { name: string; earlier: string }[] = []
  for (const name of names) {
    const earlier = seen.get(name.toLowerCase())
    if (earlier !== undefined) out.push({ name, earlier })
    else seen.set(name.toLowerCase(), name)
  }
  return out
}

export function checkResource(resource: ResourceConfig, ctx: z.RefinementCtx, path: readonly (string | number)[]): void {
  const known = new Set(Object.keys(resource.fields))
  const denied = new Set(resource.denied_fields)
  const issue = (where: readonly (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path: [...path, ...where], message })
  const mustExist = (field: string, where: readonly (string | number)[]) => {
    if (!known.has(field)) issue(where, `unknown field "${field}" (declared fields: ${[...known].join(', ')})`)
  }
  /**
   * Every field of a config filter exists, is not denied, and each condition fits its field's type, as a
   * request's must. A denied field is refused here as in a request: a precondition's skipped targets, a
   * standing approval's auto-approved or flagged members would tell an agent, record by record, whether a
   * secret holds a value it chose.
   */
  const checkFilter = (filter: Filter, where: readonly (string | number)[]) => {
    for (const c of clausesOf(filter)) {
      mustExist(c.field, [...where, c.field])
      if (denied.has(c.field)) issue([...where, c.field], `field "${c.field}" is denied: a condition on it would tell an agent its value record by record; remove it`)
      const type = resource.fields[c.field]
      const problem = type === undefined ? null : clauseTypeProblem(c, type)
      if (problem !== null) issue([...where, c.field], problem)
    }
  }

  mustExist(resource.id_field, ['id_field'])
  if (resource.version_field) mustExist(resource.version_field, ['version_field'])
  resource.review_fields.forEach((f, i) => {
    mustExist(f, ['review_fields', i])
    if (denied.has(f)) issue(['review_fields', i], `field "${f}" is both a review field and denied`)
  })
  if (!resource.review_fields.includes(resource.id_field)) issue(['review_fields'], `review_fields must include the id field "${resource.id_field}"`)
  resource.denied_fields.forEach((f, i) => mustExist(f, ['denied_fields', i]))
  if (denied.has(resource.id_field)) issue(['denied_fields'], 'the id field cannot be denied')
  resource.group_by.forEach((f, i) => {
    if (!resource.review_fields.includes(f)) issue(['group_by', i], `group-by field "${f}" must be a review field`)
  })
  if (resource.connector.kind === 'http') {
    const http = resource.connector
    if (http.list.total_path !== undefined && http.list.total_header !== undefined)
      issue(['connector', 'list', 'total_header'], 'give the total in one place: total_path (in the body) or total_header, not both')
    for (const field of Object.keys(http.field_paths)) mustExist(field, ['connector', 'field_paths', field])
    http.absent_means_null.forEach((f, i) => {
      mustExist(f, ['connector', 'absent_means_null', i])
      if (f === resource.id_field) issue(['connector', 'absent_means_null', i], 'the id field can never be absent; remove it from absent_means_null')
    })
    if (http.version.from === 'field') mustExist(http.version.field, ['connector', 'version', 'field'])
    checkHttpList(resource, http, issue, mustExist)
  }
  if (resource.connector.kind === 'sql' && !resource.version_field)
    issue(['version_field'], 'a sql resource needs version_field: the column that changes on every write')
  // a sql write moves the version itself (id + 1, a UUID): it would renumber the record it writes; an http id never moves
  if (resource.version_field === resource.id_field)
    issue(['version_field'], `"${resource.id_field}" is the id field: a write moves the version, so it would give the record another id; name the column that changes on every write (a counter, updated_at)`)
  if (resource.connector.kind === 'http' && resource.connector.version.from === 'field' && resource.connector.version.field === resource.id_field)
    issue(['connector', 'version', 'field'], `"${resource.id_field}" is the id field, which never moves on a write: no write could be told from a stale one; name the field the upstream changes on every write (rev, etag, updated_at)`)
  // the version moves by the write itself: a sql write sets the next version over any value, an http upstream stamps its own
  const versionFields = new Set([resource.version_field, resource.connector.kind === 'http' && resource.connector.version.from === 'field' ? resource.connector.version.field : undefined])
  for (const [name, action] of Object.entries(resource.actions)) {
    for (const field of Object.keys(action.set)) {
      mustExist(field, ['actions', name, 'set', field])
      if (denied.has(field)) issue(['actions', name, 'set', field], `action sets denied field "${field}"`)
      if (field === resource.id_field) issue(['actions', name, 'set', field], 'an action cannot change the id')
      if (versionFields.has(field))
        issue(['actions', name, 'set', field], `"${field}" is the version field: every write moves it by itself, so an action cannot set it; remove it from set`)
    }
    checkFilter(action.precondition, ['actions', name, 'precondition'])
    // a sql write moves its version column itself (a fresh token, + 1, now): a column an action tests is a business
    // value, which every write would overwrite unapproved (the effect check exempts the version), not a version
    if (resource.connector.kind === 'sql' && resource.version_field !== undefined && Object.hasOwn(action.precondition, resource.version_field))
      issue(
        ['actions', name, 'precondition', resource.version_field],
        `"${resource.version_field}" is the version field: every write moves it by itself (to the next version), so a precondition on it tests a value each write overwrites; a column an action tests is no version: name as version_field a column that means nothing else and changes on every write (a counter, updated_at)`,
      )
    // an expected answer on a denied field is a test of it too: each write's outcome would say whether it held
    for (const field of Object.keys(action.expect.fields ?? {}))
      if (denied.has(field)) issue(['actions', name, 'expect', 'fields', field], `field "${field}" is denied: an expected value for it would tell an agent its value by each write's outcome; remove it`)
    if (resource.connector.kind === 'http' && !action.write) issue(['actions', name, 'write'], 'an action on an http resource needs write: {method, path}')
  }
  // a version moves on every write, so grouping by it splits the records by values nobody chose; a field worth grouping
  // by is a business value (a plan, a state), which a sql write would overwrite with the next version
  resource.group_by.forEach((f, i) => {
    if (versionFields.has(f))
      issue(['group_by', i], `"${f}" is the version field: every write moves it, so grouping by it is meaningless, and a field worth grouping by is a business value, not a version; remove it from group_by, or name as the version a column that means nothing else and changes on every write (a counter, updated_at)`)
  })
  for (const { name, earlier } of caseCollisions(Object.keys(resource.actions)))
    issue(['actions', name], `action "${name}" differs from "${earlier}" only in case; rename one of them`)
  resource.standing_approvals.forEach((s, i) => {
    if (!resource.actions[s.action]) issue(['standing_approvals', i, 'action'], `unknown action "${s.action}"`)
    checkFilter(s.selector, ['standing_approvals', i, 'selector'])
    s.exclude.forEach((rule, j) => checkFilter(rule.filter, ['standing_approvals', i, 'exclude', j, 'filter']))
    if (s.flagged) checkFilter(s.flagged, ['standing_approvals', i, 'flagged'])
  })
}
