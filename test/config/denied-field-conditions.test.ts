import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { configProblems, parseConfigInput } from '../support/config-input.js'

// A request's filter on a denied field is refused (denied_field); a config's condition on one was accepted,
// and it asks the same question of the secret: which targets a precondition skips, which selections a standing
// approval lets through or flags, which writes' answers hold the expected value. Each is refused at load.
describe('a config condition on a denied field is refused at load', () => {
  const cases: [string, (resource: any) => void, string][] = [
    ['an action precondition', (r) => (r.actions.pause_collection.precondition.card_token = { is_null: true }), 'actions.pause_collection.precondition.card_token'],
    ['a standing approval selector', (r) => (r.standing_approvals[0].selector.notes = 'vip'), 'standing_approvals.0.selector.notes'],
    ['a standing approval exclusion rule', (r) => (r.standing_approvals[0].exclude = [{ rule: 'secret', filter: { notes: 'vip' } }]), 'standing_approvals.0.exclude.0.filter.notes'],
    ['a standing approval flag', (r) => (r.standing_approvals[0].flagged = { card_token: { is_null: false } }), 'standing_approvals.0.flagged.card_token'],
    ['an expected answer', (r) => (r.actions.pause_collection.expect = { fields: { notes: '{{params.reason}}' } }), 'actions.pause_collection.expect.fields.notes'],
  ]
  for (const [name, edit, key] of cases)
    test(`${name} on a denied field names the key and the field`, () => {
      const raw = parseConfigInput()
      edit(raw.resources.subscriptions)
      const problems = configProblems(() => parseConfig(raw))
      const problem = problems.find((p) => p.key === `resources.subscriptions.${key}`)
      assert.ok(problem, JSON.stringify(problems))
      assert.match(problem.message, /is denied/)
    })

  test('the same conditions on a readable field still load', () => {
    const raw = parseConfigInput()
    raw.resources.subscriptions.actions.pause_collection.precondition.region = 'eu'
    assert.doesNotThrow(() => parseConfig(raw))
  })
})
