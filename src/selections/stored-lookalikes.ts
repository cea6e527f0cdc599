import type { SelectionContext } from './context.js'
import { memberIds } from './load.js'
import { type LookalikeIds, lookalikeAnswer, namedWords, walkLookalikes } from './lookalike-ids.js'
import type { SelectionRecord } from './selection-service.js'

/**
 * A selection's ids drawn alike, as its freeze stored them, and the words of the agent's parameters drawn like one
 * of its ids. No member is read for the groups: the freeze found them as it wrote the members. A selection frozen
 * before 0013 has none stored: its members are walked once (the words' half in the same pass) and what was found is
 * stored, so the next view, here or in any process sharing the store, reads it. Storing is only a saving: a store
 * refusing the write (busy, read-only) still gets the answer, and a later view tries again.
 */
export async function lookalikesOf(ctx: SelectionContext, selection: SelectionRecord, agentTexts: readonly string[] = []): Promise<LookalikeIds> {
  const id = selection.selection_id
  const pages = (after: number, limit: number) => memberIds(ctx, id, after, limit)
  if (selection.lookalike_ids) return lookalikeAnswer(selection.lookalike_ids, await namedWords(selection, pages, agentTexts))
  const { stored, named } = await walkLookalikes(pages, agentTexts)
  try {
    // members never change once frozen: any view storing it stores the same answer, the first one in keeps it
    await ctx.db.updateTable('selections').set({ lookalike_ids: JSON.stringify(stored) }).where('id', '=', id).where('lookalike_ids', 'is', null).where('state', '=', 'frozen').execute()
  } catch {
    // the answer stands; only the saving is lost
  }
  return lookalikeAnswer(stored, named)
}
