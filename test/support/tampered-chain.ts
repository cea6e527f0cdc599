import { CHAIN_HEAD_KEY, createAuditLog, hashAuditRow, type AuditKeyring, type AuditLog, type UnhashedAuditRow } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import type { Store } from '../../src/store/index.js'
import { createTestStore, type StoreKind, type TestStore } from './stores.js'

/** What the tampered-chain suites share: a signing key, an operator, a silent logger, and the store edits they make. */
export const K1 = `k1 ${'a1'.repeat(32)}`
export const operator: Actor = { principal: 'local:ops', name: 'local operator ops', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'cli' }
export const silent = { error: () => undefined }

export const rowCount = async (store: Store) => (await store.db.selectFrom('audit_events').select('seq').execute()).length
export const lastSeq = async (store: Store) => Number((await store.db.selectFrom('audit_events').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()).seq)
/** A column of a stored row changed behind the log's back (its hash kept). */
export const alter = (store: Store, seq: number, summary: string) => store.db.updateTable('audit_events').set({ summary }).where('seq', '=', seq).execute()

/**
 * What someone without the key can write: unsigned rows, correctly linked, after the last row (and the head moved to
 * them, or left). Returns the seq of the last row before them.
 */
export async function insertUnsigned(store: Store, count: number, head: 'left' | 'moved'): Promise<number> {
  const last = await store.db.selectFrom('audit_events').select(['seq', 'hash']).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()
  let seq = Number(last.seq)
  let prev = last.hash
  for (let i = 0; i < count; i++) {
    seq += 1
    const row: UnhashedAuditRow = { seq, level: 'run', at: new Date().toISOString(), principal: 'prn_forger', surface: 'http', action: 'POST /v1/plans/{id}/approvals', summary: '{}', selection_id: null, plan_id: 'plan_x', operation_id: null, target_id: null, details: null, prev_hash: prev }
    prev = hashAuditRow(row)
    await store.db.insertInto('audit_events').values({ ...row, hash: prev }).execute()
  }
  if (head === 'moved') await store.db.updateTable('kv').set({ value: JSON.stringify({ seq, hash: prev }) }).where('key', '=', CHAIN_HEAD_KEY).execute()
  return Number(last.seq)
}

/** The chain head overwritten with `value`, which need not read as a head. */
export const overwriteHead = (store: Store, value: string) => store.db.updateTable('kv').set({ value }).where('key', '=', CHAIN_HEAD_KEY).execute()

/** Heads stored but unreadable, over a chain ending at `seq`: not JSON, and its seq written as text. */
export const unreadableHeads = (seq: number): readonly string[] => ['xx', JSON.stringify({ seq: String(seq), hash: 'sha256:00' })]

/** `body` run on a fresh store of `kind` whose chain holds `rows` rows appended by `operator` (under `keyring`); the store is dropped after. */
export async function withChain(kind: StoreKind, keyring: AuditKeyring | null, rows: number, body: (ts: TestStore, audit: AuditLog) => Promise<void>): Promise<void> {
  const ts = await createTestStore(kind)
  try {
    const audit = createAuditLog({ store: ts.store, log: silent, keyring })
    for (let i = 0; i < rows; i++) await audit.record({ actor: operator, action: 'POST /v1/x', summary: { i } })
    await body(ts, audit)
  } finally {
    await ts.drop()
  }
}
