import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import BetterSqlite3 from 'better-sqlite3'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { caller, selectProposeApprove, waitForOperation } from '../operations/support/flow.js'
import { startUsersUpstream, usersResourceConfig, type UsersUpstream } from '../operations/support/users-upstream.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A plan whose rendered `set` gives a field a value of another type than declared (a string param "abc" into the
 * number field amount_due) used to be accepted (201), previewed as "0 → abc", approved and committed; only the
 * executor then refused every target, and the operation halted. It is the agent's bad input: a 400 at proposal,
 * naming the field, the value's type and the declared type, with no plan stored. Every surface shares the rule
 * (HTTP, MCP, CLI), sql and http upstreams alike; a compensation, which restores what the records held, is exempt.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

const EXTRA_ACTIONS = {
  set_amount: { description: 'set the amount due', params: { amount: { type: 'string' } }, set: { amount_due: '{{params.amount}}' } },
  set_amount_number: { description: 'set the amount due', params: { amount: { type: 'number' } }, set: { amount_due: '{{params.amount}}' }, reversible: true },
  set_version_to: { description: 'a number into an integer field', params: { v: { type: 'number' } }, set: { collection: 'active', updated_at: '{{params.v}}' } },
  flag_collection: { description: 'a boolean into a string field', params: { on: { type: 'boolean' } }, set: { collection: '{{params.on}}' } },
  number_reason: { description: 'a number into a string field', params: { n: { type: 'number' } }, set: { pause_reason: '{{params.n}}' } },
  id_as_amount: { description: 'the id into a number field', set: { amount_due: '{{id}}' } },
  stamp: { description: 'a string param into a timestamp field', params: { at: { type: 'string' } }, set: { updated_at: '{{params.at}}' } },
  maybe_reason: { description: 'an optional param: absent renders null', params: { reason: { type: 'string', required: false } }, set: { pause_reason: '{{params.reason}}' } },
}

/** The ledger files' folders, removed once their gateway is closed (they were left in the temp folder). */
const ledgerDirs: string[] = []

/**
 * A ledger whose balance (a number field) holds 2^53 + 1 in a 64-bit integer column: it is read as its exact
 * digits, a string, a value the type rule would refuse, yet the value the record legitimately holds.
 */
function ledgerResource(environment: unknown): Record<string, unknown> {
  const dir = mkdtempSync(join(tmpdir(), 'warrant-ledger-'))
  ledgerDirs.push(dir)
  const file = join(dir, 'ledger.db')
  const db = new BetterSqlite3(file)
  db.exec('create table ledger (id text primary key, version integer not null, balance integer)')
  db.exec(`insert into ledger values ('r1', 1, 9007199254740993)`)
  db.close()
  return {
    environment,
    connector: { kind: 'sql', url: `sqlite:${file}`, table: 'ledger' },
    fields: { id: 'string', version: 'integer', balance: 'number' },
    id_field: 'id',
    version_field: 'version',
    review_fields: ['id', 'balance'],
    actions: { set_balance: { description: 'set the balance', params: { b: { type: 'number' } }, set: { balance: '{{params.b}}' }, reversible: true } },
  }
}

for (const kind of STORE_KINDS) {
  describe(`a set value of another type than its field's is refused at proposal (sql upstream, ${kind} store)`, () => {
    let fx: GatewayFixture
    let selectionId: string
    before(async () => {
      fx = await startDemoGateway({
        store: kind,
        count: 300,
        edit: (raw) => {
          Object.assign(raw.resources.subscriptions.actions, structuredClone(EXTRA_ACTIONS))
          raw.resources.ledger = ledgerResource(raw.resources.subscriptions.environment)
        },
      })
      const sel = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'trialing', region: 'us' } })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      assert.ok(sel.body.count > 0)
      selectionId = sel.body.selection_id
    })
    after(async () => {
      await fx?.close()
      for (const dir of ledgerDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
    })

    const storedPlans = async () => (await fx.gateway.store.db.selectFrom('plans').select('id').where('selection_id', '=', selectionId).execute()).length

    test('a string into a number field: 400 invalid_request naming the field, the types, and nothing stored', async () => {
      const plan = await fx.as('agent')('POST', `/v1/selections/${selectionId}/plans`, { action: { type: 'set_amount', params: { amount: 'abc' } } })
      assert.equal(plan.status, 400, JSON.stringify(plan.body))
      assert.equal(plan.body.error.code, 'invalid_request')
      assert.match(plan.body.error.message, /"amount_due", a number field, to a string; it takes a finite number/)
      assert.deepEqual(plan.body.error.details, { action: 'set_amount', field: 'amount_due', declared_type: 'number', value_type: 'a string' })
      assert.equal(await storedPlans(), 0, 'no plan row is stored')
      // even a numeric-looking string: the sql write refuses it too ("a number field, to a value that is not a number")
      const digits = await fx.as('agent')('POST', `/v1/selections/${selectionId}/plans`, { action: { type: 'set_amount', params: { amount: '12.5' } } })
      assert.equal(digits.status, 400, JSON.stringify(digits.body))
    })

    test('a boolean or a number into a string field, the id into a number field, a number into a timestamp, a non-instant or a zoneless time into a timestamp: each 400', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ type: 'flag_collection', params: { on: true } }, /"collection", a string field, to a boolean/],
        [{ type: 'number_reason', params: { n: 7 } }, /"pause_reason", a string field, to a number/],
        [{ type: 'id_as_amount' }, /"amount_due", a number field, to a string/],
        [{ type: 'set_version_to', params: { v: 3 } }, /"updated_at", a timestamp field, to a number/],
        [{ type: 'stamp', params: { at: 'tomorrow' } }, /"updated_at", a timestamp field, to a string that names no instant/],
        // local time of which zone? the write would store it as UTC, a guess (as a filter value, it is refused too)
        [{ type: 'stamp', params: { at: '2024-06-01T09:00:00' } }, /"updated_at", a timestamp field, to a date-time without a zone .*Z or an offset/],
      ]
      for (const [action, message] of cases) {
        const plan = await fx.as('agent')('POST', `/v1/selections/${selectionId}/plans`, { action })
        assert.equal(plan.status, 400, `${JSON.stringify(action)}: ${JSON.stringify(plan.body)}`)
        assert.equal(plan.body.error.code, 'invalid_request')
        assert.match(plan.body.error.message, message)
      }
      assert.equal(await storedPlans(), 0)
    })

    test('values of the declared type are proposed as before: a number, an instant, and null (an absent optional param)', async () => {
      const agent = fx.as('agent')
      for (const action of [
        { type: 'set_amount_number', params: { amount: 12.5 } },
        { type: 'stamp', params: { at: '2024-06-01T12:00:00Z' } },
        { type: 'maybe_reason' },
        { type: 'pause_collection', params: { reason: 'x' } },
      ]) {
        const plan = await agent('POST', `/v1/selections/${selectionId}/plans`, { action })
        assert.equal(plan.status, 201, `${JSON.stringify(action)}: ${JSON.stringify(plan.body)}`)
      }
    })

    test('a compensation restoring the before-values is still proposed', async () => {
      const agent = fx.as('agent')
      const action = { type: 'set_amount_number', amount: 1 }
      const { plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'subscriptions', { filter: { status: 'trialing', region: 'eu' } }, action)
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `amount-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const op = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(op.state, 'succeeded', JSON.stringify(op))
      const undo = await agent('POST', `/v1/operations/${op.operation_id}/compensation`)
      assert.equal(undo.status, 201, JSON.stringify(undo.body))
    })

    test('a compensation restoring a before-value the type rule would refuse (a 64-bit integer as its exact digits) is still proposed', async () => {
      const token = (await fx.gateway.principals.issue({ name: 'ledger-agent', role: 'agent', scopes: { resources: ['ledger'], actions: '*' } })).token
      const agent = caller(fx.base, token)
      const { plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'ledger', { filter: { id: 'r1' } }, { type: 'set_balance', b: 1 })
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `balance-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const op = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(op.state, 'succeeded', JSON.stringify(op))
      const undo = await agent('POST', `/v1/operations/${op.operation_id}/compensation`)
      assert.equal(undo.status, 201, JSON.stringify(undo.body))
      assert.deepEqual(undo.body.changes.summary.find((s: any) => s.field === 'balance').after, '9007199254740993')
    })
  })
}

describe('the MCP propose_change tool and `warrant plan` give the same refusal (sqlite store)', () => {
  let fx: GatewayFixture
  let configFile: string
  let selectionId: string
  before(async () => {
    let raw: Record<string, any> = {}
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 100,
      edit: (config) => {
        Object.assign(config.resources.subscriptions.actions, structuredClone(EXTRA_ACTIONS))
        raw = config
      },
    })
    configFile = join(fx.dir, 'warrant.json')
    writeFileSync(configFile, JSON.stringify(raw, null, 2))
    const sel = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'trialing' } })
    assert.equal(sel.status, 201, JSON.stringify(sel.body))
    selectionId = sel.body.selection_id
  })
  after(async () => {
    await fx?.close()
  })

  test('MCP: propose_change answers the refusal invalid_request naming the field', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${fx.tokens.agent}` } } })
    const client = new Client({ name: 'set-types-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const result: any = await client.callTool({ name: 'propose_change', arguments: { selection_id: selectionId, action: { type: 'set_amount', params: { amount: 'abc' } } } })
      assert.equal(result.isError, true, JSON.stringify(result))
      assert.equal(result.structuredContent.error.code, 'invalid_request')
      assert.match(result.structuredContent.error.message, /"amount_due", a number field, to a string/)
    } finally {
      await client.close()
    }
  })

  test('CLI: warrant plan exits non-zero with the refusal on stderr, no stack', async () => {
    const tokenFile = join(fx.dir, 'agent.token')
    writeFileSync(tokenFile, fx.tokens.agent, { mode: 0o600 })
    const env = { ...process.env }
    delete env.WARRANT_TOKEN
    delete env.WARRANT_CONFIG
    const run = await new Promise<{ code: number; stderr: string }>((resolve) => {
      const args = ['--import', 'tsx', join(ROOT, 'src/cli/bin.ts'), 'plan', selectionId, '-a', 'flag_collection', '-p', 'on=true', '-c', configFile, '--token-file', tokenFile]
      execFile(process.execPath, args, { cwd: ROOT, env, timeout: 60_000 }, (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }))
    })
    assert.notEqual(run.code, 0)
    assert.match(run.stderr, /invalid_request: action "flag_collection" would set "collection", a string field, to a boolean/)
    assert.doesNotMatch(run.stderr, /\n\s+at /)
  })
})

for (const kind of STORE_KINDS) {
  describe(`the same rule on an http upstream, where no connector check stood behind it (${kind} store)`, () => {
    let upstream: UsersUpstream
    let fx: GatewayFixture
    before(async () => {
      upstream = await startUsersUpstream(6)
      fx = await startDemoGateway({
        store: kind,
        count: 20,
        edit: (config) => {
          const users = usersResourceConfig(upstream.origin) as any
          users.actions.set_role.reversible = true
          users.actions.flag_role = { ...structuredClone(users.actions.set_role), params: { admin: { type: 'boolean' } }, set: { role: '{{params.admin}}' } }
          config.resources.users = users
        },
      })
    })
    after(async () => {
      await fx?.close()
      await upstream?.close()
    })

    test('a boolean into the string field role: 400 at proposal, and nothing is sent upstream', async () => {
      const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: '*' } })).token
      const agent = caller(fx.base, token)
      const sel = await agent('POST', '/v1/resources/users/selections', { filter: { status: 'active' } })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: { type: 'flag_role', params: { admin: true } } })
      assert.equal(plan.status, 400, JSON.stringify(plan.body))
      assert.match(plan.body.error.message, /"role", a string field, to a boolean/)
      assert.equal(upstream.totalWrites(), 0)
    })
  })
}
