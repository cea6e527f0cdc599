import type { Kysely } from 'kysely'

/**
 * Who holds a webhook delivery's lease (0012). `lease_until` held two things: the claim of the process sending a
 * delivery and, once released, the next attempt's due time, and a process's later writes did not ask whether the
 * claim was still its own. Now `lease_until` is only the claim, `next_attempt_at` only the due time, and
 * `lease_owner` says whose claim it is, so a process that lost its lease writes nothing over the new holder's.
 * Rows from before have no owner: their `lease_until` (a claim, or a due time equal to `next_attempt_at`) is judged
 * as a claim that ends then, which it was.
 */
export async function addWebhookDeliveryLeaseOwner(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('lease_owner', 'text').execute()
}
