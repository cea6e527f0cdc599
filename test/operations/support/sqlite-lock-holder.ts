import { Worker } from 'node:worker_threads'

/**
 * Another connection holding a SQLite file's write lock (BEGIN IMMEDIATE), in a worker thread: better-sqlite3 waits
 * for a lock synchronously, which would block the test's own thread. `held` settles once the lock is taken;
 * `release()` commits and closes, settling once done; `terminate()` ends the worker whatever its state.
 */
export function holdSqliteWriteLock(file: string): { readonly held: Promise<void>; release(): Promise<void>; terminate(): Promise<number> } {
  const holder = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads')
     const db = new (require('better-sqlite3'))(workerData)
     db.exec('BEGIN IMMEDIATE')
     parentPort.postMessage('held')
     parentPort.on('message', () => { db.exec('COMMIT'); db.close(); parentPort.postMessage('released'); parentPort.close() })`,
    { eval: true, workerData: file },
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
