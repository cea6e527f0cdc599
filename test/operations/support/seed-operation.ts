import type { Harness } from './harness.js'

/** The lease holder of every operation seeded here. */
export const OWNER = 'instance-under-test'
export const NOW = '2031-01-02T03:04:05.006Z'

/** A running operation held by OWNER, with `count` pending targets (ords 1..count). */
export async function seedOperation(h: Harness, operationId: string, count: number): Promise<void> {
  const db = h.store.db
  await db
    .insertInto('operations')
    .values({
      id: operationId,
      plan_id: h.plan.plan_id,
      idempotency_key: operationId,
      request_fingerprint: 'f',
      state: 'running',
      stop_rules: '{}',
      counts: '{}',
      lease_owner: OWNER,
      lease_expires_at: '2999-01-01T00:00:00.000Z',
      created_by: 'test',
      created_at: NOW,
      updated_at: NOW,
    })
    .execute()
  await db
    .insertInto('operation_targets')
    .values(Array.from({ length: count }, (_, i) => ({ operation_id: operationId, ord: i + 1, record_id: `r${i + 1}`, expected_version: '1', state: 'pending', before: '{"kept":true}', updated_at: NOW })))
    .execute()
}
