import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'

// A query parameter a route does not take, or one given twice, asks another question than the one written: it was
// dropped (`results?state=failed` answered every outcome, `audit?operation=…` the whole log) or answered with a
// message about something else ("expected number, received NaN" for `limit=2&limit=3`). Both are refused, named.
// The routes read no store but their own, so one store kind is enough.
describe('query parameters on /v1: unknown or repeated ones are refused, naming them', () => {
  let fx: GatewayFixture
  let selection: any
  let plan: any
  let operation: string
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 200 })
    const action = { type: 'pause_collection', params: { reason: 'probe' } }
    selection = (await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', collection: 'active' }, exclude: [{ rule: 'eu', filter: { region: 'eu' } }] })).body
    plan = (await fx.as('agent')('POST', `/v1/selections/${selection.selection_id}/plans`, { action })).body
    await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
    const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': 'q-1' })
    operation = commit.body.operation_id
    await fx.as('agent')('GET', `/v1/operations/${operation}?wait_ms=20000`)
  })
  after(() => fx?.close())

  const unknown = () => [
    ['agent', `/v1/operations/${operation}/results?state=failed`, 'state'],
    ['agent', `/v1/operations/${operation}?wait=1000`, 'wait'],
    ['reviewer', `/v1/audit?operation=${operation}`, 'operation'],
    ['agent', `/v1/selections/${selection.selection_id}/records?limt=5`, 'limt'],
    ['agent', `/v1/selections/${selection.selection_id}/excluded?rule=eu&limt=5`, 'limt'],
    ['agent', `/v1/selections/${selection.selection_id}/export?fromat=ndjson`, 'fromat'],
    ['agent', `/v1/plans/${plan.plan_id}/changes?limt=5`, 'limt'],
    ['agent', '/v1/resources/subscriptions/records/sub_00001?field=status', 'field'],
  ] as const

  test('a parameter the route does not take is 400 invalid_request naming it', async () => {
    for (const [who, path, name] of unknown()) {
      const answer = await fx.as(who)('GET', path)
      assert.equal(answer.status, 400, `${path}: ${JSON.stringify(answer.body).slice(0, 200)}`)
      assert.equal(answer.body.error.code, 'invalid_request')
      assert.match(answer.body.error.message, new RegExp(`"${name}"`), path)
    }
  })

  test('a route that takes no parameters refuses one, naming it, and does nothing', async () => {
    const agent = fx.as('agent')
    const search = await agent('POST', '/v1/resources/subscriptions/search?filter=status:active', { filter: {} })
    assert.equal(search.status, 400, JSON.stringify(search.body).slice(0, 200))
    assert.match(search.body.error.message, /"filter"/)
    for (const [who, path] of [
      ['agent', '/v1/resources?verbose=1'],
      ['agent', `/v1/plans/${plan.plan_id}?expand=changes`],
      ['agent', `/v1/selections/${selection.selection_id}?fields=status`],
      ['reviewer', '/v1/audit/verify?since=2024-01-01T00:00:00Z'],
    ] as const) {
      const answer = await fx.as(who)('GET', path)
      assert.equal(answer.status, 400, `${path}: ${JSON.stringify(answer.body).slice(0, 200)}`)
      assert.equal(answer.body.error.code, 'invalid_request')
    }
    const selectionsBefore = await fx.gateway.store.db.selectFrom('selections').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
    const refused = await agent('POST', '/v1/resources/subscriptions/selections?dry_run=true', { filter: { status: 'past_due' } })
    assert.equal(refused.status, 400, JSON.stringify(refused.body).slice(0, 200))
    assert.match(refused.body.error.message, /"dry_run"/)
    const selectionsAfter = await fx.gateway.store.db.selectFrom('selections').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
    assert.equal(Number(selectionsAfter.n), Number(selectionsBefore.n), 'the refused request froze nothing')
  })

  test('a parameter given twice is 400 invalid_request saying so', async () => {
    for (const [who, path, name] of [
      ['agent', `/v1/operations/${operation}/results?outcome=succeeded&outcome=failed`, 'outcome'],
      ['agent', `/v1/selections/${selection.selection_id}/records?limit=2&limit=3`, 'limit'],
      ['reviewer', `/v1/audit?operation_id=${operation}&operation_id=op_other`, 'operation_id'],
    ] as const) {
      const answer = await fx.as(who)('GET', path)
      assert.equal(answer.status, 400, path)
      assert.equal(answer.body.error.code, 'invalid_request')
      assert.match(answer.body.error.message, new RegExp(`"${name}" is given 2 times`), path)
    }
  })

  test('a number parameter written other than in decimal digits is 400 naming it, never read as another number', async () => {
    // Number() would read 0x10 as 16, 1e2 as 100, " 5" as 5 and 0b11 as 3: a page size or a wait the caller never wrote
    for (const [who, path, name] of [
      ['agent', `/v1/selections/${selection.selection_id}/records?limit=0x10`, 'limit'],
      ['agent', `/v1/selections/${selection.selection_id}/excluded?rule=eu&limit=1e2`, 'limit'],
      ['agent', `/v1/operations/${operation}/results?limit=%205`, 'limit'],
      ['agent', `/v1/operations/${operation}?wait_ms=0b11`, 'wait_ms'],
      ['reviewer', '/v1/audit?limit=2.0', 'limit'],
      ['reviewer', '/v1/audit?limit=', 'limit'],
    ] as const) {
      const answer = await fx.as(who)('GET', path)
      assert.equal(answer.status, 400, `${path}: ${JSON.stringify(answer.body).slice(0, 200)}`)
      assert.equal(answer.body.error.code, 'invalid_request')
      assert.match(JSON.stringify(answer.body.error), new RegExp(`${name}[^]*decimal digits`), path)
    }
    const page = await fx.as('agent')('GET', `/v1/selections/${selection.selection_id}/records?limit=1`)
    assert.equal(page.status, 200)
    assert.equal(page.body.records.length, 1, 'a decimal limit is still read as written')
  })

  test('the parameters each route documents still work', async () => {
    assert.equal((await fx.as('agent')('GET', `/v1/operations/${operation}/results?outcome=succeeded&limit=2`)).status, 200)
    assert.equal((await fx.as('reviewer')('GET', `/v1/audit?operation_id=${operation}&level=run&limit=5`)).status, 200)
    assert.equal((await fx.as('agent')('GET', `/v1/selections/${selection.selection_id}/excluded?rule=eu&limit=2`)).status, 200)
    assert.equal((await fx.as('agent')('GET', `/v1/selections/${selection.selection_id}/export?format=ndjson`)).status, 200)
    assert.equal((await fx.as('agent')('GET', '/v1/resources/subscriptions/records/sub_00001?fields=status')).status, 200)
  })
})
