/**
 * Rows written straight into a store, with only the columns of the first schema (0001), so a test of a later
 * migration can insert them before it runs: pass any later column in `more`. Inserted `as never` (the types name every
 * column of the latest schema).
 */
const AT = '2030-01-01T00:00:00.000Z'

/** A frozen selection of one record of `things` in `prod`. */
export const selectionRow = (id: string, more: Record<string, unknown> = {}) => ({
  id, resource: 'things', environment: 'prod', selector: '{}', fields: '["id"]', count: 1, digest: 'sha256:s', complete: 1, completeness: '{}',
  consistent_snapshot: 0, exclusions: '[]', groups: '[]', created_at: AT, expires_at: '2030-01-02T00:00:00.000Z', state: 'frozen', ...more,
}) as never

/** An approved plan on selection `selectionId`, of one target. */
export const planRow = (id: string, selectionId: string, more: Record<string, unknown> = {}) => ({
  id, selection_id: selectionId, resource: 'things', environment: 'prod', action: '{}', action_type: 'set_status', plan_digest: 'sha256:p', selection_digest: 'sha256:s',
  target_count: 1, changes_summary: '{}', policy: '{}', state: 'approved', proposed_by: 'prn_a', created_at: AT, expires_at: null, ...more,
}) as never
