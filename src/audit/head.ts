import type { Kysely } from 'kysely'
import type { Database } from '../store/index.js'

/**
 * The chain head: the seq and hash of the last row the audit log appended, kept in the `kv` table and
 * updated in the same transaction as each append. It lets `verify` see rows removed from the end of the
 * log (which leave a shorter but otherwise valid chain) and rows written past it by something else, and it
 * is where the next append continues from, so a truncated end stays visible as a gap.
 */
export const CHAIN_HEAD_KEY = 'audit_chain_head'

export interface ChainHead {
  readonly seq: number
  readonly hash: string
}

export async function readChainHead(db: Kysely<Database>): Promise<ChainHead | null> {
  const row = await db.selectFrom('kv').select('value').where('key', '=', CHAIN_HEAD_KEY).executeTakeFirst()
  if (!row) return null
  try {
    const parsed = JSON.parse(row.value) as Partial<ChainHead>
    if (Number.isSafeInteger(parsed.seq) && typeof parsed.hash === 'string') return { seq: parsed.seq as number, hash: parsed.hash }
  } catch {
    // an unreadable head is treated as no head; verify reports it
  }
  return null
}

export async function writeChainHead(db: Kysely<Database>, head: ChainHead): Promise<void> {
  const value = JSON.stringify({ seq: head.seq, hash: head.hash })
  await db
    .insertInto('kv')
    .values({ key: CHAIN_HEAD_KEY, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute()
}
