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

  // set_role also sets a number field: what a number the upstream answers or stores as a string does
  const withCredit = (users: Record<string, any>) => {
    users.fields.credit = 'number'
    users.actions.set_role.set = { role: '{{params.role}}', credit: 10 }
    users.actions.set_role.write.body = { role: '{{set.role}}', credit: '{{set.credit}}' }
  }
  for (const stored of ['number', 'string'] as const)
    test(`a set number answered as a string, stored as a ${stored}: ${stored === 'number' ? 'succeeded, the number read back' : 'failed, halted: a read refuses that record'}`, () =>
      withFaultGateway(
        kind,
        2,
        { concurrency: 1, batch_size: 10 },
        async ({ upstream, agent, commit, finished }) => {
          for (const [id, user] of upstream.users) upstream.users.set(id, { ...user, credit: 5 } as any)
          upstream.onWrite = (t) => {
            t.apply()
            const user = upstream.users.get(t.id) as any
            if (stored === 'string') upstream.users.set(t.id, { ...user, credit: String(user.credit) } as any)
            t.send(200, { ...user, credit: String(user.credit) })
          }
          const id = await commit(`credit-${stored}`)
          const op = await finished(id)
          const [first] = await allResults(agent, id)
          if (stored === 'number') {
            assert.equal(op.state, 'succeeded', JSON.stringify(op))
            assert.deepEqual(first.after, { role: 'viewer', credit: 10 }, 'the after the ledger keeps is the record as read')
          } else {
            // every later read of the record refuses it (SHAPE_MISMATCH): the write changed the field's type
            assert.equal(op.state, 'halted', `the record now holds "10" where 10 was approved: ${JSON.stringify(first)}`)
            assert.equal(op.halt_reason.rule, 'effect_contradicted')
            assert.match(op.halt_reason.message, /"credit".*another type than number/)
            assert.equal(upstream.writeLog.length, 1)
          }
        },
        withCredit,
      ))
})

