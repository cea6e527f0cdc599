import type { Store } from '../../src/store/index.js'

/**
 * Inserts a selection row in state `building` as another process mid-walk would leave it: the row an interrupted
 * command's cleanup must not touch (it removes only the selection it built itself). `builder` and `leaseUntil` name
 * the process building it and how long it is known alive (none: a row from before builders were recorded).
 */
export async function insertForeignBuildingSelection(
  store: Store,
  id: string,
  options: { readonly createdBy: string | null; readonly origin: string | null; readonly builder?: string; readonly leaseUntil?: string },
): Promise<void> {
  const now = new Date().toISOString()
  await store.db
    .insertInto('selections')
    .values({
      id,
      resource: 'subscriptions',
      environment: 'demo',
      selector: '{"filter":{},"exclude":[]}',
      fields: '[]',
      count: 0,
      digest: '',
      complete: 0,
      completeness: '{}',
      consistent_snapshot: 0,
      exclusions: '[]',
      groups: '[]',
      created_by: options.createdBy,
      created_at: now,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      state: 'building',
      origin: options.origin,
      builder: options.builder ?? null,
      lease_until: options.leaseUntil ?? null,
    })
    .execute()
}
