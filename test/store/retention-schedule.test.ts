import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import { parseConfig } from '../../src/config/index.js'
import { createLogger, openGateway, PRUNE_ACTION, SCHEDULED_SURFACE, scheduleRetentionSweeps, sweepRetention, type Gateway } from '../../src/gateway/index.js'
import type { PruneReport } from '../../src/selections/index.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { until } from '../support/until.js'

/**
 * Retention on a schedule (retention.sweep_interval_minutes, off unless set): a long-running gateway sweeps at start
 * and every interval, audits only sweeps that did something, yields the loop between its statements (/health is
 * answered between them), stops between statements on close with its row written and nothing after, and two gateways
 * sweeping one store at once prune each selection once.
 */
const DAY = 86_400_000
const LONG_AGO = '2001-01-01T00:00:00.000Z'
const log = createLogger({ level: 'silent' })

/** Tells `onStatement` of every statement (its tree as JSON) as it is sent. */
function watch(onStatement: (tree: string, kind: string) => void): KyselyPlugin {
  return {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      onStatement(JSON.stringify(args.node), args.node.kind)
      return args.node
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return args.result
    },
  }
}
const isMemberDelete = (tree: string, kind: string) => kind === 'DeleteQueryNode' && tree.includes('"selection_members"')

test('a bad retention.sweep_interval_minutes is a config error naming the key', () => {
  const raw = (value: unknown) => ({ store: 'sqlite::memory:', resources: {}, retention: { sweep_interval_minutes: value } })
  for (const bad of [0, -5, 1.5, 'hourly', 20_000]) assert.throws(() => parseConfig(raw(bad), 'test config'), /retention\.sweep_interval_minutes/, String(bad))
  assert.equal(parseConfig({ store: 'sqlite::memory:', resources: {} }, 'test config').retention.sweep_interval_minutes, undefined, 'off unless set')
})

for (const kind of STORE_KINDS) {
  describe(`retention sweeps on a schedule (${kind} store)`, () => {
    const env = demoGatewayFor({ store: kind, count: 2000 })
    const opened: Gateway[] = []
    let unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => void unhandled.push(reason)
    before(() => process.on('unhandledRejection', onUnhandled))
    after(async () => {
      process.off('unhandledRejection', onUnhandled)
      for (const g of opened) await g.close().catch(() => undefined)
    })
    const expiredSelections = async (filters: object[]) => {
      const ids: string[] = []
      for (const filter of filters) {
        const made = await env.fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter })
        assert.equal(made.status, 201, JSON.stringify(made.body))
        ids.push(made.body.selection_id)
      }
      await env.fx.gateway.store.db.updateTable('selections').set({ expires_at: LONG_AGO }).where('id', 'in', ids).execute()
      return ids
    }
    const memberRows = async (ids: string[]) =>
      Number((await env.fx.gateway.store.db.selectFrom('selection_members').select((eb) => eb.fn.countAll().as('n')).where('selection_id', 'in', ids).executeTakeFirstOrThrow()).n)
    const scheduledRows = async () => (await env.fx.gateway.store.db.selectFrom('audit_events').select(['summary', 'details']).where('action', '=', PRUNE_ACTION).where('surface', '=', SCHEDULED_SURFACE).execute())
    const second = async (edit: (retention: Record<string, unknown>) => void, executors: boolean) => {
      const retention: Record<string, unknown> = { ...env.fx.config.retention }
      edit(retention)
      const gateway = await openGateway({ config: { ...env.fx.config, retention: retention as any }, log, executors, instanceId: `second-${opened.length}` })
      opened.push(gateway)
      return gateway
    }

    test('a gateway given sweep_interval_minutes prunes at start; close stops it; an empty sweep writes no audit row', async () => {
      const ids = await expiredSelections([{ status: 'canceled' }])
      const gateway = await second((r) => (r.sweep_interval_minutes = 60), true)
      const db = env.fx.gateway.store.db
      await until(async () => (await memberRows(ids)) === 0, 'the scheduled sweep at start')
      await until(async () => (await scheduledRows()).length === 1, 'its audit row')
      await gateway.close()
      const rows = await scheduledRows()
      assert.deepEqual(JSON.parse(rows[0]!.details!).pruned.map((p: any) => p.selection_id), ids)
      assert.ok((await db.selectFrom('selections').select('members_pruned_at').where('id', '=', ids[0]!).executeTakeFirstOrThrow()).members_pruned_at)

      // nothing left: sweeps run, none is audited
      const reports: PruneReport[] = []
      const schedule = scheduleRetentionSweeps(env.fx.gateway, { everyMs: 10, olderThanMs: 30 * DAY, log, onSwept: (r) => reports.push(r) })
      await until(() => reports.length >= 3, 'three empty sweeps')
      await schedule.stop()
      assert.ok(reports.every((r) => r.selections === 0 && r.finished.length === 0))
      assert.equal((await scheduledRows()).length, 1, 'no audit row for a sweep that found nothing')
      assert.deepEqual(unhandled, [])
    })

    test('the sweep yields between statements: /health is answered between its deletes', async () => {
      const ids = await expiredSelections([{}])
      const timeline: string[] = []
      const db = env.fx.gateway.store.db.withPlugin(watch((tree, k) => (isMemberDelete(tree, k) ? timeline.push('delete') : undefined)))
      let polling = true
      const poller = (async () => {
        while (polling) {
          const res = await fetch(`${env.fx.base}/health`)
          await res.text()
          if (res.status === 200 && timeline.length > 0) timeline.push('health')
        }
      })()
      const reports: PruneReport[] = []
      const schedule = scheduleRetentionSweeps({ store: { ...env.fx.gateway.store, db }, audit: env.fx.gateway.audit }, { everyMs: 60_000, olderThanMs: 30 * DAY, log, batchRows: 20, onSwept: (r) => reports.push(r) })
      try {
        await until(() => reports.length === 1, 'the sweep')
      } finally {
        polling = false
        await poller
        await schedule.stop()
      }
      assert.equal(reports[0]!.members, 2000)
      assert.equal(await memberRows(ids), 0)
      const first = timeline.indexOf('delete')
      const last = timeline.lastIndexOf('delete')
      const answeredBetween = timeline.slice(first, last).filter((e) => e === 'health').length
      assert.ok(answeredBetween >= 3, `/health answered ${answeredBetween} times between the first and last of ${timeline.filter((e) => e === 'delete').length} deletes`)
    })

    test('stopped mid-sweep (gateway close): its row is written, nothing after, the next sweep finishes it', async () => {
      const ids = await expiredSelections([{}])
      let stop: Promise<void> | null = null
      let stopped = false
      const late: string[] = []
      const reports: PruneReport[] = []
      // eslint-disable-next-line prefer-const
      let schedule: ReturnType<typeof scheduleRetentionSweeps>
      const db = env.fx.gateway.store.db.withPlugin(
        watch((tree, k) => {
          if (stopped) late.push(tree.slice(0, 200))
          if (isMemberDelete(tree, k) && stop === null) stop = Promise.resolve().then(() => schedule.stop())
        }),
      )
      schedule = scheduleRetentionSweeps({ store: { ...env.fx.gateway.store, db }, audit: env.fx.gateway.audit }, { everyMs: 10, olderThanMs: 30 * DAY, log, batchRows: 20, onSwept: (r) => reports.push(r) })
      await until(() => stop !== null, 'the first delete')
      await stop
      stopped = true
      await new Promise((r) => setTimeout(r, 200))
      assert.deepEqual(late, [], 'no statement once stop() resolved')
      assert.equal(reports.length, 1)
      assert.equal(reports[0]!.stopped, true)
      assert.ok((await memberRows(ids)) > 0, 'stopped before all its rows went')
      const row = (await scheduledRows()).at(-1)!
      assert.equal(JSON.parse(row.details!).stopped, true)
      const next = await sweepRetention(env.fx.gateway, { olderThanMs: 30 * DAY, dryRun: false, actor: null, surface: 'cli' })
      assert.deepEqual(next.finished.map((f) => f.selection_id), ids)
      assert.equal(await memberRows(ids), 0)
      assert.deepEqual(unhandled, [])
    })

    test('two gateways sweeping one store at once prune each selection once', async () => {
      const ids = await expiredSelections([{ status: 'active' }, { status: 'past_due' }, { status: 'trialing' }, { status: 'canceled' }, { region: 'eu' }, { region: 'us' }])
      const before = await memberRows(ids)
      const other = await second(() => undefined, false)
      const sweep = (g: Pick<Gateway, 'store' | 'audit'>) => sweepRetention(g, { olderThanMs: 30 * DAY, dryRun: false, actor: null, surface: 'cli', batchRows: 25 })
      const [a, b] = await Promise.all([sweep(env.fx.gateway), sweep(other)])
      const listed = [...a.pruned, ...b.pruned].map((p) => p.selection_id)
      assert.deepEqual([...listed].sort(), [...ids].sort(), 'each selection pruned by exactly one sweep')
      const counted = [...a.pruned, ...b.pruned, ...a.finished, ...b.finished].reduce((n, p) => n + p.members, 0)
      assert.equal(await memberRows(ids), 0)
      assert.ok(a.members + b.members <= before && counted === before, `rows counted ${counted}, stored ${before}`)
      assert.deepEqual(unhandled, [])
    })
  })
}
