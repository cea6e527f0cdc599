import { readingSkeleton } from '../contract/index.js'
import type { SelectionMember } from './selection-service.js'

/** Members read per page of the walk. */
const WALK_PAGE = 1000
/** Groups named on the page; beyond it, only how many more there are. */
const GROUPS_SHOWN = 20
/** Selections whose answer is kept: a frozen selection's members never change, so it is read once per process. */
const KEPT = 200

/** Record ids of one selection that read alike though they are different records. */
export interface LookalikeIds {
  /** Up to `GROUPS_SHOWN` groups of two or more ids each, in the members' frozen order. */
  readonly groups: readonly (readonly string[])[]
  /** Groups beyond those listed. */
  readonly more: number
}

const kept = new Map<string, LookalikeIds>()

/**
 * The ids of a frozen selection that share a reading skeleton (`readingSkeleton`: " r002 " and "r002", NFC and NFD
 * "café"): the upstream holds them as separate records, and a reviewer approving a change to one may be reading
 * another. Every member is read (one page of ids at a time), so a pair far apart in the manifest is found too;
 * the answer is kept by selection and digest, since frozen members never change.
 */
export async function lookalikeIds(
  selection: { readonly selection_id: string; readonly digest: string },
  members: (afterOrd: number, limit: number) => Promise<readonly SelectionMember[]>,
): Promise<LookalikeIds> {
  const key = `${selection.selection_id}\n${selection.digest}`
  const known = kept.get(key)
  if (known) return known
  // the first id of each skeleton; a group only where a second one comes (most ids are their own skeleton)
  const first = new Map<string, string>()
  const alike = new Map<string, string[]>()
  for (let after = 0; ; ) {
    const page = await members(after, WALK_PAGE)
    for (const m of page) {
      const skeleton = readingSkeleton(m.id)
      const seen = first.get(skeleton)
      if (seen === undefined) first.set(skeleton, m.id)
      else if (alike.has(skeleton)) alike.get(skeleton)!.push(m.id)
      else alike.set(skeleton, [seen, m.id])
    }
    if (page.length < WALK_PAGE) break
    after = page[page.length - 1]!.ord
  }
  const groups = [...alike.values()]
  const answer: LookalikeIds = { groups: groups.slice(0, GROUPS_SHOWN), more: Math.max(0, groups.length - GROUPS_SHOWN) }
  if (kept.size >= KEPT) kept.delete(kept.keys().next().value!)
  kept.set(key, answer)
  return answer
}
