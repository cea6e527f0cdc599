import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { call, type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { runWarrant } from '../support/cli-config.js'
import { auditRowsOf, principalRow as principalRowOf } from '../support/principal-rows.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * `warrant principal disable|enable|list` as a real subprocess, beside a gateway serving the same store in this
 * process: what the command writes is what the running gateway reads on its next request.
 */
for (const kind of STORE_KINDS) {
  describe(`warrant principal (a real subprocess beside a running gateway, ${kind} store)`, () => {
    let fx: GatewayFixture
    let config: string
    const warrant = (args: readonly string[], env: Record<string, string | undefined> = {}) => runWarrant([...args, '-c', config], fx.dir, env)
    const principalRow = (name: string) => principalRowOf(fx, name)
    const rowsOf = (action: string) => auditRowsOf(fx, action)
    const mcpSearch = (token: string) =>
      call(fx.base, 'POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_resources', arguments: {} } }, { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream' })

    const tokenFile = (name: string, token: string) => {
      const file = join(fx.dir, `${name}.token`)
      writeFileSync(file, token, { mode: 0o600 })
      return file
    }

    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 300 })
      config = join(fx.dir, 'warrant.json')
      writeFileSync(config, JSON.stringify(fx.config))
    })
    after(async () => {
      await fx?.close()
    })

    test('disable: the running gateway refuses the next HTTP and MCP call 401 naming the disabled principal; once audited; a second disable changes nothing; enable restores it', async () => {
      assert.equal((await fx.as('agent')('GET', '/v1/resources')).status, 200)
      const disabled = await warrant(['principal', 'disable', 'test-agent', '--reason', 'looping on pause_collection'])
      assert.equal(disabled.code, 0, disabled.stderr)
      assert.match(disabled.stdout, /^disabled principal "test-agent" \(agent, prn_\S+\) at \S+: reason "looping on pause_collection"/m)

      const http = await fx.as('agent')('GET', '/v1/resources')
      assert.equal(http.status, 401, JSON.stringify(http.body))
      assert.equal(http.body.error.code, 'unauthenticated')
      assert.equal(http.body.error.details.reason, 'principal_disabled')
      assert.match(http.body.error.message, /principal "test-agent" is disabled \(since \S+\)/)
      const mcp = await mcpSearch(fx.tokens.agent)
      assert.equal(mcp.status, 401, JSON.stringify(mcp.body))
      assert.equal(mcp.body.error.details.reason, 'principal_disabled')
      // the other principals are untouched
      assert.equal((await fx.as('reviewer')('GET', '/v1/resources')).status, 200)

      const row = await principalRow('test-agent')
      assert.ok(row.disabled_at, 'disabled_at is set')
      const [entry, ...others] = await rowsOf('cli:principal disable')
      assert.equal(others.length, 0)
      assert.equal(entry!.summary.outcome, 'ok')
      assert.match(entry!.principal ?? '', /^local:/, 'the local operator ran it')
      assert.deepEqual(
        { ...entry!.details, actor: undefined },
        { actor: undefined, principal_id: row.id, principal_name: 'test-agent', principal_role: 'agent', changed: true, disabled_at: row.disabled_at, reason: 'looping on pause_collection' },
      )

      // the listings say so, rather than showing its tokens as live
      const tokens = await warrant(['token', 'list'])
      assert.match(tokens.stdout, new RegExp(`principal=test-agent .*PRINCIPAL DISABLED ${row.disabled_at}`))
      const listed = await warrant(['principal', 'list'])
      assert.equal(listed.code, 0, listed.stderr)
      assert.match(listed.stdout, new RegExp(`^test-agent +agent +${row.id} +DISABLED ${row.disabled_at}$`, 'm'))
      assert.match(listed.stdout, /^alice +reviewer +prn_\S+ +enabled$/m)

      const again = await warrant(['principal', 'disable', 'test-agent', '--reason', 'still looping'])
      assert.equal(again.code, 0, again.stderr)
      assert.match(again.stdout, new RegExp(`^principal "test-agent" was already disabled at ${row.disabled_at}: nothing changed`, 'm'))
      assert.equal((await principalRow('test-agent')).disabled_at, row.disabled_at, 'the first disable time stands')
      const rows = await rowsOf('cli:principal disable')
      assert.equal(rows.length, 2, 'every command leaves its row')
      assert.equal(rows[1]!.details.changed, false, 'the second row records that nothing changed')

      const enabled = await warrant(['principal', 'enable', 'test-agent', '--reason', 'fixed the loop'])
      assert.equal(enabled.code, 0, enabled.stderr)
      assert.match(enabled.stdout, /^enabled principal "test-agent"/m)
      assert.equal((await principalRow('test-agent')).disabled_at, null)
      assert.equal((await fx.as('agent')('GET', '/v1/resources')).status, 200, 'its token works again')
      const [enableRow] = await rowsOf('cli:principal enable')
      assert.equal(enableRow!.details.changed, true)
      assert.equal(enableRow!.details.reason, 'fixed the loop')
      assert.equal(enableRow!.details.was_disabled_at, row.disabled_at)
    })

    test('a disabled reviewer\'s approval stops counting at once: the commit is 403 not_approved (approver_disabled); enabled, it stays void (approver_disabled_since)', async () => {
      const selection = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', region: 'apac' } })
      assert.equal(selection.status, 201, JSON.stringify(selection.body))
      const plan = (await fx.as('agent')('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'disable test' } } })).body
      assert.equal(plan.approval.reviewers_needed, 1, JSON.stringify(plan.approval))
      const approved = await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      assert.equal(approved.status, 201, JSON.stringify(approved.body))
      assert.equal((await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)).body.state, 'approved')

      const disabled = await warrant(['principal', 'disable', 'alice', '--reason', 'laptop stolen'])
      assert.equal(disabled.code, 0, disabled.stderr)
      const shown = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
      assert.equal(shown.body.approvals[0].not_counted, 'approver_disabled')
      const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `disabled-${kind}` })
      assert.equal(commit.status, 403, JSON.stringify(commit.body))
      assert.equal(commit.body.error.code, 'not_approved')
      assert.equal(commit.body.error.details.reason, 'approver_disabled')

      // its own token cannot lift it: refused like any request of it, nothing changed
      const self = await warrant(['principal', 'enable', 'alice', '--token-file', tokenFile('alice', fx.tokens.reviewer)])
      assert.equal(self.code, 3, self.stderr)
      assert.match(self.stderr, /unauthenticated: the token's principal "alice" is disabled/)
      assert.ok((await principalRow('alice')).disabled_at, 'still disabled')
      // a token given names who acted in the audit row
      const enabled = await warrant(['principal', 'enable', 'alice', '--token-file', tokenFile('bob', fx.tokens.reviewer2)])
      assert.equal(enabled.code, 0, enabled.stderr)
      const byBob = (await rowsOf('cli:principal enable')).at(-1)!
      assert.equal(byBob.principal, (await principalRow('bob')).id)
      assert.deepEqual([byBob.details.principal_name, byBob.details.changed], ['alice', true])
      // given before the disable, maybe by whoever had the laptop: an enable does not bring it back
      const after = (await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)).body
      assert.equal(after.approvals[0].not_counted, 'approver_disabled_since')
      assert.equal(after.state, 'pending')
      assert.match(enabled.stdout, /the approvals it gave before \S+, and those given on plans it proposed before then, stay void/)
    })

    test('wrong input changes nothing: an unknown name, a missing or blank reason (exit 2), and no audit row claims a change', async () => {
      const before = await fx.gateway.store.db.selectFrom('principals').select(['name', 'disabled_at']).orderBy('name').execute()
      const unknown = await warrant(['principal', 'disable', 'nobody', '--reason', 'x'])
      assert.equal(unknown.code, 2, unknown.stderr)
      assert.match(unknown.stderr, /not_found: no principal named "nobody"/)
      const cased = await warrant(['principal', 'disable', 'Alice', '--reason', 'x'])
      assert.equal(cased.code, 2)
      assert.match(cased.stderr, /no principal named "Alice" \(did you mean "alice"\?\)/)
      const blank = await warrant(['principal', 'disable', 'bob', '--reason', '   '])
      assert.equal(blank.code, 2, blank.stderr)
      assert.match(blank.stderr, /invalid_request: give a reason \(--reason\)/)
      const missing = await warrant(['principal', 'disable', 'bob'])
      assert.equal(missing.code, 2, missing.stderr)
      assert.match(missing.stderr, /--reason/)
      assert.deepEqual(await fx.gateway.store.db.selectFrom('principals').select(['name', 'disabled_at']).orderBy('name').execute(), before)
      for (const r of await rowsOf('cli:principal disable'))
        if (r.summary.outcome === 'refused') assert.equal(r.details?.changed, undefined, 'a refusal records no change')
    })

    test('disabling the last enabled admin is done, with a warning naming how to get one back', async () => {
      const disabled = await warrant(['principal', 'disable', 'root', '--reason', 'rotating admins', '--json'])
      assert.equal(disabled.code, 0, disabled.stderr)
      assert.match(disabled.stderr, /warning: no enabled admin remains/)
      const body = JSON.parse(disabled.stdout)
      assert.equal(body.changed, true)
      assert.equal(body.enabled_admins_left, 0)
      assert.equal((await fx.as('admin')('GET', '/v1/audit?limit=1')).status, 401)
      const enabled = await warrant(['principal', 'enable', 'root'])
      assert.equal(enabled.code, 0, enabled.stderr)
      assert.equal((await fx.as('admin')('GET', '/v1/audit?limit=1')).status, 200)
    })
  })
}
