import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createPrincipalStore } from '../../src/auth/index.js'
import { createReviewSessions } from '../../src/review/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

for (const kind of STORE_KINDS) {
  describe(`review sessions (${kind} store)`, () => {
    test('a reviewer signs in; only hashes are stored; revoking the token ends the session; agents are refused', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        const principals = createPrincipalStore(store)
        const sessions = createReviewSessions({ store, principals })
        const reviewer = await principals.issue({ name: 'alice', role: 'reviewer' })
        const agent = await principals.issue({ name: 'bot', role: 'agent', scopes: { resources: '*', actions: '*' } })

        await assert.rejects(sessions.signIn(agent.token), (e: any) => e.code === 'forbidden')
        await assert.rejects(sessions.signIn('wrt_reviewer_not-a-token'), (e: any) => e.code === 'unauthenticated')
        await assert.rejects(sessions.signIn(''), (e: any) => e.code === 'unauthenticated')

        const opened = await sessions.signIn(reviewer.token)
        const rows = await store.db.selectFrom('review_sessions').selectAll().execute()
        assert.equal(rows.length, 1)
        assert.notEqual(rows[0]!.id_hash, opened.sessionId)
        assert.ok(!JSON.stringify(rows).includes(opened.sessionId) && !JSON.stringify(rows).includes(reviewer.token), 'neither the session id nor the token is stored in clear')

        const resumed = await sessions.resume(opened.sessionId)
        assert.equal(resumed?.actor.name, 'alice')
        assert.equal(resumed?.actor.surface, 'ui')
        assert.equal(sessions.csrfMatches(resumed!, opened.csrf), true)
        assert.equal(sessions.csrfMatches(resumed!, `${opened.csrf}x`), false)
        assert.equal(sessions.csrfMatches(resumed!, undefined), false)
        assert.equal(await sessions.resume('someone-elses-guess'), null)

        await principals.revoke(reviewer.token_id)
        assert.equal(await sessions.resume(opened.sessionId), null, 'the revoked token ends the session')
        assert.equal((await store.db.selectFrom('review_sessions').selectAll().execute()).length, 0)
      } finally {
        await drop()
      }
    })

    // moved by the injected clock, the store's on SQLite; on PostgreSQL the database's (test/plans/approval-clock-skew.test.ts)
    test('a session ends when idle too long, or at its end; sign-out deletes it', { skip: kind === 'postgres' && 'the store\'s clock is the database\'s: no injected clock moves it' }, async () => {
      let now = Date.parse('2030-01-01T08:00:00.000Z')
      const { store, drop } = await createTestStore(kind, { clock: () => new Date(now) })
      try {
        const principals = createPrincipalStore(store)
        const sessions = createReviewSessions({ store, principals, ttlMs: 3 * 3600_000, idleMs: 3600_000 })
        const { token } = await principals.issue({ name: 'alice', role: 'reviewer' })
        const a = await sessions.signIn(token)
        now += 50 * 60_000
        assert.ok(await sessions.resume(a.sessionId), 'used within the idle limit')
        now += 50 * 60_000
        assert.ok(await sessions.resume(a.sessionId), 'the last use counts, not the sign-in')
        now += 61 * 60_000
        assert.equal(await sessions.resume(a.sessionId), null, 'idle for over an hour')

        const b = await sessions.signIn(token)
        for (let i = 0; i < 4; i++) {
          now += 50 * 60_000
          if (i < 3) assert.ok(await sessions.resume(b.sessionId))
        }
        assert.equal(await sessions.resume(b.sessionId), null, 'past its absolute end, however active')

        const c = await sessions.signIn(token)
        await sessions.signOut(c.sessionId)
        assert.equal(await sessions.resume(c.sessionId), null)
        // sweep deletes exactly the sessions past their end that nobody came back to, and nothing live
        now += 24 * 3600_000
        const rowsNow = async () => (await store.db.selectFrom('review_sessions').select('id_hash').execute()).length
        assert.equal(await rowsNow(), 0, 'the sessions above were deleted when found ended')
        await sessions.signIn(token)
        await sessions.signIn(token)
        now += 3 * 3600_000 // both are now past their 3-hour end, never resumed
        const live = await sessions.signIn(token)
        assert.equal(await rowsNow(), 3)
        assert.equal(await sessions.sweep(), 2)
        assert.equal(await rowsNow(), 1)
        assert.ok(await sessions.resume(live.sessionId), 'the live session survives the sweep')
        assert.equal(await sessions.sweep(), 0)
      } finally {
        await drop()
      }
    })
  })
}
