import pg from 'pg'
import { PostgresDialect } from 'kysely'
import type { Dialect, PostgresPool, PostgresPoolClient } from 'kysely'
import { WarrantError } from '../contract/index.js'
import { failureText, isConnectionFailure, unreachableStore } from './store-refusal.js'
import type { StoreLog } from './store.js'

const PG_INT8_OID = 20

/** How long opening a store connection, or waiting for a free one, may take by default (`store.connect_timeout_ms`). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

/**
 * How long the answer to one store statement may take by default (`store.statement_timeout_ms`). Generous: removing
 * the members of a selection of millions, or renumbering them, is one statement of many seconds. Work made of many
 * statements (an export, read a page at a time; a walk, a batch at a time) is bounded per statement, never as a whole.
 */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 300_000

/** pg's words for a query `query_timeout` gave up on. */
const UNANSWERED = 'Query read timeout'

/** Opens the pool and proves one connection, so a store that cannot be reached is refused at start. */
export async function openPostgres(
  connectionString: string,
  display: string,
  options: {
    readonly log?: StoreLog | undefined
    readonly maxConnections?: number | undefined
    readonly connectTimeoutMs?: number | undefined
    readonly statementTimeoutMs?: number | undefined
  },
): Promise<Dialect> {
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS
  const pool = new pg.Pool({
    connectionString,
    max: options.maxConnections ?? 10,
    // pg waits forever by default: a server behind a firewall that drops packets, or a proxy that accepts and never
    // answers, held `warrant serve` at start (and a request for a connection) with nothing said
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    // and it waits forever for a query's answer: a server or a proxy that fell silent mid-statement (a failover, a
    // NAT that dropped the connection) held the request, and its pooled connection, with nothing said
    query_timeout: statementTimeoutMs,
    // a peer gone without a word (a host powered off, a cable pulled) is found by the kernel on an idle connection
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
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
  return new PostgresDialect({ pool: refusingPool(pool, display, statementTimeoutMs) })
}

/**
 * The pool as kysely sees it, every failure of the connection (not of a statement) turned into the one refusal
 * `store_unavailable` naming the store and the cause, where it leaves the store: a database dropped, a server
 * stopped or cut off under a running gateway made every request a 500 "internal error", a bug it is not. The
 * surfaces then answer 503 (HTTP, MCP) or exit 4 (CLI) as for a SQLite store file gone.
 */
function refusingPool(pool: pg.Pool, display: string, statementTimeoutMs: number): PostgresPool {
  // one wrapper per pooled client: kysely keeps its connection state (discarded or not) per client object
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  const refusal = (error: unknown) => (isConnectionFailure(error) ? unreachableStore(display, error) : error)
  // A client whose statement went unanswered still waits for that answer: pg would queue the next statement (the
  // transaction's ROLLBACK, the next request's) behind it. It answers nothing more, and is dropped, not pooled.
  const unanswered = new WeakMap<pg.PoolClient, WarrantError>()
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
            const silent = unanswered.get(inner)
            if (silent) return Promise.reject(silent)
            const result = (inner.query as (...a: unknown[]) => unknown)(...args)
            // a cursor (kysely's streaming) is handed over as it is; a query's promise has its failure judged
            if (!(result instanceof Promise)) return result
            return result.catch((error: unknown) => {
              if (!(error instanceof Error && error.message === UNANSWERED)) return Promise.reject(refusal(error))
              const refused = unansweredStatement(display, statementTimeoutMs)
              unanswered.set(inner, refused)
              return Promise.reject(refused)
            })
          }) as PostgresPoolClient['query'],
          release: (destroy?: boolean) => inner.release(destroy || unanswered.has(inner)),
        }
        wrapped.set(client, outer)
      }
      return outer
    },
    end: () => pool.end(),
  }
}

/** The refusal for a statement the store did not answer within `store.statement_timeout_ms`. */
function unansweredStatement(display: string, timeoutMs: number): WarrantError {
  return new WarrantError(
    'store_unavailable',
    `PostgreSQL store "${display}" did not answer a statement within store.statement_timeout_ms (${timeoutMs} ms): the server, or the network to it, fell silent; that connection was dropped, retry once it answers`,
    { store: display, reason: 'unanswered', statement_timeout_ms: timeoutMs },
  )
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
