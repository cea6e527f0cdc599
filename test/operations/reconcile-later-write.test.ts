import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults } from './support/flow.js'
import { userIdOf } from './support/users-upstream.js'
import { withFaultGateway } from './support/fault-gateway.js'

/**
 * An `unknown` target (its write answered 500, and was in fact not applied) whose record a later operation of
 * this gateway then wrote with the same effect: reconciling the first operation saw the record at a new version
 * holding the effect and recorded its target `succeeded`, though the change was the second operation's (the
 * first one's compensation would restore the record a second time). The later write explains the change as well
 * as ours: the target stays `unknown`, saying which operation wrote since, as a "not applied" conclusion does.
 */
for (const kind of STORE_KINDS) describe(`reconcile never credits another operation's write (${kind} store)`, () => {
  test('an unknown target whose record a later operation wrote stays unknown', () =>
    withFaultGateway(kind, 1, { concurrency: 1, batch_size: 10 }, async ({ upstream, agent, commit, finished }) => {
      upstream.onWrite = (t) => t.send(500, { error: 'the gateway timed out' })
      const first = await commit('first')
      assert.equal((await finished(first)).counts.unknown, 1)
      assert.equal(upstream.users.get(userIdOf(1))!.version, 1, 'not applied')

      upstream.onWrite = (t) => t.send(...t.apply())
      const second = await commit('second')
      assert.equal((await finished(second)).counts.succeeded, 1)

      const report = await agent('POST', `/v1/operations/${first}/reconcile`)
      assert.equal(report.status, 200, JSON.stringify(report.body))
      const [r] = await allResults(agent, first)
      assert.equal(r.outcome ?? r.state, 'unknown', `the change is the second operation's: ${JSON.stringify(r)}`)
      assert.match(r.error, new RegExp(`operation ${second}`))
      assert.equal(report.body.succeeded, 0)

      // without a later write, the record holding the effect at a new version is ours: succeeded
      upstream.onWrite = (t) => { t.apply(); t.send(500, { error: 'applied, then failed to answer' }) }
      upstream.users.set(userIdOf(1), { ...upstream.users.get(userIdOf(1))!, role: 'member' })
      const third = await commit('third')
      assert.equal((await finished(third)).counts.unknown, 1)
      assert.equal((await agent('POST', `/v1/operations/${third}/reconcile`)).body.succeeded, 1)
    }))
})
