import { renderTemplate, scanTemplate } from '../../config/list-template.js'
import type { FieldType, HttpConnectorConfig, ParamEncoding, ResourceConfig } from '../../config/schema.js'
import { canonicalInstant, clausesOf, type Clause, type Filter } from '../../contract/index.js'
import { positionQuery, positionValue, type PagePosition } from './pagination.js'
import { resolveUnderBase } from './url-guard.js'

/** One list request as it goes on the wire, and how much of the filter the upstream was asked to apply. */
export interface ListRequest {
  readonly method: 'GET' | 'POST'
  readonly url: URL
  readonly body?: string
  readonly headers?: Readonly<Record<string, string>>
  /** Every clause of the filter went upstream. */
  readonly allDelegated: boolean
  /** At least one clause went upstream: the upstream's list is narrower than the collection. */
  readonly anyDelegated: boolean
  /** The page size went upstream (page_size_param or "{{page_size}}"): only then is a page shorter than asked a short page. */
  readonly sizeSent: boolean
}

interface UpstreamFilter {
  readonly field: string
  readonly op: string
  readonly param?: string
  readonly encoding: ParamEncoding
}

/**
 * Builds the request for one page: the path with the fixed query, the filter clauses the upstream declares it
 * can apply (as query parameters or body placeholders), the page size and the position. Which clauses went
 * upstream is reported, never assumed applied: the caller re-checks every item against the whole filter.
 * A clause whose values cannot go on the wire as the upstream will read them is not sent at all.
 */
export function buildListRequest(
  config: HttpConnectorConfig,
  fields: ResourceConfig['fields'],
  base: URL,
  position: PagePosition,
  filter: Filter,
  pageSize: number,
): ListRequest {
  const list = config.list
  const inBody = new Set(list.body === undefined ? [] : scanTemplate(list.body).placeholders)
  const values = new Map<string, unknown>()
  const filterQuery: [string, string][] = []
  let allDelegated = true
  let anyDelegated = false
  for (const clause of clausesOf(filter)) {
    const declared = upstreamFilterFor(config, clause)
    const key = `filter.${clause.field}.${clause.op}`
    const viaBody = list.method === 'POST' && inBody.has(key)
    const value = declared ? wireValue(clause, fields[clause.field], declared.encoding) : null
    if (!declared || value === null || (declared.param === undefined && !viaBody)) {
      allDelegated = false
      continue
    }
    anyDelegated = true
    if (viaBody) values.set(key, declared.encoding === 'comma' && Array.isArray(value) ? value.join(',') : value)
    if (declared.param !== undefined) for (const text of encodeParam(declared.encoding, value)) filterQuery.push([declared.param, text])
  }

  const cursorInBody = list.method === 'POST' && inBody.has('cursor')
  const cursor = positionValue(position)
  if (cursor !== undefined) values.set('cursor', cursor)
  if (position.style === 'keyset' && position.key !== null) values.set('skip', 1)
  values.set('page_size', pageSize)

  let url: URL
  if (position.style === 'link' && position.url) url = position.url
  else {
    const fixed = Object.entries(list.query).filter(([k]) => !filterQuery.some(([p]) => p === k))
    const query: [string, string][] = [...fixed, ...filterQuery]
    if (list.page_size_param) query.push([list.page_size_param, String(pageSize)])
    if (!cursorInBody) query.push(...positionQuery(list.pagination, position))
    url = resolveUnderBase(base, list.path, query)
  }
  const sizeSent = list.page_size_param !== undefined || (list.method === 'POST' && inBody.has('page_size'))
  if (list.method === 'GET') return { method: 'GET', url, allDelegated, anyDelegated, sizeSent }
  return {
    method: 'POST',
    url,
    body: JSON.stringify(renderTemplate(list.body ?? {}, values)),
    headers: { 'content-type': 'application/json' },
    allDelegated,
    anyDelegated,
    sizeSent,
  }
}

/** The declared upstream filter for a clause: `upstream_filters` by field and operator, or `filter_params` (eq). */
function upstreamFilterFor(config: HttpConnectorConfig, clause: Clause): UpstreamFilter | undefined {
  const declared = config.list.upstream_filters.find((f) => f.field === clause.field && f.op === clause.op)
  if (declared) return declared
  if (clause.op !== 'eq' || !Object.hasOwn(config.list.filter_params, clause.field)) return undefined
  return { field: clause.field, op: 'eq', param: config.list.filter_params[clause.field]!, encoding: 'plain' }
}

/**
 * A clause's value as it goes upstream, or null when it cannot be sent faithfully, so the clause stays here
 * (the re-check applies it; the upstream's list is only wider). A comma list cannot carry a value holding a
 * comma: the upstream would split it and read other values, and a list missing matches would prove a false
 * absence. A timestamp goes as its UTC spelling (`canonicalInstant`), as the SQL connector sends it: the
 * caller's offset spelling is the same instant to Warrant but not to an upstream that compares text; a value
 * naming no instant (the filter check refuses it first) is not sent.
 */
function wireValue(clause: Clause, type: FieldType | undefined, encoding: ParamEncoding): Clause['value'] | null {
  const values = Array.isArray(clause.value) ? clause.value : [clause.value]
  if (encoding === 'comma' && values.some((v) => String(v).includes(','))) return null
  if (type !== 'timestamp' || clause.op === 'is_null') return clause.value
  const instants: string[] = []
  for (const v of values) {
    const instant = typeof v === 'string' ? canonicalInstant(v) : null
    if (instant === null) return null
    instants.push(instant)
  }
  return Array.isArray(clause.value) ? instants : instants[0]!
}

/**
 * A clause value as query parameter values. plain: as text, a list as one parameter per value; json: JSON
 * (`"past_due"`, `["a","b"]`); comma: a list as `a,b`.
 *
 * @example encodeParam('json', 'past_due') // ['"past_due"']
 */
export function encodeParam(encoding: ParamEncoding, value: Clause['value']): string[] {
  switch (encoding) {
    case 'json':
      return [JSON.stringify(value)]
    case 'comma':
      return [Array.isArray(value) ? value.map(String).join(',') : String(value)]
    case 'plain':
      return Array.isArray(value) ? value.map(String) : [String(value)]
  }
}
