import { Worker } from 'node:worker_threads'
import { startDemoGateway, type GatewayFixture } from '../../support/gateway-fixture.js'

/**
 * Another connection holding a SQLite file's write lock (BEGIN IMMEDIATE; or, as `begin` says, another lock: a
 * reader's SHARED lock, `BEGIN; SELECT …`, which keeps a rollback journal's COMMIT waiting), in a worker thread:
 * better-sqlite3 waits for a lock synchronously, which would block the test's own thread. `held` settles once the lock is taken;
 * `release()` commits and closes, settling once done; `terminate()` ends the worker whatever its state.
 */
export function holdSqliteWriteLock(file: string, begin = 'BEGIN IMMEDIATE'): { readonly held: Promise<void>; release(): Promise<void>; terminate(): Promise<number> } {
  const holder = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads')
     const db = new (require('better-sqlite3'))(workerData.file)
     db.exec(workerData.begin)
     parentPort.postMessage('held')
     parentPort.on('message', () => { db.exec('COMMIT'); db.close(); parentPort.postMessage('released'); parentPort.close() })`,
    { eval: true, workerData: { file, begin } },
  )
  const message = (what: string) => new Promise<void>((resolve) => holder.on('message', (m) => m === what && resolve()))
  // listened for at once: a message nobody listens for is lost
  const held = message('held')
  return {
    held,
    release() {
      const released = message('released')
      holder.postMessage('release')
      return released
    },
    terminate: () => holder.terminate(),
  }
}

/**
 * A demo gateway (SQLite store, one agent) whose `subscriptions` resource writes to the SQLite upstream `file`, one
 * UPDATE per target (a window holding several would wait on a lock as a whole), with the action `hold` (tag on-hold,
 * past_due records); `connector`: more of the connector's settings.
 */
export function sqliteUpstreamGateway(file: string, connector: Record<string, unknown> = {}): Promise<GatewayFixture> {
  return startDemoGateway({
    store: 'sqlite',
    count: 1,
    edit: (raw) => {
      Object.assign(raw.resources.subscriptions.connector, { url: `sqlite:${file}`, write_window: 1, ...connector })
      raw.resources.subscriptions.actions.hold = { description: 'Tag on hold', set: { tags: ['on-hold'] }, precondition: { status: 'past_due' } }
    },
  })
}
