import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import type { UpstreamCall } from '../../src/connectors/index.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createTempDir, type TempDir } from '../support/stores.js'

/**
 * A record read with an id its declared type cannot be went upstream: `GET …/records/abc` on a resource whose id
 * field is declared `integer` asked the upstream, whose "no route" 404 came back as `not_found` "no record", an
 * absence claim no read made (the upstream never looked for a record). Refused 400 `invalid_request` naming the id
 * field, its declared type and the value, before any upstream call. A real HTTP upstream counting requests, and a
 * real SQLite table keyed by INTEGER PRIMARY KEY whose every call the gateway reports (`onCall`).
 */
describe('a read by id with an id its declared type cannot be', () => {
  let fx: GatewayFixture
  let dir: TempDir
  let upstream: TestUpstream
  const calls: UpstreamCall[] = []
  let get: (path: string) => Promise<{ status: number; body: any }>
  before(async () => {
    dir = await createTempDir('warrant-id-type-')
    const file = join(dir.path, 'ledger.db')
    const db = new BetterSqlite3(file)
    db.exec('create table ledger (id integer primary key, version integer not null, status text not null)')
    for (const id of [7, 8, 9]) db.exec(`insert into ledger values (${id}, 1, 'open')`)
    db.close()
    // an API whose routes take numbers only: anything else is "no route", a 404 that says nothing of records
    upstream = await startUpstream((req, res) => {
      const one = /^\/tickets\/(\d+)$/.exec(req.url.pathname)
      if (req.url.pathname === '/tickets') return sendJson(res, 200, { rows: req.url.searchParams.get('pg') === '2' ? [] : [{ num: 7, rev: 1, state: 'open' }] })
      if (one === null) return sendJson(res, 404, { error: 'no route' })
      return one[1] === '7' ? sendJson(res, 200, { num: 7, rev: 1, state: 'open' }) : sendJson(res, 404, { error: 'no such ticket' })
    })
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 10,
      onCall: (call) => void calls.push(call),
      edit: (raw) => {
        raw.resources.ledger = {
          environment: raw.resources.subscriptions.environment,
          connector: { kind: 'sql', url: `sqlite:${file}`, table: 'ledger' },
          fields: { id: 'integer', version: 'integer', status: 'string' },
          id_field: 'id',
          version_field: 'version',
          review_fields: ['id', 'status'],
          actions: {},
        }
        raw.resources.tickets = {
          environment: { name: 'tickets-test', host: upstream.origin },
          id_field: 'num',
          connector: {
            kind: 'http',
            timeout_ms: 2000,
            sources: [{ name: 'main', base_url: upstream.origin }],
            list: { path: '/tickets', items_path: 'rows', pagination: { style: 'page', param: 'pg' } },
            get: { path: '/tickets/{id}' },
            version: { from: 'field', field: 'rev' },
          },
          fields: { num: 'integer', rev: 'integer', state: 'string' },
          review_fields: ['num', 'state'],
          actions: {},
        }
      },
    })
    const token = (await fx.gateway.principals.issue({ name: 'typed-agent', role: 'agent', scopes: { resources: ['ledger', 'tickets'], actions: '*' } })).token
    get = async (path) => {
      const res = await fetch(`${fx.base}${path}`, { headers: { authorization: `Bearer ${token}` } })
      return { status: res.status, body: await res.json() }
    }
  })
  after(async () => {
    await fx?.close()
    await upstream?.close()
    await dir?.drop()
  })

  for (const [resource, field] of [
    ['tickets', 'num'],
    ['ledger', 'id'],
  ] as const) {
    test(`${resource}: an integer id field read with "abc" or "1.5" is 400 naming the field, its type and the value; no upstream call`, async () => {
      for (const path of [`/v1/resources/${resource}/records/abc`, `/v1/resources/${resource}/records?id=abc`, `/v1/resources/${resource}/records/1.5`]) {
        const requests = upstream.seen.length
        const before = calls.length
        const res = await get(path)
        assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.body)}`)
        assert.equal(res.body.error.code, 'invalid_request')
        const value = path.endsWith('1.5') ? '1.5' : 'abc'
        assert.match(res.body.error.message, new RegExp(`"${field}"`))
        assert.match(res.body.error.message, /integer/)
        assert.ok(res.body.error.message.includes(`"${value}"`), res.body.error.message)
        assert.deepEqual([res.body.error.details.field, res.body.error.details.type, res.body.error.details.id], [field, 'integer', value])
        assert.equal(upstream.seen.length, requests, `${path}: the upstream was asked`)
        assert.deepEqual(calls.slice(before), [], `${path}: upstream calls were made`)
      }
    })

    test(`${resource}: an integer id is still read, and one absent is still not_found`, async () => {
      const found = await get(`/v1/resources/${resource}/records/7`)
      assert.equal(found.status, 200, JSON.stringify(found.body))
      assert.equal(found.body.id, '7')
      const absent = await get(`/v1/resources/${resource}/records/12`)
      assert.equal(absent.status, 404, JSON.stringify(absent.body))
      assert.equal(absent.body.error.code, 'not_found')
    })
  }

  test('a search or selection naming an id of another type is refused as well, with no upstream call', async () => {
    const token = (await fx.gateway.principals.issue({ name: 'typed-agent-2', role: 'agent', scopes: { resources: ['ledger', 'tickets'], actions: '*' } })).token
    for (const resource of ['ledger', 'tickets']) {
      const idField = resource === 'ledger' ? 'id' : 'num'
      for (const [path, body] of [
        [`/v1/resources/${resource}/search`, { filter: { [idField]: 'abc' } }],
        [`/v1/resources/${resource}/search`, { filter: { [idField]: { in: [7, 'abc'] } } }],
        [`/v1/resources/${resource}/selections`, { filter: { [idField]: { eq: 'abc' } } }],
      ] as const) {
        const requests = upstream.seen.length
        const before = calls.length
        const res = await fetch(`${fx.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
        const answer = (await res.json()) as any
        assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}: ${JSON.stringify(answer)}`)
        assert.equal(answer.error.code, 'invalid_request')
        assert.match(answer.error.message, /"abc" is not an integer/)
        assert.equal(upstream.seen.length, requests)
        assert.equal(calls.length, before)
      }
    }
  })
})
