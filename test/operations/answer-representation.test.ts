import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults } from './support/flow.js'
import { userIdOf } from './support/users-upstream.js'
import { withFaultGateway } from './support/fault-gateway.js'

/**
 * A write endpoint may render the record otherwise than the read endpoint does (numbers as strings, a field
 * expanded), while the record itself changed exactly as approved. `before` came from a read, so only a read
 * compares with it. Before, the answer body alone was judged: the first target was recorded `failed`
 * (effect_contradicted, "credit changed") and the operation halted, though nothing but the role had changed.
 */
for (const kind of STORE_KINDS) describe(`a write answered in another representation (${kind} store)`, () => {
  test('the answer differs outside the set, the record does not: re-read, succeeded', () =>
    withFaultGateway(kind, 3, { concurrency: 1, batch_size: 10 }, async ({ upstream, agent, commit, finished }) => {
      for (const [id, user] of upstream.users) upstream.users.set(id, { ...user, credit: 10, profile: { city: 'Lyon' } } as any)
      // the PATCH answer spells numbers as strings and expands the profile; the record holds numbers as before
      upstream.onWrite = (t) => {
        const [status, body] = t.apply() as [number, any]
        t.send(status, { ...body, credit: '10', profile: { city: 'Lyon', country: { code: 'FR' } } })
      }
      const id = await commit('another-representation')
      const op = await finished(id)
      const results = await allResults(agent, id)
      assert.equal(op.state, 'succeeded', `${JSON.stringify(op)} / ${JSON.stringify(results)}`)
      assert.deepEqual(results.map((r) => r.outcome ?? r.state), ['succeeded', 'succeeded', 'succeeded'])
      assert.equal(upstream.writeLog.length, 3, 'each written once')
    }))

  test('the answer and the record both show a field changed outside the set: failed, halted', () =>
    withFaultGateway(kind, 3, { concurrency: 1, batch_size: 10 }, async ({ upstream, agent, commit, finished }) => {
      for (const [id, user] of upstream.users) upstream.users.set(id, { ...user, updated_by: 'someone' } as any)
      upstream.onWrite = (t) => {
        t.apply()
        upstream.users.set(t.id, { ...upstream.users.get(t.id)!, updated_by: 'api' } as any)
        t.send(200, upstream.users.get(t.id))
      }
      const id = await commit('side-effect')
      const op = await finished(id)
      assert.equal(op.state, 'halted')
      assert.equal(op.halt_reason.rule, 'effect_contradicted')
      assert.match(op.halt_reason.message, /"updated_by" changed.*\(re-read after the write\)/)
      const [first] = await allResults(agent, id)
      assert.deepEqual([first.id, first.outcome ?? first.state, first.reason], [userIdOf(1), 'failed', 'effect_contradicted'])
      assert.equal(upstream.writeLog.length, 1)
    }))

  test('the answer contradicts the set field and the re-read fails: still failed, halted', () =>
    withFaultGateway(kind, 3, { concurrency: 1, batch_size: 10 }, async ({ upstream, agent, commit, finished }) => {
      let written = false
      upstream.onWrite = (t) => {
        const [status, body] = t.apply() as [number, any]
        written = true
        t.send(status, { ...body, role: 'admin' })
      }
      const id = await commit('answer-contradicts')
      // the re-read after the write is refused (a 2xx with no record would itself contradict)
      upstream.onRead = () => (written ? ({ broken: true } as any) : undefined)
      const op = await finished(id)
      assert.equal(op.state, 'halted')
      assert.equal(op.halt_reason.rule, 'effect_contradicted')
      assert.equal(upstream.writeLog.length, 1)
    }))
})
