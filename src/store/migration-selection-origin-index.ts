import { sql, type Kysely } from 'kysely'

/**
 * The selections made from another thing, found by where they came from without reading the others (0020): the
 * remainder plans of an operation are looked up by their selection's `origin` (`followingPlans`), on every view of a
 * finished operation with pending targets (the API, MCP, the page's 2-second poll) and every proposal of its rest, and a
 * recovery by its whole origin. Selections are never deleted (expiry is read, not swept), one for every search, so a
 * walk of them grew without end. A partial index holds only the rows with an origin (a plain selection has none): the
 * equality lookups use it on both stores, since `origin = ?` implies `origin is not null`, and it stays small.
 */
export async function addSelectionOriginIndex(db: Kysely<any>): Promise<void> {
  await sql`create index selections_origin_idx on selections (origin) where origin is not null`.execute(db)
}
