import { z } from 'zod'
import { codePointName, confusableSkeleton, differingParts } from '../contract/index.js'
import { GROUPS_SHOWN, type MemberIdPages, SkeletonHashes, type StoredLookalikes, eachId, groupsWhereMet } from './lookalike-groups.js'

export type { MemberId } from './lookalike-groups.js'

/** Words' answers kept: a frozen selection's members and a plan's parameters never change, so each is read once per process. */
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

/** A word of the agent's drawn like a member's id though not it. */
export interface NamedWord {
  readonly word: string
  readonly id: string
}

/** The answer every surface renders, from the groups' ids and the agent's words: each spelled by code point. */
export function lookalikeAnswer(stored: StoredLookalikes, named: readonly NamedWord[]): LookalikeIds {
  return {
    groups: stored.groups.map((ids) => {
      const codePoints = spelled(ids)
      return ids.map((id, i) => ({ id, code_points: codePoints[i]! }))
    }),
    more_groups: stored.more_groups,
    named: named.slice(0, GROUPS_SHOWN).map(({ word, id }) => {
      const [inWord, inId] = spelled([word, id])
      return { word, word_code_points: inWord!, id, id_code_points: inId! }
    }),
    more_named: Math.max(0, named.length - GROUPS_SHOWN),
  }
}

/**
 * The ids of a frozen selection drawn alike (`confusableSkeleton`: " r002 " and "r002", NFC and NFD "café",
 * "admin-I" and "admin-l", "user-10" and "user-1O", "ﬁle" and "file"): the upstream holds them as separate records,
 * and a reviewer approving a change to one may be reading another. And the words of the agent's parameters
 * (`agentTexts`) drawn like a member's id but not it: "archive user-1O" over the record user-10 reads as naming it.
 * Every member is read, so a pair far apart in the manifest is found too, and no pair is compared: a first pass keeps
 * one 53-bit hash of each id's skeleton (`SkeletonHashes`), and only where two hashes meet does a second pass bucket
 * those ids by the skeleton itself. Members are read by id alone, a page at a time. The freeze makes the same two
 * passes as it writes the members and stores the groups (`MemberWriter.lookalikes`); this walk is for selections
 * frozen before that (0013), once, and its words' half for a plan's parameters.
 */
export async function walkLookalikes(members: MemberIdPages, agentTexts: readonly string[] = []): Promise<{ stored: StoredLookalikes; named: NamedWord[] }> {
  const words = wordsOf(agentTexts)
  const named: NamedWord[] = []
  const hashes = new SkeletonHashes()
  await eachId(members, (id) => {
    const skeleton = hashes.add(id)
    for (const word of words.get(skeleton) ?? []) if (word !== id) named.push({ word, id })
  })
  return { stored: await groupsWhereMet(hashes.met(), members), named }
}

/** `walkLookalikes`, answered as every surface renders it. */
export async function lookalikeIds(
  _selection: { readonly selection_id: string; readonly digest: string },
  members: MemberIdPages,
  agentTexts: readonly string[] = [],
): Promise<LookalikeIds> {
  const { stored, named } = await walkLookalikes(members, agentTexts)
  return lookalikeAnswer(stored, named)
}

const keptWords = new Map<string, NamedWord[]>()

/**
 * The agent's words drawn like a member's id (`walkLookalikes`' words' half): one pass over the ids, only when the
 * plan has texts, kept by selection, digest and the words, since neither changes once frozen and proposed.
 */
export async function namedWords(selection: { readonly selection_id: string; readonly digest: string }, members: MemberIdPages, agentTexts: readonly string[]): Promise<readonly NamedWord[]> {
  const words = wordsOf(agentTexts)
  if (words.size === 0) return []
  const key = JSON.stringify([selection.selection_id, selection.digest, agentTexts])
  const known = keptWords.get(key)
  if (known) return known
  const named: NamedWord[] = []
  await eachId(members, (id) => {
    for (const word of words.get(confusableSkeleton(id)) ?? []) if (word !== id) named.push({ word, id })
  })
  if (keptWords.size >= KEPT) keptWords.delete(keptWords.keys().next().value!)
  keptWords.set(key, named)
  return named
}
