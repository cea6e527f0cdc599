import { z } from 'zod'
import { codePointName, confusableSkeleton, differingParts } from '../contract/index.js'

/** Members read per page of the walk. */
const WALK_PAGE = 1000
/** Groups (and words of the agent) named; beyond it, only how many more there are. */
const GROUPS_SHOWN = 20
/** Answers kept: a frozen selection's members never change, so each is read once per process. */
const KEPT = 200
/** What separates the words of an agent's parameter that may name a record: spaces, quotes, brackets, commas. */
const WORD_BREAK = /[\s"'`,;()[\]{}<>]+/u

const codePointsSchema = z.array(z.string()).describe('the code points where it differs from the others (U+0049), in order; empty when only unseen characters, end spaces or normalisation tell them apart')

/** Record ids of one selection drawn alike though they are different records: the same answer on every surface. */
export const selectionLookalikesSchema = z
  .object({
    groups: z
      .array(z.array(z.object({ id: z.string(), code_points: codePointsSchema })))
      .describe(
        "groups of two or more members' ids drawn alike (Unicode's confusable skeleton, UTS #39: l, I and 1; O and 0; rn and m; compatibility forms; unseen characters, end spaces, normalisation), found over every member, at most 20, in frozen order: each is a separate record; read the id of each",
      ),
    more_groups: z.number().int().nonnegative().describe('groups beyond those listed'),
  })
  .meta({ id: 'LookalikeIds' })
export type SelectionLookalikes = z.infer<typeof selectionLookalikesSchema>

/** A plan's: its selection's, and the words of the agent's parameters drawn like a member's id though not that id. */
export const planLookalikesSchema = selectionLookalikesSchema
  .extend({
    named: z
      .array(z.object({ word: z.string(), word_code_points: codePointsSchema, id: z.string(), id_code_points: codePointsSchema }))
      .describe("words of the agent's parameters drawn like a target's id but not it (\"user-1O\" over the record user-10), at most 20: the record changed is the id, not the word"),
    more_named: z.number().int().nonnegative().describe('such words beyond those listed'),
  })
  .meta({ id: 'PlanLookalikeIds' })
export type LookalikeIds = z.infer<typeof planLookalikesSchema>

/** Each value with the code points where it differs from the others (`differingParts`). */
function spelled(values: readonly string[]): string[][] {
  return differingParts(values).map((part) => [...part].map(codePointName))
}

/**
 * The texts of an agent's parameters, each string however deep (params are validated JSON of bounded depth): the
 * words checked against the selection's ids, since one written like a target's id reads as naming it.
 */
export function agentTexts(params: Readonly<Record<string, unknown>>): string[] {
  const texts: string[] = []
  const pending: unknown[] = [params]
  while (pending.length > 0) {
    const v = pending.pop()
    if (typeof v === 'string') texts.push(v)
    else if (v && typeof v === 'object') pending.push(...Object.values(v))
  }
  return texts
}

const kept = new Map<string, LookalikeIds>()

/** The words of the agent's text that could name a record: each whole text, each word of it, and the word without a closing stop. */
function wordsOf(texts: readonly string[]): Map<string, Set<string>> {
  const bySkeleton = new Map<string, Set<string>>()
  for (const text of texts)
    for (const word of new Set([text, ...text.split(WORD_BREAK), ...text.split(WORD_BREAK).map((w) => w.replace(/[.:!?]+$/u, ''))])) {
      if (word.trim() === '') continue
      const skeleton = confusableSkeleton(word)
      const words = bySkeleton.get(skeleton) ?? new Set<string>()
      bySkeleton.set(skeleton, words.add(word))
    }
  return bySkeleton
}

/** A member's place and id: all the look-alike check reads (never the review fields). */
export interface MemberId {
  readonly ord: number
  readonly id: string
}

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

/** Every member's id, a page at a time, in frozen order. */
async function eachId(members: (afterOrd: number, limit: number) => Promise<readonly MemberId[]>, visit: (id: string) => void): Promise<void> {
  for (let after = 0; ; ) {
    const page = await members(after, WALK_PAGE)
    for (const m of page) visit(m.id)
    if (page.length < WALK_PAGE) return
    after = page[page.length - 1]!.ord
  }
}

/**
 * The ids of a frozen selection drawn alike (`confusableSkeleton`: " r002 " and "r002", NFC and NFD "café",
 * "admin-I" and "admin-l", "user-10" and "user-1O", "ﬁle" and "file"): the upstream holds them as separate records,
 * and a reviewer approving a change to one may be reading another. And the words of the agent's parameters
 * (`agentTexts`) drawn like a member's id but not it: "archive user-1O" over the record user-10 reads as naming it.
 * Every member is read, so a pair far apart in the manifest is found too, and no pair is compared: a first pass keeps
 * one 53-bit hash of each id's skeleton (8 bytes a member, so memory stays small for millions of members), and only
 * where two hashes meet does a second pass bucket those ids by the skeleton itself. Members are read by id alone, a
 * page at a time. The answer is kept by selection, digest and the agent's words, since frozen members never change.
 */
export async function lookalikeIds(
  selection: { readonly selection_id: string; readonly digest: string },
  members: (afterOrd: number, limit: number) => Promise<readonly MemberId[]>,
  agentTexts: readonly string[] = [],
): Promise<LookalikeIds> {
  const key = JSON.stringify([selection.selection_id, selection.digest, agentTexts])
  const known = kept.get(key)
  if (known) return known
  const words = wordsOf(agentTexts)
  const named: { word: string; id: string }[] = []
  let hashes = new Float64Array(WALK_PAGE)
  let count = 0
  await eachId(members, (id) => {
    const skeleton = confusableSkeleton(id)
    if (count === hashes.length) {
      const grown = new Float64Array(hashes.length * 2)
      grown.set(hashes)
      hashes = grown
    }
    hashes[count++] = skeletonHash(skeleton)
    for (const word of words.get(skeleton) ?? []) if (word !== id) named.push({ word, id })
  })
  const sorted = hashes.subarray(0, count).sort()
  const met = new Set<number>()
  for (let i = 1; i < count; i++) if (sorted[i] === sorted[i - 1]) met.add(sorted[i]!)
  // the ids of each skeleton met twice, in frozen order; a group only where two of them share the skeleton itself
  const bySkeleton = new Map<string, string[]>()
  if (met.size > 0)
    await eachId(members, (id) => {
      const skeleton = confusableSkeleton(id)
      if (!met.has(skeletonHash(skeleton))) return
      const ids = bySkeleton.get(skeleton)
      if (ids) ids.push(id)
      else bySkeleton.set(skeleton, [id])
    })
  const alike = new Map([...bySkeleton].filter(([, ids]) => ids.length > 1))
  const groups = [...alike.values()]
  const answer: LookalikeIds = {
    groups: groups.slice(0, GROUPS_SHOWN).map((ids) => {
      const codePoints = spelled(ids)
      return ids.map((id, i) => ({ id, code_points: codePoints[i]! }))
    }),
    more_groups: Math.max(0, groups.length - GROUPS_SHOWN),
    named: named.slice(0, GROUPS_SHOWN).map(({ word, id }) => {
      const [inWord, inId] = spelled([word, id])
      return { word, word_code_points: inWord!, id, id_code_points: inId! }
    }),
    more_named: Math.max(0, named.length - GROUPS_SHOWN),
  }
  if (kept.size >= KEPT) kept.delete(kept.keys().next().value!)
  kept.set(key, answer)
  return answer
}
