import { after, before } from 'node:test'
import type { SqlConnector } from '../../../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from './engine.js'

/**
 * A fresh database of `kind` for the describe block it is called in, `statements` run in it, and a connector to its
 * table `things` (fields id: string, version: integer, name: string); dropped after the block. Read both when each
 * test runs (they are set in a `before`).
 */
export function thingsTable(kind: Kind, statements: readonly string[]): { engine(): Engine; connector(): SqlConnector } {
  let engine: Engine | undefined
  let connector: SqlConnector | undefined
  before(async () => {
    engine = await createEngine(kind)
    for (const statement of statements) await engine.exec(statement)
    connector = engine.connector('things', { id: 'string', version: 'integer', name: 'string' })
  })
  after(async () => {
    await engine?.drop()
  })
  return { engine: () => engine!, connector: () => connector! }
}
