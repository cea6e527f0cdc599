import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ensureDemoData } from '../../src/demo/index.js'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'
import { createTestPostgresDatabase, type TestDatabase } from '../support/stores.js'

/**
 * The CLI's answers named the environment by its label only: with the demo's connector pointed at a PostgreSQL
 * server, `search`, `select` and `plan` still said "in billing-demo (acct 4411, host demo.sqlite (local))", where the
 * review pages say which host the connector reaches and that the label names another. Each answer now says it under
 * its headline, and warns where the label is wrong; a SQLite file (the demo as shipped) adds nothing.
 */
describe('warrant search / select / plan: the host the connector reaches, and a mislabelled environment (real processes, PostgreSQL upstream)', () => {
  let upstream: TestDatabase
  let ws: CliWorkspace
  let host: string
  before(async () => {
    upstream = await createTestPostgresDatabase()
    await ensureDemoData({ url: upstream.url, count: 30 })
    host = new URL(upstream.url).hostname
    ws = await createCliWorkspace({ count: 5, edit: (raw) => void (raw.resources.subscriptions.connector.url = upstream.url) })
  })
  after(async () => {
    await ws?.drop()
    await upstream?.drop()
  })

  const reaches = (stdout: string) => {
    const lines = stdout.split('\n')
    assert.match(lines[1] ?? '', new RegExp(`^  connector reaches: ${host.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`), stdout)
    assert.match(lines[2] ?? '', /^WARNING: the environment's label names host demo\.sqlite \(local\), not .*mislabelled/, stdout)
  }

  test('search, select and plan each say where the connector reaches, under the headline', { timeout: 90_000 }, async () => {
    const search = await ws.warrant(['search', 'subscriptions', '-f', 'status=past_due'])
    assert.equal(search.code, 0, search.stderr)
    reaches(search.stdout)
    const select = await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-q'])
    assert.equal(select.code, 0, select.stderr)
    reaches(select.stdout)
    const selectionId = /selection (sel_[A-Za-z0-9_-]+)/.exec(select.stdout)?.[1]
    assert.ok(selectionId, select.stdout)
    const plan = await ws.warrant(['plan', selectionId, '--action', 'pause_collection', '-p', 'reason=reach test'])
    assert.equal(plan.code, 0, plan.stderr)
    reaches(plan.stdout)
  })
})

describe('warrant search on the demo as shipped (a SQLite file): no reach line', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 20 })
  })
  after(async () => {
    await ws?.drop()
  })
  test('the headline is followed by what it was before', { timeout: 60_000 }, async () => {
    const r = await ws.warrant(['search', 'subscriptions', '-f', 'status=past_due'])
    assert.equal(r.code, 0, r.stderr)
    assert.doesNotMatch(r.stdout, /connector reaches|WARNING/)
  })
})
