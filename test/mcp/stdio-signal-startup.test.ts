import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { CLI_ENTRY, TSX_LOADER } from '../support/cli-config.js'
import { until } from './endless-docs.js'
import { exitOf, type McpWorld, startMcpWorld } from './support.js'

/**
 * `warrant mcp` took SIGINT and SIGTERM as a clean stop only once its stdio transport was connected. A signal while
 * it checked its token (its handlers in place, the stop they call not yet) was dropped: the server connected and
 * waited for stdin to end, a supervisor's SIGTERM had to be followed by a SIGKILL. One while the store opened went to
 * the generic handler: exit 130 at once, "no answer was given", the gateway (resuming operations) cut mid-way. A
 * signal at any point of the startup now stops it as one after it does: the gateway closed, exit 0, promptly.
 *
 * The startup is held at each point by a real lock: the test holds an ACCESS EXCLUSIVE lock on the table the
 * process reads there (the migrations' record while the store opens, `tokens` while the token is checked), sees the
 * process wait for it in pg_stat_activity, sends the signal, and lets the lock go once the signal has had time to be
 * handled (the process is idle, waiting on its socket).
 */

/** How long a stopped server may take to be gone, as for a signal after it connected (stdio-signal-exit.test.ts). */
const EXIT_MS = 5_000
/** Time for an idle process to run its signal handler before the startup is let go on. */
const HANDLED_MS = 300

describe('MCP over stdio: SIGINT and SIGTERM during the startup end the process, exit 0 (PostgreSQL store)', () => {
  let world: McpWorld
  /** Holds the lock, in its transaction. */
  let admin: pg.Client
  /** Watches pg_stat_activity, outside that transaction: within one, the view is a snapshot that never changes. */
  let watcher: pg.Client
  before(async () => {
    world = await startMcpWorld({ store: 'postgres', count: 5 })
    admin = new pg.Client({ connectionString: world.fx.storeUrl })
    watcher = new pg.Client({ connectionString: world.fx.storeUrl })
    await admin.connect()
    await watcher.connect()
  })
  after(async () => {
    await admin?.end()
    await watcher?.end()
    await world?.close()
  })

  /** The one backend of this database waiting for a lock, if its query matches `query`. */
  const waitingOn = async (query: RegExp) => {
    const { rows } = await watcher.query<{ query: string }>("SELECT query FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
    return rows.some((r) => query.test(r.query))
  }

  const moments = [
    { moment: 'while the store opens', table: 'warrant_migration', query: /warrant_migration/ },
    { moment: 'while the token is checked', table: 'tokens', query: /token_hash/ },
  ]
  for (const { moment, table, query } of moments)
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      test(`${signal} ${moment}: exits 0 within seconds, with stdin kept open`, { timeout: 60_000 }, async () => {
        await admin.query('BEGIN')
        await admin.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`)
        let locked = true
        const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'mcp', '--config', world.configPath], {
          env: { ...process.env, WARRANT_TOKEN: world.agentToken, WARRANT_LOG_LEVEL: 'info' },
          stdio: ['pipe', 'pipe', 'pipe'],
        })
        let out = ''
        let err = ''
        child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
        try {
          await until(() => waitingOn(query), 30_000, `the process waits for the lock on ${table}`)
          child.kill(signal)
          await new Promise((resolve) => setTimeout(resolve, HANDLED_MS))
          await admin.query('ROLLBACK')
          locked = false
          const exit = await exitOf(child, EXIT_MS)
          assert.deepEqual(exit, { code: 0, signal: null }, `stderr: ${err.slice(-2000)}`)
          assert.equal(out, '', 'nothing on the protocol channel')
          assert.doesNotMatch(err, /MCP server ready/)
        } finally {
          if (locked) await admin.query('ROLLBACK')
          child.kill('SIGKILL')
        }
      })
})
