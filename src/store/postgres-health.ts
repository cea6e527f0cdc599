import pg from 'pg'
import { WarrantError } from '../contract/index.js'
import { unreachableStore } from './store-refusal.js'

/** How long /health waits for the PostgreSQL store's answer before saying it did not answer. */
export const POSTGRES_HEALTH_TIMEOUT_MS = 2_000

/** Whether the PostgreSQL store answers now, asked on a connection of its own (see `postgresHealth`). */
export interface PostgresHealth {
  /** Null when the store answered `select 1` within the timeout; else why not, as a `store_unavailable` refusal. */
  check(): Promise<WarrantError | null>
  close(): Promise<void>
}

/**
 * /health asks the store one trivial question: a database dropped, a server down or silent is a gateway that
 * cannot serve a request, and /health said "ok" without asking. It asks on one connection of its own, not the
 * pool's: under load every pooled connection may be busy with operations and freezes, and /health must answer
 * within milliseconds whether the store answers, not wait for a slot. Concurrent checks share one question in
 * flight, so a silent server never gathers a queue of them; each caller waits at most `timeoutMs`.
 */
export function postgresHealth(connectionString: string, display: string, timeoutMs = POSTGRES_HEALTH_TIMEOUT_MS): PostgresHealth {
  let client: pg.Client | null = null
  let asking: Promise<WarrantError | null> | null = null
  let closed = false

  const drop = (which: pg.Client) => {
    if (client === which) client = null
    which.end().catch(() => undefined)
  }
  const connected = async (): Promise<pg.Client> => {
    const fresh = new pg.Client({ connectionString, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs })
    // a connection ended by the server while idle (a restart, the database dropped): the next check opens another
    fresh.on('error', () => drop(fresh))
    try {
      await fresh.connect()
    } catch (error) {
      drop(fresh)
      throw error
    }
    if (closed) {
      drop(fresh)
      throw new Error('the store is closing')
    }
    return (client = fresh)
  }
  const ask = async (): Promise<void> => {
    const reused = client
    if (reused !== null) {
      try {
        await reused.query('select 1')
        return
      } catch {
        // a connection the server ended unnoticed: asked again on a fresh one, whose failure names the cause
        drop(reused)
      }
    }
    const fresh = await connected()
    try {
      await fresh.query('select 1')
    } catch (error) {
      drop(fresh)
      throw error
    }
  }

  return {
    check() {
      asking ??= ask()
        .then(
          () => null,
          (error: unknown) => unreachableStore(display, error),
        )
        .finally(() => (asking = null))
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<WarrantError>((resolve) => {
        timer = setTimeout(
          () => resolve(new WarrantError('store_unavailable', `PostgreSQL store "${display}" did not answer within ${timeoutMs} ms`, { store: display, reason: 'timeout', timeout_ms: timeoutMs })),
          timeoutMs,
        )
      })
      return Promise.race([asking, late]).finally(() => clearTimeout(timer))
    },
    async close() {
      closed = true
      if (client !== null) drop(client)
    },
  }
}
