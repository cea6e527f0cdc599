import type { Kysely } from 'kysely'

/**
 * The token a review decision was made with. An approval is a person's act with one token: when that token is revoked
 * (it leaked), whoever held it may have given the approval, so it stops counting. Rows from before this migration
 * (0011) have none and are judged by their principal alone, as before.
 */
export async function addApprovalToken(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approvals').addColumn('token_id', 'text').execute()
}
