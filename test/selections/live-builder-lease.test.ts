import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { after, before, describe, test } from 'node:test'
import { defaultOwner } from '../../src/store/index.js'
import { insertForeignBuildingSelection } from '../support/building-selection.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/**
 * A builder renews its lease from a timer; a long SQLite statement blocks its event loop, the timer does not run,
 * and the lease lapses while the process is alive and still walking. The reaper took any lapsed lease for a dead
 * builder: it marked the selection failed, "killed, crashed or cut off mid-walk", and removed its members under a
 * live walk. A builder proven to be a live process of this machine (its pid runs and started when its name says)
 * now keeps its selection; one whose pid runs a process started at another time (a reused pid) is gone.
 */
const LAPSED = () => new Date(Date.now() - 60_000).toISOString()

/** A real process of this machine that names itself as a builder would, until it is killed. */
async function liveBuilder(): Promise<{ readonly owner: string; kill(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', "import('./src/store/index.ts').then((m) => { console.log(m.defaultOwner()); setInterval(() => {}, 1000) })"], {
    cwd: new URL('../..', import.meta.url),
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [line] = (await once(child.stdout!, 'data')) as [Buffer]
  return {
    owner: line.toString().trim(),
    async kill() {
      child.kill('SIGKILL')
      await once(child, 'exit')
    },
  }
}

describe('the builder reaper and a live builder whose lease lapsed', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 20 })
  })
  after(async () => {
    await fx?.close()
  })

  const state = async (id: string) => (await fx.gateway.store.db.selectFrom('selections').select(['state', 'failure']).where('id', '=', id).executeTakeFirstOrThrow())

  test('another live process of this machine keeps its build; once killed, its build is failed at once', async () => {
    const builder = await liveBuilder()
    try {
      await insertForeignBuildingSelection(fx.gateway.store, 'sel_live_builder', { createdBy: null, origin: null, builder: builder.owner, leaseUntil: LAPSED() })
      assert.deepEqual(await fx.gateway.selections.reapAbandoned(), [], 'a live builder is not declared dead because its lease lapsed')
      assert.equal((await state('sel_live_builder')).state, 'building')
    } finally {
      await builder.kill()
    }
    assert.deepEqual(await fx.gateway.selections.reapAbandoned(), ['sel_live_builder'])
    assert.match((await state('sel_live_builder')).failure!, /no longer runs/)
  })

  test('this process, its loop blocked past its lease, keeps its build', async () => {
    await insertForeignBuildingSelection(fx.gateway.store, 'sel_own_builder', { createdBy: null, origin: null, builder: defaultOwner(), leaseUntil: LAPSED() })
    assert.deepEqual(await fx.gateway.selections.reapAbandoned(), [])
    assert.equal((await state('sel_own_builder')).state, 'building')
  })

  test('a running pid that started at another time than the name says is a reused pid: the build is failed', async () => {
    const parts = defaultOwner().split(':')
    assert.equal(parts.length, 5, `a default name carries the process start: ${parts.join(':')}`)
    parts[4] = String(Number(parts[4]) + 1)
    await insertForeignBuildingSelection(fx.gateway.store, 'sel_reused_pid', { createdBy: null, origin: null, builder: parts.join(':'), leaseUntil: LAPSED() })
    assert.deepEqual(await fx.gateway.selections.reapAbandoned(), ['sel_reused_pid'])
  })
})
