import { sql } from 'kysely'
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createPrincipalStore, LAST_USED_RESOLUTION_MS } from '../../src/auth/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

for (const kind of STORE_KINDS) {
  describe(`principals are people, with tokens (${kind} store)`, () => {
    test('a taken name is refused (also in another case); --principal adds a token to the same principal, with its role and scopes', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        const principals = createPrincipalStore(store)
        const first = await principals.issue({ name: 'alice', role: 'reviewer' })
        for (const name of ['alice', ' alice ', 'Alice']) {
          await assert.rejects(principals.issue({ name, role: 'reviewer' }), (e: any) => {
            assert.equal(e.code, 'conflict')
            assert.match(e.message, /a principal named "alice" already exists; to give it another token, use --principal alice/)
            return true
          })
        }
        await assert.rejects(principals.issue({ name: '  ', role: 'reviewer' }), (e: any) => e.code === 'invalid_request' && e.details.field === 'name')

        const second = await principals.addToken({ principal: 'alice' })
        assert.equal(second.principal_id, first.principal_id)
        assert.notEqual(second.token, first.token)
        assert.equal(second.role, 'reviewer')
        const [a, b] = [await principals.authenticate(first.token, 'cli'), await principals.authenticate(second.token, 'cli')]
        assert.equal(a.principal, b.principal, 'both tokens stand for the one principal')
        assert.equal((await store.db.selectFrom('principals').selectAll().execute()).length, 1)
        assert.deepEqual((await principals.list()).map((t) => t.name), ['alice', 'alice'])

        await assert.rejects(principals.addToken({ principal: 'bob' }), (e: any) => e.code === 'not_found' && /no principal named "bob"/.test(e.message))
      } finally {
        await drop()
      }
    })

    test('a token\'s last use is kept to the minute: authentications within a minute write it once', async () => {
      let at = Date.parse('2026-12-01T10:00:00.000Z')
      const { store, drop } = await createTestStore(kind, { clock: () => new Date(at) })
      try {
        const principals = createPrincipalStore(store)
        const issued = await principals.issue({ name: 'poller', role: 'agent' })
        const lastUsed = async () => (await principals.list()).find((t) => t.name === 'poller')!.last_used_at
        assert.equal(await lastUsed(), null)
        await principals.authenticate(issued.token, 'http')
        assert.equal(await lastUsed(), '2026-12-01T10:00:00.000Z')
        at += LAST_USED_RESOLUTION_MS - 1
        await principals.authenticate(issued.token, 'http')
        assert.equal(await lastUsed(), '2026-12-01T10:00:00.000Z', 'within the minute: not written again')
        at += 1
        await principals.authenticate(issued.token, 'http')
        assert.equal(await lastUsed(), '2026-12-01T10:01:00.000Z')
      } finally {
        await drop()
      }
    })

    test('two concurrent creates of one name (in two cases): one principal, the other refused with conflict', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        const principals = createPrincipalStore(store)
        // "Carol" beside "carol": the store's index is on the folded name, so the race cannot make two of them
        const outcomes = await Promise.allSettled([principals.issue({ name: 'carol', role: 'reviewer' }), principals.issue({ name: 'Carol', role: 'reviewer' })])
        assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1)
        const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult
        assert.equal(refused.reason.code, 'conflict')
        assert.equal((await store.db.selectFrom('principals').where(sql`lower(name)`, '=', 'carol').selectAll().execute()).length, 1)
      } finally {
        await drop()
      }
    })
  })
}
