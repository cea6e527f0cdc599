import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../store/index.js'

/**
 * The journal of selections being pruned: one `kv` row each, written before the selection is marked and removed once its
 * rows are all gone. Finishing interrupted sweeps reads these few rows, not every selection ever pruned.
 */
export const PRUNING_KEY = 'retention_pruning:'

/** A claim not renewed for this long is a sweep that died (killed, its store gone): another sweep may finish its work. */
export const PRUNE_CLAIM_MS = 5 * 60_000

/** The entry's value: which sweep works on the selection and when it last said so. */
interface Claim {
  readonly sweep: string
  readonly at: string
}

/** Released (a sweep stopped or failed, alive to say so) or written before claims: free to take at once. */
const RELEASED: Claim = { sweep: '', at: '1970-01-01T00:00:00.000Z' }

/**
 * One sweep's claims on journal entries. Two sweeps at once on one store (the schedule's and `warrant store prune`, or two
 * gateways on one PostgreSQL database) each found the other's entry of the selection it was deleting and "finished" it
 * too: both listed and audited it. Each entry names the sweep working on it and when it last renewed; a sweep takes an
 * entry only if it is released or older than PRUNE_CLAIM_MS, by a conditional UPDATE on the exact value it read (one
 * of two sweeps wins), renews it between the statements that delete rows, and releases what it still holds when it
 * stops or fails, so the next sweep finishes it at once. A killed sweep's entries are taken once their claim is stale.
 */
export class PruneClaims {
  readonly #db: Kysely<Database>
  readonly #sweep = randomUUID()
  /** the store's now at the sweep's start, and this process's clock then: the claims' times are the store's */
  readonly #startedAt: number
  readonly #startedLocal = performance.now()
  /** entry key → the value this sweep last wrote there */
  readonly #held = new Map<string, string>()

  constructor(db: Kysely<Database>, storeNow: string) {
    this.#db = db
    this.#startedAt = Date.parse(storeNow)
  }

  /**
   * Journals a selection before it is marked. An entry already there is taken if released or stale (a sweep cut between
   * its journal and its mark), else left to the live sweep that holds it (this sweep's mark will then find it marked).
   */
  async journal(selectionId: string): Promise<void> {
    const key = PRUNING_KEY + selectionId
    const value = this.#fresh()
    const result = await this.#db.insertInto('kv').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).executeTakeFirst()
    if (Number(result.numInsertedOrUpdatedRows ?? 0) > 0) {
      this.#held.set(key, value)
      return
    }
    const found = await this.#db.selectFrom('kv').select('value').where('key', '=', key).executeTakeFirst()
    if (found) await this.take(key, found.value)
  }

  /** This sweep marked the selection: the entry is its own, whoever journaled it. */
  async own(selectionId: string): Promise<void> {
    const value = this.#fresh()
    await this.#db.insertInto('kv').values({ key: PRUNING_KEY + selectionId, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute()
    this.#held.set(PRUNING_KEY + selectionId, value)
  }

  /** Takes an entry found in the journal whose value was `found`: false when another sweep holds it, or took it first. */
  async take(key: string, found: string): Promise<boolean> {
    const claim = parseClaim(found)
    if (claim.sweep !== this.#sweep && Date.parse(claim.at) > this.#now() - PRUNE_CLAIM_MS) return false
    return this.#swap(key, found)
  }

  /** Between two deleting statements: false when the entry is no longer this sweep's (its claim went stale and was taken). */
  async renew(selectionId: string): Promise<boolean> {
    const key = PRUNING_KEY + selectionId
    const held = this.#held.get(key)
    return held !== undefined && this.#swap(key, held)
  }

  /** The selection's rows are all gone (or it was never marked): its entry goes, if it is still this sweep's. */
  async done(selectionId: string): Promise<void> {
    const key = PRUNING_KEY + selectionId
    const held = this.#held.get(key)
    this.#held.delete(key)
    if (held !== undefined) await this.#db.deleteFrom('kv').where('key', '=', key).where('value', '=', held).execute()
  }

  /** A selection this sweep could not mark and no sweep marked (a plan stands on it now): its entry, whoever wrote it, goes. */
  async drop(selectionId: string): Promise<void> {
    this.#held.delete(PRUNING_KEY + selectionId)
    await this.#db.deleteFrom('kv').where('key', '=', PRUNING_KEY + selectionId).execute()
  }

  /** Another sweep works on the selection: this sweep's entry, if still its own, is free for any sweep to take at once. */
  async release(selectionId: string): Promise<void> {
    const key = PRUNING_KEY + selectionId
    const held = this.#held.get(key)
    this.#held.delete(key)
    if (held !== undefined) await this.#db.updateTable('kv').set({ value: JSON.stringify(RELEASED) }).where('key', '=', key).where('value', '=', held).execute()
  }

  /** Stopped or failed: what this sweep still holds is left for the next sweep to take at once. */
  async releaseAll(): Promise<void> {
    for (const key of [...this.#held.keys()]) await this.release(key.slice(PRUNING_KEY.length))
  }

  async #swap(key: string, from: string): Promise<boolean> {
    const value = this.#fresh()
    const result = await this.#db.updateTable('kv').set({ value }).where('key', '=', key).where('value', '=', from).executeTakeFirst()
    if (Number(result.numUpdatedRows) === 0) {
      this.#held.delete(key)
      return false
    }
    this.#held.set(key, value)
    return true
  }

  #now(): number {
    return this.#startedAt + Math.round(performance.now() - this.#startedLocal)
  }

  #fresh(): string {
    return JSON.stringify({ sweep: this.#sweep, at: new Date(this.#now()).toISOString() } satisfies Claim)
  }
}

/** An entry's claim; a bare time (an entry of the release before claims, or of the journaling of unjournaled selections) is released. */
function parseClaim(value: string): Claim {
  try {
    const parsed = JSON.parse(value) as Partial<Claim>
    if (typeof parsed.sweep === 'string' && typeof parsed.at === 'string' && !Number.isNaN(Date.parse(parsed.at))) return { sweep: parsed.sweep, at: parsed.at }
  } catch {
    // not JSON: a bare time
  }
  return RELEASED
}
