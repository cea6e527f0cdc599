import { type Actor, WarrantError, inScope } from '../contract/index.js'
import type { CursorCodec } from '../inventory/index.js'
import type { Catalogue } from '../resources/index.js'
import type { Store } from '../store/index.js'
import type { PageCursors } from './page-cursor.js'

/** What every part of the selection service shares, resolved once from its options so defaults live in one place. */
export interface SelectionContext {
  readonly store: Store
  readonly db: Store['db']
  readonly catalogue: Catalogue
  readonly cursorCodec: CursorCodec
  readonly cursors: PageCursors
  readonly clock: () => Date
  readonly nowIso: () => string
  readonly defaultTtlMinutes: number
  readonly firstPageSize: number
  /** This process's lease-owner name, recorded as the builder of each selection it freezes. */
  readonly owner: string
  /** How long a builder is taken for alive after its last renewal (see build-lease.ts). */
  readonly buildLeaseMs: number
  /** How long an export waits for a client that reads nothing before cutting it (see export.ts). */
  readonly exportStallMs: number
  /** Builds this process gave up on whose removal the store refused, and why they failed (see given-up-builds.ts). */
  readonly givenUp: Map<string, string>
}

export function assertInScope(actor: Actor, resource: string): void {
  if (!inScope(actor, resource)) throw new WarrantError('forbidden', `resource "${resource}" is outside this principal's scope`, { resource })
}
