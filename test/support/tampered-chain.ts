import type { Actor } from '../../src/contract/index.js'
import type { Store } from '../../src/store/index.js'

/** What the tampered-chain suites share: a signing key, an operator, a silent logger, and the store edits they make. */
export const K1 = `k1 ${'a1'.repeat(32)}`
export const operator: Actor = { principal: 'local:ops', name: 'local operator ops', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'cli' }
export const silent = { error: () => undefined }

export const rowCount = async (store: Store) => (await store.db.selectFrom('audit_events').select('seq').execute()).length
export const lastSeq = async (store: Store) => Number((await store.db.selectFrom('audit_events').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()).seq)
/** A column of a stored row changed behind the log's back (its hash kept). */
export const alter = (store: Store, seq: number, summary: string) => store.db.updateTable('audit_events').set({ summary }).where('seq', '=', seq).execute()
