/** How a streamed answer ended, for its audit row: the walk's end as the client got it, or why it got none. */
export interface StreamEnd {
  /** `ok`: the whole answer was sent; `client_closed`: the client left first; `failed`: a fault cut the connection */
  readonly outcome: 'ok' | 'client_closed' | 'failed'
  /** items sent */
  readonly items: number
  /**
   * why a streamed answer was cut short, where it was not a fault or the client leaving: it read nothing for the stall
   * timeout, or the request's token stopped holding while it ran (revoked, expired, its principal disabled, the
   * resource out of its scope)
   */
  readonly stopped?: 'client_stalled' | 'authority_lapsed'
  /** the envelope's end, when the walk ended (its completeness and why not) */
  readonly envelope?: { readonly complete: boolean; readonly incomplete_reasons: readonly { readonly code: string }[] }
  /** a selection export's end as its stream saw it (rows sent, end reached, why it stopped), kept whole in the row */
  readonly manifest?: Readonly<Record<string, unknown>>
  /** the seq of the row its start wrote (a selection export's `selection.export_started`), when one was written */
  readonly started_seq?: number | null
}

/** What a listing's audit row keeps of what the agent was answered. */
export interface AnswerSummary {
  /** how many entries the answer carried (items, records, changes or per-target results) */
  readonly items: number
  /** the listing's completeness (a page's: its selection's inventory), where the answer says it */
  readonly complete?: boolean
  /** each incomplete reason's code once, in order */
  readonly incomplete?: readonly string[]
  /** a page: whether a next page was offered (only this page was answered) */
  readonly next_page?: boolean
}

/** The list each listing answer carries its entries in: a search envelope, a selection or its pages, a plan's changes, an operation's results. */
const LIST_KEYS = ['items', 'records', 'changes', 'results'] as const

/**
 * What a listing answered, for its run-level audit row on every surface (HTTP, MCP): how many entries, whether it
 * was complete and the codes of why not, and for a page whether more followed. A reviewer reading the audit can
 * then tell an agent that acted on a cut listing, whichever surface it used. Takes the answer as sent (an
 * envelope answered whole, a page, a selection) or a streamed answer's end; anything else (a refusal, a plan, an
 * operation) keeps nothing.
 *
 * @example { ...answerSummary(result.structuredContent) } // { answer: { items: 200, complete: false, incomplete: ['SOURCE_UNAVAILABLE'] } }
 */
export function answerSummary(answer: unknown): { readonly answer?: AnswerSummary } {
  if (isStreamEnd(answer)) {
    const envelope = answer.envelope
    return { answer: { items: answer.items, ...(envelope ? { complete: envelope.complete, incomplete: reasonCodes(envelope.incomplete_reasons) } : {}) } }
  }
  const complete = pick(answer, 'complete')
  const next = pick(answer, 'next_cursor')
  const paged = typeof next === 'string' || next === null
  // a listing says its completeness, or is a page (a next_cursor, even null); a plan's `changes` object is neither
  if (typeof complete !== 'boolean' && !paged) return {}
  const key = LIST_KEYS.find((k) => Array.isArray(pick(answer, k)))
  if (key === undefined) return {}
  return {
    answer: {
      items: (pick(answer, key) as unknown[]).length,
      ...(typeof complete === 'boolean' ? { complete, incomplete: reasonCodes(pick(answer, 'incomplete_reasons')) } : {}),
      ...(paged ? { next_page: next !== null } : {}),
    },
  }
}

function isStreamEnd(value: unknown): value is StreamEnd {
  return typeof pick(value, 'outcome') === 'string' && typeof pick(value, 'items') === 'number'
}

/** Each reason's code once, in order (the messages are in the answer the agent got; the row stays bounded). */
function reasonCodes(reasons: unknown): string[] {
  if (!Array.isArray(reasons)) return []
  return [...new Set(reasons.map((r) => pick(r, 'code')).filter((code): code is string => typeof code === 'string'))]
}

function pick(value: unknown, key: string): unknown {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined
}
