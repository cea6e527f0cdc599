import { z } from 'zod'
import { confusableSkeleton } from '../contract/index.js'

/** Members read per page of a walk over their ids. */
export const WALK_PAGE = 1000
/** Groups (and words of the agent) named; beyond it, only how many more there are. */
export const GROUPS_SHOWN = 20

/** A member's place and id: all the look-alike check reads (never the review fields). */
export interface MemberId {
  readonly ord: number
  readonly id: string
}

/** Members with ord > afterOrd, at most `limit`, in frozen order. */
export type MemberIdPages = (afterOrd: number, limit: number) => Promise<readonly MemberId[]>

/**
 * A selection's ids drawn alike, as the store keeps them with it (`selections.lookalike_ids`, 0013): the ids of the
 * first groups, in frozen order, and how many groups more. Only ids: how they are spelled (code points) is said
 * when served, so the stored answer cannot disagree with the rendering of the code serving it.
 */
export const storedLookalikesSchema = z.object({ groups: z.array(z.array(z.string())), more_groups: z.number().int().nonnegative() })
export type StoredLookalikes = z.infer<typeof storedLookalikesSchema>

export const NO_LOOKALIKES: StoredLookalikes = Object.freeze({ groups: [], more_groups: 0 })

/**
 * A 53-bit hash of a skeleton (two FNV-1a passes with different offsets), exact in a double: kept per member
 * instead of the skeleton, so the walk holds 8 bytes a member, not a string. Two skeletons that share a hash are
 * told apart by the second pass, which compares the skeletons themselves.
 */
function skeletonHash(skeleton: string): number {
  let a = 0x811c9dc5
  let b = 0x01000193 ^ 0x5bd1e995
  for (let i = 0; i < skeleton.length; i++) {
    const c = skeleton.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15)
  }
  return (a >>> 0) * 2 ** 21 + ((b >>> 0) >>> 11)
}

/**
 * The first pass over a selection's ids, in any order: one 53-bit hash of each id's skeleton (8 bytes a member, so
 * memory stays small for millions of members; no skeleton string is kept). `met` names the hashes seen twice: only
 * ids with one of them can share a skeleton with another id.
 */
export class SkeletonHashes {
  #hashes = new Float64Array(WALK_PAGE)
  #count = 0

  /** Adds the id; returns its skeleton, for a caller that compares it with something else too. */
  add(id: string): string {
    const skeleton = confusableSkeleton(id)
    if (this.#count === this.#hashes.length) {
      const grown = new Float64Array(this.#hashes.length * 2)
      grown.set(this.#hashes)
      this.#hashes = grown
    }
    this.#hashes[this.#count++] = skeletonHash(skeleton)
    return skeleton
  }

  /** The hashes added more than once; the hashes are let go (the pass is over). */
  met(): Set<number> {
    const sorted = this.#hashes.subarray(0, this.#count).sort()
    const met = new Set<number>()
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) met.add(sorted[i]!)
    this.#hashes = new Float64Array(0)
    this.#count = 0
    return met
  }
}

/** Every member's id, a page at a time, in frozen order. */
export async function eachId(members: MemberIdPages, visit: (id: string) => void): Promise<void> {
  for (let after = 0; ; ) {
    const page = await members(after, WALK_PAGE)
    for (const m of page) visit(m.id)
    if (page.length < WALK_PAGE) return
    after = page[page.length - 1]!.ord
  }
}

/**
 * The second pass, in frozen order: the ids whose skeleton hash `met`, bucketed by the skeleton itself; a group only
 * where two of them share it. Nothing is read when no hash met (the usual case: no id drawn like another).
 */
export async function groupsWhereMet(met: ReadonlySet<number>, members: MemberIdPages): Promise<StoredLookalikes> {
  if (met.size === 0) return NO_LOOKALIKES
  const bySkeleton = new Map<string, string[]>()
  await eachId(members, (id) => {
    const skeleton = confusableSkeleton(id)
    if (!met.has(skeletonHash(skeleton))) return
    const ids = bySkeleton.get(skeleton)
    if (ids) ids.push(id)
    else bySkeleton.set(skeleton, [id])
  })
  const groups = [...bySkeleton.values()].filter((ids) => ids.length > 1)
  return { groups: groups.slice(0, GROUPS_SHOWN), more_groups: Math.max(0, groups.length - GROUPS_SHOWN) }
}
