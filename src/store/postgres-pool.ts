import pg from 'pg'
import { PostgresDialect } from 'kysely'
import type { Dialect, PostgresPool, PostgresPoolClient } from 'kysely'
import { WarrantError } from '../contract/index.js'
import { failureText, isConnectionFailure, unreachableStore } from './store-refusal.js'
import type { StoreLog } from './store.js'

const PG_INT8_OID = 20

/** How long opening a store connection, or waiting for a free one, may take by default (`store.connect_timeout_ms`). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

/** Opens the pool and proves one connection, so a store that cannot be reached is refused at start. */
export async function openPostgres(
  connectionString: string,
  display: string,
  options: { readonly log?: StoreLog | undefined; readonly maxConnections?: number | undefined; readonly connectTimeoutMs?: number | undefined },
): Promise<Dialect> {
  const pool = new pg.Pool({
    connectionString,
    max: options.maxConnections ?? 10,
    // pg waits forever by default: a server behind a firewall that drops packets, or a proxy that accepts and never
    // answers, held `warrant serve` at start (and a request for a connection) with nothing said
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    // Scoped to this pool rather than pg.types, which would change every other pg client in the process.
    types: { getTypeParser: int8AsNumber },
  })
  // An idle client whose server goes away emits 'error' on the pool; unhandled, that would end the process.
  pool.on('error', (err) => options.log?.warn({ err, store: display }, 'idle PostgreSQL connection failed'))
  // The pool listens only while a client is idle: a backend killed while a client is checked out (a failover,
  // pg_terminate_backend) emits 'error' on that client, and unheard it ends the process. The query in flight
  // fails on its own, and the store's callers handle that like any other store error.
  pool.on('connect', (client) => client.on('error', (err) => options.log?.warn({ err, store: display }, 'PostgreSQL connection failed while in use')))
  try {
    const client = await pool.connect()
    client.release()
  } catch (cause) {
    await pool.end().catch(() => undefined)
    throw new WarrantError('store_unavailable', `cannot connect to PostgreSQL store "${display}": ${failureText(cause)}`, { store: display })
  }
  return new PostgresDialect({ pool: refusingPool(pool, display) })
}

/**
 * The pool as kysely sees it, every failure of the connection (not of a statement) turned into the one refusal
 * `store_unavailable` naming the store and the cause, where it leaves the store: a database dropped, a server
 * stopped or cut off under a running gateway made every request a 500 "internal error", a bug it is not. The
 * surfaces then answer 503 (HTTP, MCP) or exit 4 (CLI) as for a SQLite store file gone.
 */
function refusingPool(pool: pg.Pool, display: string): PostgresPool {
  // one wrapper per pooled client: kysely keeps its connection state (discarded or not) per client object
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  const refusal = (error: unknown) => (isConnectionFailure(error) ? unreachableStore(display, error) : error)
  return {
    async connect() {
      let client: pg.PoolClient
      try {
        client = await pool.connect()
      } catch (error) {
        // nothing was sent: any failure to get a connection is the store's reach, whatever its code
        throw unreachableStore(display, error)
      }
      let outer = wrapped.get(client)
      if (outer === undefined) {
        const inner = client
        outer = {
          query: ((...args: [unknown, ...unknown[]]) => {
            const result = (inner.query as (...a: unknown[]) => unknown)(...args)
            // a cursor (kysely's streaming) is handed over as it is; a query's promise has its failure judged
            return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(refusal(error))) : result
          }) as PostgresPoolClient['query'],
          release: (destroy?: boolean) => inner.release(destroy),
        }
        wrapped.set(client, outer)
      }
      return outer
    },
    end: () => pool.end(),
  }
}

/**
 * bigint columns (`ord`, `seq`, counts) and `count(*)` arrive as int8, which pg returns as strings to avoid
 * precision loss. Ours stay far below 2^53, so they are read as numbers, and a larger one is an error
 * rather than a silently wrong number.
 */
function int8AsNumber(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid !== PG_INT8_OID || format === 'binary') return pg.types.getTypeParser(oid, format)
  return (value: string) => {
    const n = Number(value)
    if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${value} is beyond Number.MAX_SAFE_INTEGER`)
    return n
  }
}
