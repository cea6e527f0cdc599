import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type CliWorkspace, createCliWorkspaceOn } from '../support/cli-config.js'
import { insertForeignBuildingSelection } from '../support/building-selection.js'
import { interruptCliWhen } from '../support/cli-interrupt.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * Ctrl-C (or SIGTERM) during `warrant select` exited with the row it had inserted still `building`, and every
 * member it had frozen so far left beside it, forever: nothing ever finishes or removes a building row. The
 * interrupted select now removes its own selection (row, members, exclusions) before it exits, still with the
 * signal's status and an `interrupted` audit row. A building row of another process (a second gateway on a
 * shared store, mid-walk) is left as it is.
 */
for (const kind of STORE_KINDS)
  describe(`an interrupted warrant select leaves no selection behind (${kind})`, () => {
    let ws: CliWorkspace
    before(async () => {
      ws = await createCliWorkspaceOn(kind, { count: 20_000 })
    })
    after(async () => {
      await ws?.drop()
    })

    for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143]] as const)
      test(`${signal}: exit ${status}, the audit row says interrupted, and no building row or member of it remains`, { timeout: 120_000 }, async () => {
        // another instance's walk in progress on the same store: its row must survive this process's interrupt
        const other = `sel_other_instance_${signal.toLowerCase()}`
        let before: { id: string }[] = []
        const interruptedRun = async () => {
          await ws.withStore(async (store) => {
            await store.migrate()
            before = await store.db.selectFrom('selections').select('id').execute()
            await insertForeignBuildingSelection(store, other, { createdBy: null, origin: null })
          })
          return interruptCliWhen(ws.dir, ['select', 'subscriptions', '--page-size', '10', '--config', ws.configPath], /[1-9]\d* page\(s\) read/, signal)
        }
        const { code, stdout, stderr } = await interruptedRun()
        assert.equal(code, status, `exit ${code}\n${stdout}\n${stderr}`)
        assert.equal(stdout, '', 'no answer was printed')
        assert.match(stderr, /warrant: interrupted/)
        assert.doesNotMatch(stderr, /internal error/)
        await ws.withStore(async (store) => {
          const known = new Set([...before.map((r) => r.id), other])
          const rows = await store.db.selectFrom('selections').select(['id', 'state']).execute()
          const left = rows.filter((r) => !known.has(r.id))
          assert.deepEqual(left, [], 'the interrupted select removed its own selection row')
          const members = await store.db.selectFrom('selection_members').select('selection_id').where('selection_id', 'not in', [...known]).execute()
          assert.equal(members.length, 0, 'and every member it had frozen')
          const mine = rows.find((r) => r.id === other)
          assert.equal(mine?.state, 'building', "another process's building row is not touched")
          const audit = await store.db.selectFrom('audit_events').select('summary').where('action', '=', 'cli:select').execute()
          assert.equal(JSON.parse(audit[audit.length - 1]!.summary).outcome, 'interrupted')
        })
      })
  })
