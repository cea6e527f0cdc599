import { type Actor, type FieldTypeNames, WarrantError, matchesFilter } from '../contract/index.js'
import type { Resource } from '../resources/index.js'
import type { SelectionContext } from './context.js'
import { MEMBER_ORDERING } from './id-order.js'
import { load } from './load.js'
import { assertMembersKept } from './pruned-members.js'
import { checkLimit, memberView, nextCursor } from './paging.js'
import type { ExcludedPage } from './schemas.js'
import type { ExclusionRule, SelectionService } from './selection-service.js'

/** Stated in every view, because per-rule counts only add up to the excluded total under this rule. */
export const EXCLUSION_ATTRIBUTION = 'a record matching several exclusion rules is excluded once, under the first rule it matches (rules apply in the order given)'

/** The rule a record is excluded under (see EXCLUSION_ATTRIBUTION), or undefined when it is a member. */
export function firstMatchingRule(rules: readonly ExclusionRule[], fields: Readonly<Record<string, unknown>>, types: FieldTypeNames): ExclusionRule | undefined {
  return rules.find((r) => matchesFilter(fields, r.filter, types))
}

/** Rule names key the excluded lists and their URLs, so two rules cannot share one. */
export function checkExclusionRules(resource: Resource, rules: readonly ExclusionRule[]): void {
  const names = new Set<string>()
  rules.forEach((rule, i) => {
    if (names.has(rule.rule)) throw new WarrantError('invalid_request', `exclusion rule "${rule.rule}" is named twice; each rule needs its own name`, { field: `exclude.${i}.rule` })
    names.add(rule.rule)
    resource.policy.checkFilter(rule.filter, `exclude[${i}] "${rule.rule}" filter`)
  })
}

export async function excludedPage(
  ctx: SelectionContext,
  actor: Actor,
  selectionId: string,
  query: Parameters<SelectionService['excluded']>[2],
): Promise<ExcludedPage> {
  const selection = await load(ctx, actor, selectionId)
  assertMembersKept(selection)
  const rule = selection.exclusions.find((e) => e.rule === query.rule)
  if (!rule)
    throw new WarrantError(
      'invalid_request',
      `selection ${selectionId} has no exclusion rule "${query.rule}"; its rules: ${selection.exclusions.map((e) => e.rule).join(', ') || '(none)'}`,
      { field: 'rule' },
    )
  const limit = checkLimit(query.limit)
  const list = `excluded:${rule.rule}`
  const after = ctx.cursors.decode(selectionId, list, query.cursor, rule.count)
  const rows = await ctx.db
    .selectFrom('selection_exclusions')
    .select(['ord', 'record_id', 'version', 'fields'])
    .where('selection_id', '=', selectionId)
    .where('rule', '=', rule.rule)
    .where('ord', '>', after)
    .orderBy('ord')
    .limit(limit)
    .execute()
  const page = rows.map((r) => ({ ord: Number(r.ord), id: r.record_id, version: r.version, fields: JSON.parse(r.fields) as Record<string, unknown> }))
  return {
    selection_id: selectionId,
    rule: rule.rule,
    filter: rule.filter,
    count: rule.count,
    complete: selection.complete,
    incomplete_reasons: [...selection.completeness.incomplete_reasons],
    records: page.map((m) => memberView(m, selection.fields)),
    next_cursor: nextCursor(ctx, selectionId, list, page, limit, rule.count),
    page: { returned: page.length, limit, ordering: MEMBER_ORDERING },
  }
}
