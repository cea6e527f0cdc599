import assert from 'node:assert/strict'
import { request } from 'node:http'
import { join } from 'node:path'
import { before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { demoGatewayFor } from '../support/gateway-fixture.js'

/** A GET sent with its path exactly as written: `fetch` and curl resolve `..` and `%2E%2E` before sending. */
function rawGet(base: string, path: string, token: string): Promise<{ status: number; body: any }> {
  const url = new URL(base)
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET', headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end()
  })
}

/**
 * A record whose id is `.` or `..` could not be read: the URL parser resolved the id away as a dot segment, even
 * percent-encoded, and `GET /v1/resources/subscriptions/records/%2E%2E` answered 404 `not_found` ("no route GET
 * /v1/resources/subscriptions/"): to an agent, a record that exists read as absent. Such a path is refused 400
 * naming the dot segment and the query form, which reads any id: `GET …/records?id=..`.
 */
describe('record ids that are dot segments (sqlite)', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 20 })
  before(() => {
    const db = new Database(join(env.fx.dir, 'demo.db'))
    try {
      db.prepare("update subscriptions set id = '..' where id = 'sub_00001'").run()
      db.prepare("update subscriptions set id = '.' where id = 'sub_00002'").run()
    } finally {
      db.close()
    }
  })

  test('a path whose id is a dot segment, plain or percent-encoded, is 400 naming it and the query form', async () => {
    const cases: readonly (readonly [string, string])[] = [
      ['/v1/resources/subscriptions/records/..', '..'],
      ['/v1/resources/subscriptions/records/%2E%2E', '%2E%2E'],
      ['/v1/resources/subscriptions/records/%2e', '%2e'],
      ['/v1/resources/subscriptions/records/.?fields=status', '.'],
    ]
    for (const [path, shown] of cases) {
      const answer = await rawGet(env.fx.base, path, env.fx.tokens.agent)
      assert.equal(answer.status, 400, `${path}: ${JSON.stringify(answer.body)}`)
      assert.equal(answer.body.error.code, 'invalid_request')
      assert.equal(answer.body.error.details.field, 'path')
      assert.ok(answer.body.error.message.includes(`"${shown}"`), answer.body.error.message)
      assert.match(answer.body.error.message, /records\?id=/)
    }
  })

  test('the query form reads those records, and any other id, as the path form does', async () => {
    const agent = env.fx.as('agent')
    for (const id of ['..', '.']) {
      const answer = await agent('GET', `/v1/resources/subscriptions/records?id=${encodeURIComponent(id)}&fields=status`)
      assert.equal(answer.status, 200, JSON.stringify(answer.body))
      assert.equal(answer.body.id, id)
    }
    const byPath = await agent('GET', '/v1/resources/subscriptions/records/sub_00003')
    const byQuery = await agent('GET', '/v1/resources/subscriptions/records?id=sub_00003')
    assert.equal(byQuery.status, 200)
    assert.deepEqual(byQuery.body, byPath.body)
    const missing = await agent('GET', '/v1/resources/subscriptions/records')
    assert.equal(missing.status, 400, JSON.stringify(missing.body))
    assert.equal(missing.body.error.code, 'invalid_request')
    assert.match(JSON.stringify(missing.body.error), /\bid\b/)
  })
})
