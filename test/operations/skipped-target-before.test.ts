import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { parse as parseYaml } from 'yaml'
import { runWarrant } from '../support/cli-config.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { reviewPageHtml, textOf } from '../support/review-page.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'

/** Runs statements on the demo upstream, wherever the fixture put it. */
async function onUpstream(fx: GatewayFixture, statements: readonly [string, readonly unknown[]][]): Promise<void> {
  if (fx.upstreamUrl.startsWith('sqlite:')) {
    const db = new BetterSqlite3(fx.upstreamUrl.slice('sqlite:'.length))
    try {
      for (const [text, params] of statements) db.prepare(text).run(...params)
    } finally {
      db.close()
    }
    return
  }
  const client = new pg.Client({ connectionString: fx.upstreamUrl })
  await client.connect()
  try {
    for (const [text, params] of statements) {
      let n = 0
      await client.query(text.replace(/\?/g, () => `$${++n}`), [...params])
    }
  } finally {
    await client.end()
  }
}

/**
 * A skipped target's `before` kept the values the selection froze: a record another writer had paused was shown as
 * "read: collection = active" (it was read at write time, paused), and a deleted record as read with its frozen
 * values. `before` now holds what the attempt read: the record as it was at write time, or null when it was gone;
 * the operation page labels it by what it is (read at write time, or as frozen for a target not attempted).
 */
for (const upstream of ['sqlite', 'postgres'] as const) {
  describe(`a skipped target shows what was read at write time (${upstream} upstream)`, () => {
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store: 'sqlite', upstream, count: 400 })
    })
    after(async () => {
      await fx?.close()
    })

    test('version changed: the values read; missing: nothing; the page says which', { timeout: 120_000 }, async () => {
      const agent = fx.as('agent')
      const { selection, plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'subscriptions', { filter: { status: 'past_due', collection: 'active' } }, { type: 'pause_collection', reason: 'walk' })
      const [moved, gone] = selection.records.map((r: any) => r.id) as string[]
      await onUpstream(fx, [
        ["update subscriptions set collection = 'paused', pause_reason = 'by hand', version = version + 1 where id = ?", [moved]],
        ['delete from subscriptions where id = ?', [gone]],
      ])
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `k-before-${upstream}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(operation.counts.skipped, 2, JSON.stringify(operation.counts))
      const skipped = new Map((await allResults(agent, commit.body.operation_id, 'skipped')).map((r) => [r.id, r]))
      assert.equal(skipped.get(moved)?.reason, 'version_changed')
      assert.deepEqual(skipped.get(moved)?.before, { collection: 'paused', pause_reason: 'by hand' }, 'what the write read, not what was frozen')
      assert.equal(skipped.get(gone)?.reason, 'missing')
      assert.equal(skipped.get(gone)?.before, null, 'nothing was read of a record that no longer exists')

      const text = textOf(await reviewPageHtml(fx, `/review/operations/${commit.body.operation_id}?outcome=skipped`))
      assert.match(text, /read at write time: collection = paused/)
      assert.doesNotMatch(text, /read: /, 'no row claims a read it did not make')
      assert.equal(text.match(/read at write time:/g)?.length, 1, 'the missing record shows no values')

      // `warrant operation results` said `{"collection":"active",…} → null`, as if the record had become null
      const raw = parseYaml(readFileSync(new URL('../../config/demo.yaml', import.meta.url), 'utf8')) as Record<string, any>
      raw.store = fx.storeUrl
      raw.resources.subscriptions.connector.url = fx.upstreamUrl
      raw.audit = { key: { file: 'audit.key', create: true } }
      writeFileSync(join(fx.dir, 'cli.json'), JSON.stringify(raw))
      const cli = await runWarrant(['operation', 'results', commit.body.operation_id, '--outcome', 'skipped', '--config', join(fx.dir, 'cli.json')], fx.dir)
      const lines = cli.stdout.split('\n')
      const movedLine = lines.find((l) => l.includes(` ${moved} `))
      assert.match(movedLine ?? '', /read at write time: \{"collection":"paused","pause_reason":"by hand"\}$/, cli.stdout + cli.stderr)
      const goneLine = lines.find((l) => l.includes(` ${gone} `))
      assert.ok(goneLine && !/→|read at write time|as frozen/.test(goneLine), goneLine)
    })
  })
}
