import type { CompiledQuery } from 'kysely'
import type { UpstreamCallListener } from '../connector.js'
import type { Backend, Row } from './backend.js'
import { callEmitter, timed } from './context.js'

/** What one catalogue statement reads, as its call names it. */
export type CatalogueRead = 'columns' | 'update triggers' | 'table facts'

/**
 * Runs the statements that read the engine's catalogue (column types, UPDATE triggers, keys, engine, row security,
 * views) on the shared connection, each reported as a call like every other statement that reaches the upstream:
 * `SELECT` on `catalogue: <what> of <table>`, `ok` or `error`, with its duration; never a value it bound or read.
 * A failed statement still rejects: the facts it was for are then unknown (catalogue-facts.ts).
 */
export function catalogueReader(backend: Backend, onCall: UpstreamCallListener | undefined, source: string, endpoint: string) {
  const emitters = new Map<CatalogueRead, ReturnType<typeof callEmitter>>()
  return async (what: CatalogueRead, query: CompiledQuery): Promise<Row[]> => {
    const result = await timed(() => backend.run(query))
    let emit = emitters.get(what)
    if (emit === undefined) emitters.set(what, (emit = callEmitter(onCall, source, `catalogue: ${what} of ${endpoint}`)))
    emit({ method: 'SELECT', outcome: 'error' in result ? 'error' : 'ok', durationMs: result.durationMs })
    if ('error' in result) throw result.error
    return result.value
  }
}
