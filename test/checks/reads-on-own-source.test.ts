import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/schema.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from '../connectors/http/upstream-server.js'

/**
 * `warrant check` on an http resource of two sources ("north", "south"), unlike the demo: ids under `ref`, versions
 * `rev`, `?pg=N` pages under `data.rows`, a record by id under `data`, a `state` filter sent upstream. South's
 * read by id of north's ids answers 503 (its lookup shard for them is down); its own records read fine.
 * The check read each sampled record back by id alone, across the sources, though it knew the source it listed
 * it from (an operation reads a target on its member's source alone). Was: `read_by_id` fails_closed blaming
 * `connector.get` for south's 503, and a record north's filter left out, read again on north, was not counted
 * ("unknown" in place of `unsafe` naming the filter).
 */
type Entry = { ref: string; state: string; rev: number }

const north = new Map<string, Entry>(['n-01', 'n-02', 'n-03', 'n-04', 'n-05'].map((ref, i) => [ref, { ref, state: i === 1 ? 'closed' : 'open', rev: 1 }]))
const southEntries = new Map<string, Entry>(['s-01', 's-02'].map((ref) => [ref, { ref, state: 'closed', rev: 4 }]))

function registry(entries: Map<string, Entry>, options: { dropFromFilter?: string; failIds?: RegExp }) {
  return (req: SeenRequest, res: ServerResponse) => {
    if (req.url.pathname === '/v2/entries') {
      const pg = Number(req.url.searchParams.get('pg') ?? 1)
      const state = req.url.searchParams.get('state')
      const rows = [...entries.values()].filter((e) => state === null || (e.state === state && e.ref !== options.dropFromFilter))
      return sendJson(res, 200, { data: { rows: rows.slice((pg - 1) * 2, pg * 2) } })
    }
    const one = /^\/v2\/entries\/([^/]+)$/.exec(req.url.pathname)
    const ref = one ? decodeURIComponent(one[1]!) : ''
    if (options.failIds?.test(ref)) return sendJson(res, 503, { error: 'lookup shard down' })
    const entry = entries.get(ref)
    return entry ? sendJson(res, 200, { data: entry }) : sendJson(res, 404, { error: 'no entry' })
  }
}

describe('warrant check reads each sampled record back on the source it listed it from', () => {
  let n: TestUpstream
  let s: TestUpstream
  before(async () => {
    n = await startUpstream(registry(north, { dropFromFilter: 'n-01' }))
    s = await startUpstream(registry(southEntries, { failIds: /^n-/ }))
  })
  after(async () => {
    await n.close()
    await s.close()
  })

  test("another source's failing read of an id is not the get path's fault, nor hides a record a filter left out", async () => {
    const config = resourceSchema.parse({
      environment: { name: 'registry-test' },
      id_field: 'ref',
      connector: {
        kind: 'http',
        timeout_ms: 2000,
        sources: [
          { name: 'north', base_url: `${n.origin}/v2` },
          { name: 'south', base_url: `${s.origin}/v2` },
        ],
        list: { path: '/entries', items_path: 'data.rows', pagination: { style: 'page', param: 'pg' }, filter_params: { state: 'state' } },
        get: { path: '/entries/{id}', record_path: 'data' },
        version: { from: 'field', field: 'rev' },
      },
      fields: { ref: 'string', state: 'string', rev: 'integer' },
      review_fields: ['ref', 'state'],
    })
    const connector = createHttpConnector({ resource: config })
    try {
      const report = await checkResource({ name: 'entries', config, connector, pages: 5, pageSize: 2 })
      const byName = new Map(report.guarantees.map((g) => [g.name, g]))
      const read = byName.get('read_by_id')!
      assert.equal(read.status, 'holds', read.detail)
      const filter = byName.get('upstream_filters.state.eq')!
      assert.equal(filter.status, 'unsafe', filter.detail)
      assert.match(filter.detail, /n-01/)
      assert.deepEqual(filter.config_keys, ['connector.list.filter_params.state'])
    } finally {
      await connector.close()
    }
  })
})
