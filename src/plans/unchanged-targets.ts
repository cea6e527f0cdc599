import type { PlanView } from './schemas.js'

type Counted = Pick<PlanView, 'target_count' | 'changes' | 'precondition'>

/**
 * The targets a plan's write leaves as they are, split: `skipped`, failing the precondition as frozen (for a
 * compensation, no longer holding what the operation wrote, as read when it was proposed), and `held`, holding every
 * value it sets already. Both null where the split is not known (a member could not be judged). Null for a plan whose
 * changing count is unknown.
 *
 * @example unchangedTargets(plan) // { changing: 1701, skipped: 129, held: 0 }
 */
export function unchangedTargets(plan: Counted): { readonly changing: number; readonly skipped: number | null; readonly held: number | null } | null {
  const { changing } = plan.changes
  if (changing === null) return null
  const skipped = plan.precondition.failing_now
  return { changing, skipped, held: skipped === null ? null : plan.target_count - changing - skipped }
}

/**
 * Why the targets a write does not change are left as they are, in words every surface shows: "129 fail the
 * precondition as frozen and would be skipped". Empty when it changes every target (or the count is unknown).
 *
 * @example `${changing} of ${plan.target_count} change; ${unchangedWords(plan)}` // the UI passes its number format
 */
export function unchangedWords(plan: Counted, format: (n: number) => string = String): string {
  const u = unchangedTargets(plan)
  if (u === null || u.changing >= plan.target_count) return ''
  if (u.skipped === null || u.held === null) return `${format(plan.target_count - u.changing)} already hold every value it sets or would be skipped`
  const parts: string[] = []
  if (u.held > 0 && plan.target_count === 1) parts.push('the record already holds every value it sets')
  else if (u.held > 0) parts.push(`${u.held === plan.target_count ? 'all ' : ''}${format(u.held)} already hold${u.held === 1 ? 's' : ''} every value it sets`)
  if (u.skipped > 0) {
    const s = u.skipped === 1 ? 's' : ''
    parts.push(plan.precondition.per_target ? `${format(u.skipped)} no longer hold${s} what the operation wrote and would be skipped` : `${format(u.skipped)} fail${s} the precondition as frozen and would be skipped`)
  }
  return parts.join('; ')
}
