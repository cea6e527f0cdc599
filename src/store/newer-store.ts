import type { Kysely } from 'kysely'

/**
 * A store another, newer Warrant migrated holds migrations this code does not know (a downgrade, or an older
 * instance beside newer ones). Its tables may hold states and columns this code would misread or overwrite, so it is
 * refused before anything runs, saying what happened rather than kysely's "corrupted migrations".
 */

/** The applied migrations `known` lacks, in the order they were applied; empty on a fresh store. */
export async function migrationsUnknownHere(db: Kysely<any>, table: string, known: Readonly<Record<string, unknown>>): Promise<string[]> {
  // no history table yet (a fresh store): the migrator creates it. Looked up rather than tried, so a fresh store's
  // open logs no failed query.
  const tables = await db.introspection.getTables()
  if (!tables.some((t) => t.name === table)) return []
  const rows: { name: string }[] = await db.selectFrom(table).select('name').orderBy('timestamp').orderBy('name').execute()
  return rows.map((r) => r.name).filter((name) => !Object.hasOwn(known, name))
}

/** What the operator reads: which migrations are newer, the newest this code knows, and what to do. */
export function newerStoreMessage(unknown: readonly string[], known: Readonly<Record<string, unknown>>): string {
  const newest = Object.keys(known).sort().at(-1) ?? 'none'
  return (
    `the store was migrated by a newer version of Warrant: it has migration(s) ${unknown.join(', ')}, which this version does not know ` +
    `(its newest is ${newest}). This version cannot use it safely and changed nothing: run the newer version, or a backup of the store taken before it was upgraded`
  )
}
