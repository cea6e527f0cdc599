import { z } from 'zod'
import { codePointName, confusableSkeleton, differingParts } from '../contract/index.js'
import type { SelectionMember } from './selection-service.js'

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

/**
 * The ids of a frozen selection drawn alike (`confusableSkeleton`: " r002 " and "r002", NFC and NFD "café",
 * "admin-I" and "admin-l", "user-10" and "user-1O", "ﬁle" and "file"): the upstream holds them as separate records,
 * and a reviewer approving a change to one may be reading another. And the words of the agent's parameters
 * (`agentTexts`) drawn like a member's id but not it: "archive user-1O" over the record user-10 reads as naming it.
 * One skeleton per id, bucketed: no pair is compared, so a million ids cost a million skeletons. Every member is read
 * (one page of ids at a time), so a pair far apart in the manifest is found too; the answer is kept by selection,
 * digest and the agent's words, since frozen members never change.
 */
export async function lookalikeIds(
  selection: { readonly selection_id: string; readonly digest: string },
  members: (afterOrd: number, limit: number) => Promise<readonly SelectionMember[]>,
  agentTexts: readonly string[] = [],
): Promise<LookalikeIds> {
  const key = JSON.stringify([selection.selection_id, selection.digest, agentTexts])
  const known = kept.get(key)
  if (known) return known
  const words = wordsOf(agentTexts)
  // the first id of each skeleton; a group only where a second one comes (most ids are their own skeleton)
  const first = new Map<string, string>()
  const alike = new Map<string, string[]>()
  const named: { word: string; id: string }[] = []
  for (let after = 0; ; ) {
    const page = await members(after, WALK_PAGE)
    for (const m of page) {
      const skeleton = confusableSkeleton(m.id)
      const seen = first.get(skeleton)
      if (seen === undefined) first.set(skeleton, m.id)
      else if (alike.has(skeleton)) alike.get(skeleton)!.push(m.id)
      else alike.set(skeleton, [seen, m.id])
      for (const word of words.get(skeleton) ?? []) if (word !== m.id) named.push({ word, id: m.id })
    }
    if (page.length < WALK_PAGE) break
    after = page[page.length - 1]!.ord
  }
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
