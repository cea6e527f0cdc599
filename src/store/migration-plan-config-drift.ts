import type { Kysely } from 'kysely'

/**
 * When the config was last seen to have moved under a plan (0018), and how (the drift codes, JSON). The drift of a plan
 * is judged from the config a process runs on, so a plan drifted under config B is whole again once the config is put
 * back to A; the approvals given before the drift was seen must not count again then: the reviewer was told meanwhile
 * that it could not run, and may have approved a replacement. A drift that nobody saw (no view, decision or commit of
 * the plan while it was there) left no mark, and none is known of the plans that exist as this runs: null, judged as
 * before.
 */
export async function addPlanConfigDrift(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('plans').addColumn('config_drifted_at', 'text').execute()
  await db.schema.alterTable('plans').addColumn('config_drift', 'text').execute()
}
