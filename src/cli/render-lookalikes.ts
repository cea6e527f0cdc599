import type { LookalikeIds, SelectionLookalikes } from '../selections/index.js'
import { cellText as cell } from './table-cell.js'

/** A value as the CLI's cells write it, then the code points where it differs from the others of its group. */
const spelled = (value: string, codePoints: readonly string[]) => `${value} (${codePoints.length === 0 ? 'no character apart' : codePoints.join(' ')})`

/**
 * The view's `lookalike_ids` for a terminal, as the review pages and the MCP summaries say them: each group of ids
 * drawn alike on one line, every id shown with the code points where it differs; on a plan, each word of the agent's
 * drawn like a target's id. None when there is nothing to say: ordinary ids print no line.
 */
export function lookalikeLines(lookalikes: SelectionLookalikes | LookalikeIds, changed: string): string[] {
  const lines: string[] = []
  const { groups, more_groups } = lookalikes
  if (groups.length > 0) {
    lines.push(
      `LOOK-ALIKE IDS: ${groups.length + more_groups} group(s) of different records whose ids are drawn alike (l, I and 1; O and 0; rn and m; compatibility forms; invisible characters, end spaces, normalisation). Read the id of each record ${changed}:`,
    )
    for (const ids of groups) lines.push(`  ${ids.map(({ id, code_points }) => spelled(cell(id), code_points)).join(' · ')}`)
    if (more_groups > 0) lines.push(`  … and ${more_groups} more group(s)`)
  }
  if ('named' in lookalikes && lookalikes.named.length > 0) {
    lines.push(`LOOK-ALIKE IDS in the agent's words: ${lookalikes.named.length + lookalikes.more_named} word(s) drawn like a record id of this selection but not it; the record changed is the id, not the word:`)
    for (const n of lookalikes.named) lines.push(`  the agent's word ${spelled(cell(JSON.stringify(n.word)), n.word_code_points)} looks like the record id ${spelled(cell(n.id), n.id_code_points)}`)
    if (lookalikes.more_named > 0) lines.push(`  … and ${lookalikes.more_named} more word(s)`)
  }
  return lines
}
