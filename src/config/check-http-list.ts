import { scanTemplate } from './list-template.js'
import type { HttpConnectorConfig, ResourceConfig } from './schema.js'

type Issue = (where: readonly (string | number)[], message: string) => void

/** Query parameter names that carry a credential (api_key, access_token, X-Auth-Token, client_secret, sig). */
const CREDENTIAL_PARAM = /(api[-_]?key|token|secret|passw(or)?d|signature|credential|(^|[-_])(auth|sig)([-_]|$))/i

/**
 * A fixed query parameter named like a credential: its value sits in the config file in the clear, goes out in
 * every URL, and comes back in an upstream's next links, which a walk's cursor carries to the agent (signed, not
 * encrypted). Warrant sends a credential only in a header, read from the environment or a file.
 */
function checkQueryCredentials(query: Readonly<Record<string, string>>, where: readonly (string | number)[], issue: Issue): void {
  for (const name of Object.keys(query))
    if (CREDENTIAL_PARAM.test(name))
      issue(
        [...where, name],
        `"${name}" looks like a credential written into the config: it would be sent in every URL and carried in next-page links and cursors. ` +
          'Declare connector.credential: {header, scheme, secret: {env: NAME}} instead (a credential goes only in a header)',
      )
}

/** checkQueryCredentials for the literal query of a path (`/items?api_key=…`), reported at the path. */
function checkPathCredentials(path: string, where: readonly (string | number)[], issue: Issue): void {
  const at = path.indexOf('?')
  if (at < 0) return
  const names = [...new Set(new URLSearchParams(path.slice(at + 1)).keys())]
  checkQueryCredentials(Object.fromEntries(names.map((name) => [name, ''])), where, (_, message) => issue(where, message))
}

/**
 * Rules of an http resource's list request that one key's schema cannot state: a body only with POST, every
 * placeholder known, every upstream filter reachable (a parameter or a body placeholder), encodings that fit
 * the operator, declared fields only. Each message names the fix.
 */
export function checkHttpList(resource: ResourceConfig, http: HttpConnectorConfig, issue: Issue, mustExist: (field: string, where: readonly (string | number)[]) => void): void {
  const list = http.list
  const at = (...where: (string | number)[]) => ['connector', 'list', ...where]

  if (list.body !== undefined && list.method !== 'POST') issue(at('body'), 'a body is sent only with method: POST; set list.method: POST, or remove list.body')
  if (list.method === 'POST' && list.body === undefined)
    issue(at('method'), 'a POST list needs list.body, the JSON body template (e.g. { "size": "{{page_size}}", "search_after": "{{cursor}}" })')

  const inBody = new Set<string>()
  if (list.body !== undefined) {
    const { placeholders, partial } = scanTemplate(list.body)
    for (const text of partial) issue(at('body'), `"${text}": a placeholder must be the whole string value ("{{cursor}}"), never part of a longer string`)
    for (const name of placeholders) {
      inBody.add(name)
      const known = name === 'cursor' || name === 'page_size' || name === 'skip' || /^filter\.[^.]+\.[^.]+$/.test(name)
      if (!known) issue(at('body'), `unknown placeholder "{{${name}}}"; known: {{cursor}}, {{page_size}}, {{skip}}, {{filter.FIELD}}, {{filter.FIELD.OP}}`)
    }
    if (list.pagination.style === 'link_header' || list.pagination.style === 'next_link') {
      if (inBody.has('cursor')) issue(at('body'), `"{{cursor}}" has no value with ${list.pagination.style} pagination: the next link carries the position`)
    }
  }

  const declared = new Set<string>()
  list.upstream_filters.forEach((f, i) => {
    mustExist(f.field, at('upstream_filters', i, 'field'))
    const key = `filter.${f.field}.${f.op}`
    if (declared.has(key)) issue(at('upstream_filters', i), `field "${f.field}" with op "${f.op}" is declared twice`)
    declared.add(key)
    const type = resource.fields[f.field]
    if (f.op === 'contains' && type !== undefined && type !== 'tags') issue(at('upstream_filters', i, 'op'), `"contains" applies to tags fields, and "${f.field}" is ${type}`)
    if (f.encoding === 'comma' && f.op !== 'in') issue(at('upstream_filters', i, 'encoding'), 'a comma list encodes the values of op "in"; use plain or json for a single value')
    if (f.param === undefined && !inBody.has(key))
      issue(
        at('upstream_filters', i, 'param'),
        list.method === 'POST'
          ? `the filter on "${f.field}" (${f.op}) is never sent: set param, or put "{{${key}}}" in list.body`
          : `the filter on "${f.field}" (${f.op}) is never sent: set param (the query parameter the upstream reads)`,
      )
    if (f.param !== undefined && Object.values(http.list.filter_params).includes(f.param))
      issue(at('upstream_filters', i, 'param'), `parameter "${f.param}" is also in filter_params; declare each upstream filter once`)
  })
  for (const field of Object.keys(list.filter_params)) {
    mustExist(field, at('filter_params', field))
    if (declared.has(`filter.${field}.eq`)) issue(at('filter_params', field), `field "${field}" (eq) is also in upstream_filters; declare it once`)
    declared.add(`filter.${field}.eq`)
  }
  for (const name of inBody) if (name.startsWith('filter.') && !declared.has(name)) issue(at('body'), `"{{${name}}}" names no upstream filter; declare it in list.upstream_filters ({ field, op })`)

  checkQueryCredentials(list.query, at('query'), issue)
  if (http.get.batch) checkQueryCredentials(http.get.batch.query, ['connector', 'get', 'batch', 'query'], issue)
  // the same parameter written into the path: a next link echoes it, and a link-paged walk's cursor carries that URL
  checkPathCredentials(list.path, at('path'), issue)
  if (http.get.batch) checkPathCredentials(http.get.batch.path, ['connector', 'get', 'batch', 'path'], issue)
  if (list.pagination.style === 'keyset') mustExist(list.pagination.field ?? resource.id_field, at('pagination', 'field'))
}
