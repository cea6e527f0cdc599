import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createStore } from '../../src/store/index.js'
import { type CliWorkspace, createCliWorkspaceOn } from '../support/cli-config.js'
import { insertForeignBuildingSelection } from '../support/building-selection.js'
import { interruptCliOnceReady } from '../support/cli-interrupt.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * Ctrl-C (or SIGTERM) during `warrant recover SEL` exited with the recovery's row still `building`, and the members
 * it had frozen so far beside it, forever, as `warrant select` did before it removed its own: nothing ever finishes
 * or removes a building row. The interrupted recover now stops its walk and removes its own selection, with the
 * signal's status and an `interrupted` audit row; another process's building recovery of the same selection stays.
 */
for (const kind of STORE_KINDS)
  describe(`an interrupted warrant recover leaves no selection behind (${kind})`, () => {
    let ws: CliWorkspace
    let partial = ''
    before(async () => {
      ws = await createCliWorkspaceOn(kind, { count: 30_000 })
      // the largest selection a recovery takes: 10,000 ids, walked 1,000 a page
      const selected = await ws.warrant(['select', 'subscriptions', '--page-size', '10000', '--max-pages', '1', '--json', '-q'])
      assert.equal(selected.code, 5, selected.stderr)
      partial = (JSON.parse(selected.stdout) as { selection_id: string }).selection_id
    })
    after(async () => {
      await ws?.drop()
    })

    for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143]] as const)
      test(`${signal} mid-walk: exit ${status}, the audit row says interrupted, and no building row or member of it remains`, { timeout: 180_000 }, async () => {
        const origin = JSON.stringify({ kind: 'recovery', selection_id: partial })
        // another instance's recovery of the same selection, mid-walk: its row must survive this process's interrupt
        const other = `sel_other_recovery_${signal.toLowerCase()}`
        const known = await ws.withStore(async (store) => {
          await insertForeignBuildingSelection(store, other, { createdBy: 'prn_someone_else', origin })
          return new Set((await store.db.selectFrom('selections').select('id').execute()).map((r) => r.id))
        })
        const watcher = await createStore({ url: ws.storeUrl })
        let run: Awaited<ReturnType<typeof interruptCliOnceReady>>
        try {
          // interrupted once its own row holds members: the walk is under way, not yet frozen
          run = await interruptCliOnceReady(
            ws.dir,
            ['recover', partial, '--config', ws.configPath],
            async () => {
              const mine = await watcher.db.selectFrom('selections').select('id').where('origin', '=', origin).where('state', '=', 'building').where('id', 'not in', [...known]).execute()
              if (mine.length === 0) return false
              const members = await watcher.db.selectFrom('selection_members').select('ord').where('selection_id', '=', mine[0]!.id).limit(1).execute()
              return members.length > 0
            },
            signal,
          )
        } finally {
          await watcher.close()
        }
        assert.ok(run.interrupted, `the walk ended before it could be interrupted (exit ${run.code}): ${run.stdout}\n${run.stderr}`)
        assert.equal(run.code, status, `exit ${run.code}\n${run.stdout}\n${run.stderr}`)
        assert.equal(run.stdout, '', 'no answer was printed')
        assert.match(run.stderr, /warrant: interrupted/)
        assert.doesNotMatch(run.stderr, /internal error/)
        await ws.withStore(async (store) => {
          const rows = await store.db.selectFrom('selections').select(['id', 'state']).execute()
          const left = rows.filter((r) => !known.has(r.id))
          assert.deepEqual(left, [], 'the interrupted recover removed its own selection row')
          const members = await store.db.selectFrom('selection_members').select('selection_id').where('selection_id', 'not in', [...known]).execute()
          assert.equal(members.length, 0, 'and every member it had frozen')
          assert.equal(rows.find((r) => r.id === other)?.state, 'building', "another process's building recovery is not touched")
          const audit = await store.db.selectFrom('audit_events').select('summary').where('action', '=', 'cli:recover').execute()
          assert.equal(JSON.parse(audit[audit.length - 1]!.summary).outcome, 'interrupted')
        })
      })
  })
