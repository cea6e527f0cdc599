import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { caller } from '../operations/support/flow.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { auditRowsOf, principalRow as principalRowOf } from '../support/principal-rows.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * `GET /v1/principals`, `POST /v1/principals/{name}/disable` and `/enable`: what `warrant principal` does, for an admin
 * who holds a token and not the store. Admins only (403 for the others, nothing changed), 404 for an unknown name, 400
 * for a disable without a reason; each change leaves the audit row the CLI's leaves (the same details).
 */
for (const kind of STORE_KINDS) {
  describe(`the admin's principals routes (${kind} store)`, () => {
    let fx: GatewayFixture
    const principalRow = (name: string) => principalRowOf(fx, name)
    const rowsOf = (action: string) => auditRowsOf(fx, action)
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 50 })
    })
    after(async () => {
      await fx?.close()
    })

    test('an admin lists, disables (reason required) and enables; the disabled token is refused at once; each change is audited as the CLI audits it', async () => {
      const admin = fx.as('admin')
      const listed = await admin('GET', '/v1/principals')
      assert.equal(listed.status, 200, JSON.stringify(listed.body))
      const alice = listed.body.principals.find((p: any) => p.name === 'alice')
      assert.deepEqual({ ...alice, principal_id: undefined, created_at: undefined }, { principal_id: undefined, created_at: undefined, name: 'alice', role: 'reviewer', disabled_at: null, last_disabled_at: null, live_tokens: 1 })
      assert.deepEqual(
        listed.body.principals.map((p: any) => p.name).sort(),
        ['alice', 'bob', 'root', 'test-agent'],
        'every principal, tokens never shown',
      )
      assert.ok(!JSON.stringify(listed.body).includes(fx.tokens.reviewer))

      const disabled = await admin('POST', '/v1/principals/alice/disable', { reason: ' laptop stolen ' })
      assert.equal(disabled.status, 200, JSON.stringify(disabled.body))
      const row = await principalRow('alice')
      assert.equal(disabled.body.changed, true)
      assert.equal(disabled.body.disabled_at, row.disabled_at)
      assert.equal(disabled.body.reason, 'laptop stolen')
      const refused = await fx.as('reviewer')('GET', '/v1/resources')
      assert.equal(refused.status, 401)
      assert.equal(refused.body.error.details.reason, 'principal_disabled')
      const [entry, ...others] = await rowsOf('POST /v1/principals/:name/disable')
      assert.equal(others.length, 0, 'one row')
      assert.equal(entry!.principal, (await principalRow('root')).id, 'names the admin who acted')
      assert.deepEqual({ ...entry!.details, actor: undefined }, { actor: undefined, principal_id: row.id, principal_name: 'alice', principal_role: 'reviewer', changed: true, disabled_at: row.disabled_at, reason: 'laptop stolen' })

      const again = await admin('POST', '/v1/principals/alice/disable', { reason: 'again' })
      assert.equal(again.status, 200)
      assert.equal(again.body.changed, false)
      assert.equal(again.body.disabled_at, row.disabled_at, 'the first disable time stands')

      const enabled = await admin('POST', '/v1/principals/alice/enable', { reason: 'laptop found' })
      assert.equal(enabled.status, 200, JSON.stringify(enabled.body))
      assert.deepEqual([enabled.body.changed, enabled.body.disabled_at, enabled.body.was_disabled_at, enabled.body.last_disabled_at], [true, null, row.disabled_at, row.disabled_at])
      assert.equal((await fx.as('reviewer')('GET', '/v1/resources')).status, 200, 'its token works again')
      const [enableRow] = await rowsOf('POST /v1/principals/:name/enable')
      assert.deepEqual({ ...enableRow!.details, actor: undefined }, { actor: undefined, principal_id: row.id, principal_name: 'alice', principal_role: 'reviewer', changed: true, was_disabled_at: row.disabled_at, reason: 'laptop found' })
      // an enable needs no reason: no body at all is one
      const bare = await admin('POST', '/v1/principals/alice/enable')
      assert.equal(bare.status, 200, JSON.stringify(bare.body))
      assert.deepEqual([bare.body.changed, bare.body.reason], [false, null])
    })

    test('a reviewer or an agent is refused 403 on every route, nothing changed; the refusal is audited', async () => {
      const before = await principalRow('bob')
      for (const who of ['reviewer2', 'agent'] as const) {
        for (const [method, path, body] of [
          ['GET', '/v1/principals', undefined],
          ['POST', '/v1/principals/bob/disable', { reason: 'x' }],
          ['POST', '/v1/principals/bob/enable', {}],
        ] as const) {
          const res = await fx.as(who)(method, path, body)
          assert.equal(res.status, 403, `${who} ${method} ${path}: ${JSON.stringify(res.body)}`)
          assert.equal(res.body.error.code, 'forbidden')
          assert.match(res.body.error.message, /admin/)
        }
      }
      assert.deepEqual(await principalRow('bob'), before)
      const refusals = (await rowsOf('POST /v1/principals/:name/disable')).filter((r) => r.summary.outcome === 'refused')
      assert.ok(refusals.length >= 2)
      assert.equal(refusals[0]!.details?.changed, undefined, `a refusal claims no change: ${JSON.stringify(refusals[0]!.details)}`)
    })

    test('wrong input changes nothing: unknown name 404, a missing or blank reason 400 naming it, an unknown field 400', async () => {
      const admin = fx.as('admin')
      const before = await fx.gateway.store.db.selectFrom('principals').select(['name', 'disabled_at', 'last_disabled_at']).orderBy('name').execute()
      const unknown = await admin('POST', '/v1/principals/nobody/disable', { reason: 'x' })
      assert.equal(unknown.status, 404, JSON.stringify(unknown.body))
      assert.equal(unknown.body.error.code, 'not_found')
      assert.match(unknown.body.error.message, /no principal named "nobody"/)
      const cased = await admin('POST', '/v1/principals/Bob/disable', { reason: 'x' })
      assert.equal(cased.status, 404)
      assert.match(cased.body.error.message, /did you mean "bob"/)
      assert.equal((await admin('POST', '/v1/principals/nobody/enable', {})).status, 404)
      for (const body of [{}, { reason: '' }, { reason: '   ' }, undefined]) {
        const res = await admin('POST', '/v1/principals/bob/disable', body)
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`)
        assert.equal(res.body.error.code, 'invalid_request')
        assert.match(res.body.error.message, /reason/)
      }
      const extra = await admin('POST', '/v1/principals/bob/disable', { reason: 'x', until: 'tomorrow' })
      assert.equal(extra.status, 400, JSON.stringify(extra.body))
      assert.match(extra.body.error.message, /until/)
      const after = await fx.gateway.store.db.selectFrom('principals').select(['name', 'disabled_at', 'last_disabled_at']).orderBy('name').execute()
      assert.deepEqual(after, before)
      // the same rules as anywhere: another admin's token works, a fresh one
      const doc = (await admin('GET', '/openapi.json')).body
      assert.ok(doc.paths['/v1/principals'].get && doc.paths['/v1/principals/{name}/disable'].post && doc.paths['/v1/principals/{name}/enable'].post, 'documented in /openapi.json')
      const other = await fx.gateway.principals.issue({ name: `ops-${kind}`, role: 'admin' })
      assert.equal((await caller(fx.base, other.token)('GET', '/v1/principals')).status, 200)
    })
  })
}
