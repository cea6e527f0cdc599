import type { Store } from '../store/index.js'
import { isRefusedClaim, parseJson } from './entry.js'

const PAGE = 1000

interface NamingRow {
  readonly seq: number
  readonly level: string
  readonly surface: string
  readonly summary: string
  readonly id: string | null
}

/**
 * The plans and selections "who asked" gathers an operation's events by: its own (the operations and plans tables),
 * and those its rows name where the row is no refused claim (a compensation's proposal names the operation and its
 * new plan; a refused request's ids are only what its caller claimed). Each row is judged by isRefusedClaim, the
 * rule the listing's `refused_claim` and who-asked's own summary follow, never by a text search of the summary: an
 * accepted request whose body holds `{"outcome":"refused"}` is no refusal. Only rows naming an id not yet known are
 * read: the operation's own rows (thousands on a watched one) name its own plan and selection.
 */
export async function linkedIds(store: Store, operationId: string): Promise<{ planIds: string[]; selectionIds: string[] }> {
  const db = store.db
  const plans = new Set((await db.selectFrom('operations').select('plan_id').where('id', '=', operationId).execute()).map((r) => r.plan_id))
  await gather(plans, (known, after) => {
    let q = db
      .selectFrom('audit_events')
      .select(['seq', 'level', 'surface', 'summary', 'plan_id as id'])
      .where('operation_id', '=', operationId)
      .where('plan_id', 'is not', null)
      .where('seq', '>', after)
    if (known.length > 0) q = q.where('plan_id', 'not in', known)
    return q.orderBy('seq').limit(PAGE).execute()
  })
  const planIds = [...plans]
  const selections = new Set<string>()
  if (planIds.length > 0) for (const r of await db.selectFrom('plans').select('selection_id').where('id', 'in', planIds).execute()) selections.add(r.selection_id)
  await gather(selections, (known, after) => {
    let q = db
      .selectFrom('audit_events')
      .select(['seq', 'level', 'surface', 'summary', 'selection_id as id'])
      .where('selection_id', 'is not', null)
      .where((eb) => eb.or([eb('operation_id', '=', operationId), ...(planIds.length > 0 ? [eb('plan_id', 'in', planIds)] : [])]))
      .where('seq', '>', after)
    if (known.length > 0) q = q.where('selection_id', 'not in', known)
    return q.orderBy('seq').limit(PAGE).execute()
  })
  return { planIds, selectionIds: [...selections] }
}

/** Adds the id of each row that is no refused claim, a page at a time, leaving out the ids already known. */
async function gather(ids: Set<string>, page: (known: string[], after: number) => Promise<NamingRow[]>): Promise<void> {
  for (let after = 0; ; ) {
    const rows = await page([...ids], after)
    for (const row of rows) if (row.id !== null && !isRefusedClaim({ level: row.level, surface: row.surface, summary: parseJson(row.summary) })) ids.add(row.id)
    if (rows.length < PAGE) return
    after = rows[rows.length - 1]!.seq
  }
}
