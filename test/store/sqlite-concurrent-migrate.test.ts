import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, test } from 'node:test'
import { TSX_LOADER } from '../support/cli-config.js'
import { storeMigrations } from '../../src/store/migrations.js'
import { createTempDir } from '../support/stores.js'

const run = promisify(execFile)
const STORE_MODULE = new URL('../../src/store/index.ts', import.meta.url).href

/** One process opening the store and migrating it, as every `warrant` command and `warrant serve` does at start. */
async function migrateInChild(file: string): Promise<{ applied: number; error?: string }> {
  const script = `
    import { createStore } from ${JSON.stringify(STORE_MODULE)}
    const store = await createStore({ url: ${JSON.stringify(`sqlite:${file}`)} })
    const outcome = await store.migrate()
    await store.close()
    console.log(JSON.stringify({ applied: outcome.applied.length, error: outcome.error?.message }))`
  const { stdout } = await run(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', script])
  return JSON.parse(stdout.trim().split('\n').pop()!) as { applied: number; error?: string }
}

/**
 * Two processes starting at once on a SQLite store file that does not exist yet (two `warrant` commands in a setup
 * script, a `warrant serve` and a CLI command, two serves), each its own process and connection, each migrating the
 * new store. Kysely's migrator takes no lock on SQLite, and read which migrations had run before applying any: the
 * second applied them again over the first's ("table selections already exists", "duplicate column name") and its
 * command failed with an internal error, in about a third of the races. The run is now one transaction that takes
 * the write lock up front: the second waits its turn, then finds nothing to do.
 */
describe('two processes migrating a new SQLite store at once', () => {
  test('one applies every migration, the other waits and finds nothing to do, race after race', async () => {
    const dir = await createTempDir('warrant-migrate-race-')
    try {
      const outcomes: { applied: number; error?: string }[][] = []
      // a race: one round is lost often (half of them here), six almost always on the code before
      for (let round = 0; round < 6; round++) {
        const file = join(dir.path, `store-${round}.db`)
        outcomes.push(await Promise.all([migrateInChild(file), migrateInChild(file)]))
      }
      const failures = outcomes.flatMap((pair, round) => pair.filter((o) => o.error !== undefined).map((o) => `round ${round}: ${o.error}`))
      assert.deepEqual(failures, [])
      for (const pair of outcomes) assert.deepEqual(pair.map((o) => o.applied).sort((a, b) => a - b), [0, Object.keys(storeMigrations).length])
    } finally {
      await dir.drop()
    }
  })
})
