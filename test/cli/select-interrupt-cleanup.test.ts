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

    /**
     * SIGKILL runs no cleanup: the killed select's row stayed `building` forever, with every member it had frozen,
     * and looking its id up said only `not_found`. The next process to open the store learns the builder is gone
     * (a process of this machine that no longer runs; elsewhere, a lease it stopped renewing), marks the selection
     * `failed` with that reason and removes its members; a plan on it is refused saying why. Another process's build
     * whose lease is live stays `building`; one whose lease ended is failed too.
     */
    test('SIGKILL mid-walk: the next process marks the selection failed with the reason, removes its members, and refuses a plan on it', { timeout: 120_000 }, async () => {
      const live = 'sel_other_host_live'
      const gone = 'sel_other_host_gone'
      const known = await ws.withStore(async (store) => {
        await store.migrate()
        const soon = new Date(Date.now() + 3_600_000).toISOString()
        await insertForeignBuildingSelection(store, live, { createdBy: null, origin: null, builder: 'elsewhere:1:aaaa:bbbb', leaseUntil: soon })
        await insertForeignBuildingSelection(store, gone, { createdBy: null, origin: null, builder: 'elsewhere:2:cccc:dddd', leaseUntil: new Date(Date.now() - 1000).toISOString() })
        return new Set((await store.db.selectFrom('selections').select('id').execute()).map((r) => r.id))
      })
      const killed = await interruptCliWhen(ws.dir, ['select', 'subscriptions', '--page-size', '10', '--config', ws.configPath], /[1-9]\d* page\(s\) read/, 'SIGKILL')
      assert.equal(killed.code, null, 'killed by the signal')
      const id = await ws.withStore(async (store) => {
        const rows = await store.db.selectFrom('selections').select(['id', 'state']).where('id', 'not in', [...known]).execute()
        assert.equal(rows.length, 1, JSON.stringify(rows))
        assert.equal(rows[0]!.state, 'building', 'SIGKILL left its row as it was')
        return rows[0]!.id
      })
      const plan = await ws.warrant(['plan', id, '--action', 'pause_collection', '--param', 'reason=x'])
      assert.equal(plan.code, 3, `${plan.stdout}\n${plan.stderr}`)
      assert.match(plan.stderr, /conflict/)
      assert.match(plan.stderr, new RegExp(`selection ${id} was never finished: its builder, process \\S+ no longer runs`))
      assert.match(plan.stderr, /can never be reviewed, planned or committed/)
      assert.doesNotMatch(plan.stderr, /internal error/)
      await ws.withStore(async (store) => {
        const rows = await store.db.selectFrom('selections').select(['id', 'state', 'failure']).where('id', 'in', [id, live, gone]).orderBy('id').execute()
        const byId = new Map(rows.map((r) => [r.id, r]))
        assert.equal(byId.get(id)?.state, 'failed')
        assert.match(byId.get(id)?.failure ?? '', /no longer runs .*its members were removed/)
        assert.equal(byId.get(gone)?.state, 'failed', 'a lease that ended is a builder gone')
        assert.match(byId.get(gone)?.failure ?? '', /stopped renewing its lease/)
        assert.equal(byId.get(live)?.state, 'building', 'a live lease on another host is left alone')
        const members = await store.db.selectFrom('selection_members').select('selection_id').where('selection_id', 'in', [id, gone]).execute()
        assert.equal(members.length, 0, 'the killed build left no member behind')
      })
    })
  })
