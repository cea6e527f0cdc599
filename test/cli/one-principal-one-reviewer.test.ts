import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { runWarrant } from '../support/cli-config.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

for (const kind of STORE_KINDS) {
  describe(`two reviewers means two people: alice's two tokens approve once (CLI, ${kind} store)`, () => {
    let fx: GatewayFixture
    let config: string
    const warrant = (args: readonly string[]) => runWarrant([...args, '-c', config], fx.dir)
    const tokenFile = (name: string, token: string) => {
      const file = join(fx.dir, `${name}.token`)
      writeFileSync(file, token, { mode: 0o600 })
      return file
    }
    before(async () => {
      // Every plan needs two distinct reviewers.
      fx = await startDemoGateway({ store: kind, count: 500, edit: (raw) => void (raw.resources.subscriptions.approval.two_reviewers_above = 0) })
      config = join(fx.dir, 'warrant.json')
      writeFileSync(config, JSON.stringify(fx.config))
    })
    after(async () => {
      await fx?.close()
    })

    test('a second principal named alice is refused; her second token (--principal alice) is not the second reviewer; bob is', async () => {
      const duplicate = await warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice'])
      assert.equal(duplicate.code, 3, duplicate.stderr)
      assert.match(duplicate.stderr, /a principal named "alice" already exists; to give it another token, use --principal alice/)
      const added = await warrant(['token', 'create', '--principal', 'alice', '--json'])
      assert.equal(added.code, 0, added.stderr)
      const aliceLaptop = tokenFile('alice-laptop', fx.tokens.reviewer)
      const alicePhone = tokenFile('alice-phone', JSON.parse(added.stdout).token)
      const bob = tokenFile('bob', fx.tokens.reviewer2)

      const selection = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', region: 'apac' } })
      assert.equal(selection.status, 201, JSON.stringify(selection.body))
      const plan = (await fx.as('agent')('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'two people' } } })).body
      assert.equal(plan.approval.reviewers_needed, 2, JSON.stringify(plan.approval))
      const approve = (file: string) => warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token-file', file, '--json'])

      const first = await approve(aliceLaptop)
      assert.equal(first.code, 0, first.stderr)
      assert.deepEqual(pick(JSON.parse(first.stdout)), { counted: true, plan_state: 'pending', still_needed: 1, approved_by_name: 'alice' })
      const second = await approve(alicePhone)
      assert.equal(second.code, 0, second.stderr)
      assert.deepEqual(pick(JSON.parse(second.stdout)), { counted: false, plan_state: 'pending', still_needed: 1, approved_by_name: 'alice' })
      // the approval that stands, not a second one: its id, time and expiry
      const [one, two] = [JSON.parse(first.stdout), JSON.parse(second.stdout)]
      assert.deepEqual([two.approval_id, two.decided_at, two.expires_at], [one.approval_id, one.decided_at, one.expires_at])
      const human = await warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token-file', alicePhone])
      assert.match(human.stdout, /^ALREADY APPROVED by alice \(\S+\) at \S+: nothing new was recorded; one reviewer counts once$/m)
      assert.match(human.stdout, /plan state: {2}pending; 1 more distinct reviewer\(s\) needed/)

      const served = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
      assert.equal(served.body.state, 'pending', 'one person with two tokens is one reviewer')
      assert.deepEqual(served.body.approval_state.approved_by.map((a: any) => a.name), ['alice'])
      assert.equal(served.body.approvals.length, 1, 'three approvals by alice are one row')
      const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `one-person-${kind}` })
      assert.equal(commit.status, 403, JSON.stringify(commit.body))

      const byBob = await approve(bob)
      assert.equal(byBob.code, 0, byBob.stderr)
      assert.deepEqual(pick(JSON.parse(byBob.stdout)), { counted: true, plan_state: 'approved', still_needed: 0, approved_by_name: 'bob' })
      const approved = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
      assert.deepEqual(approved.body.approval_state.approved_by.map((a: any) => a.name), ['alice', 'bob'])
    })
  })
}

function pick(r: { counted: boolean; plan_state: string; still_needed: number; approved_by_name: string | null }) {
  return { counted: r.counted, plan_state: r.plan_state, still_needed: r.still_needed, approved_by_name: r.approved_by_name }
}
