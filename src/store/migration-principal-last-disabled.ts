import type { Kysely } from 'kysely'

/**
 * When a principal was last disabled, kept when it is enabled again. A principal is disabled because it was
 * compromised or left: an approval it gave before that (maybe while compromised), or one given on a plan it proposed
 * before that, must not count again once it is enabled, and `disabled_at` is cleared by the enable. A principal
 * disabled as this migration (0014) runs keeps its disable time as its watermark; one disabled and enabled before it
 * left none, and its earlier approvals are judged as before.
 */
export async function addPrincipalLastDisabled(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('principals').addColumn('last_disabled_at', 'text').execute()
  await db.updateTable('principals').set((eb) => ({ last_disabled_at: eb.ref('disabled_at') })).where('disabled_at', 'is not', null).execute()
}
