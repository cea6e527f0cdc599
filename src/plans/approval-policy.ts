import { type Filter, canonicalJson, clausesOf, matchesFilter } from '../contract/index.js'
import type { ResourceConfig } from '../config/index.js'
import type { Catalogue, Resource } from '../resources/index.js'
import type { PlanRow } from '../store/index.js'
import type { SelectionRecord } from '../selections/selection-service.js'
import { type PlanContext, forEachMember } from './plan-context.js'
import type { RunLimits } from './run-limits.js'
import type { ApprovalPolicy } from './schemas.js'

/** The policy as stored on the plan: what the reviewer is told, and what a commit re-checks. */
export interface StoredPolicy extends ApprovalPolicy {
  /** sha256 of the action's configuration when proposed: a commit refuses a plan whose action was redefined. */
  readonly action_definition_digest: string
  /** `upstreamDigestOf` the resource when proposed: a commit refuses a plan whose connector points elsewhere since. Absent on older plans. */
  readonly upstream_digest?: string
  /** The stop rules and pacing its operation runs under (`run-limits.ts`). Absent on older plans: they run under the config at commit. */
  readonly run_limits?: RunLimits
  /** A compensation's `writtenSetDigestOf` when proposed: a commit refuses it once that `set` is redefined. Absent on other and older plans. */
  readonly written_set_digest?: string
}

export interface StandingCandidate {
  readonly name: string
  readonly max_count: number
  readonly flagged: Filter | undefined
}

/**
 * Flagged members per standing approval, counted during the proposal's single pass over the members, and the fields its
 * flagged filter tests that members were not frozen with (`unfrozenFields`).
 */
export type FlaggedCounts = ReadonlyMap<string, { count: number; sample: string[]; unfrozen: Set<string> }>

/**
 * The fields `filter` tests that a frozen member does not hold. A member keeps only the fields the config of its freeze
 * asked for, so a flagged filter written since on another field (`version`, `updated_at`) finds it absent on every member
 * and matches none: a member lacking one cannot be judged by the filter, and a standing approval is then no waiver.
 */
export function unfrozenFields(filter: Filter, fields: Readonly<Record<string, unknown>>): string[] {
  return [...new Set(clausesOf(filter).map((c) => c.field))].filter((f) => !Object.hasOwn(fields, f))
}

/** Standing approvals whose selector (filter and exclusion rules, compared canonically) and action match. */
export function standingCandidates(config: ResourceConfig, selection: SelectionRecord, type: string): StandingCandidate[] {
  const same = (a: Filter, b: Filter) => canonicalJson(clausesOf(a)) === canonicalJson(clausesOf(b))
  const sameRules = (a: readonly { rule: string; filter: Filter }[], b: readonly { rule: string; filter: Filter }[]) =>
    a.length === b.length && a.every((r, i) => r.rule === b[i]!.rule && same(r.filter, b[i]!.filter))
  return config.standing_approvals
    .filter((s) => s.action === type && same(s.selector, selection.selector.filter) && sameRules(s.exclude, selection.selector.exclude))
    .map((s) => ({ name: s.name, max_count: s.max_count, flagged: s.flagged }))
}

/**
 * The first standing approval that fully applies waives review; otherwise one reviewer, or two above the
 * resource's threshold. Why a candidate did not apply goes into the reason, so the reviewer sees it.
 */
export function decidePolicy(
  p: { readonly resource: Resource; readonly selection: SelectionRecord },
  candidates: readonly StandingCandidate[],
  flagged: FlaggedCounts,
): ApprovalPolicy {
  const ttl = p.resource.config.approval.ttl_minutes
  const count = p.selection.count
  const notes: string[] = []
  for (const c of candidates) {
    const f = flagged.get(c.name)!
    // A cut-short walk's count says nothing about how many records the selector matches, so max_count cannot be judged.
    if (!p.selection.complete)
      notes.push(`standing approval "${c.name}" does not apply: the selection is incomplete, so its ${count} target(s) are only what the walk returned, not every record its selector matches`)
    else if (count > c.max_count) notes.push(`standing approval "${c.name}" does not apply: ${count} targets, above its max_count of ${c.max_count}`)
    else if (f.unfrozen.size > 0)
      notes.push(
        `standing approval "${c.name}" does not apply: its flagged filter tests ${[...f.unfrozen].map((x) => `"${x}"`).join(', ')}, which the members were not frozen with (the config changed since the selection was frozen, or another instance froze it), so no member can be judged by it`,
      )
    else if (f.count > 0)
      notes.push(`standing approval "${c.name}" does not apply: ${f.count} member(s) match its flagged filter ${JSON.stringify(c.flagged)} (${f.sample.join(', ')}${f.count > f.sample.length ? ', …' : ''})`)
    else
      return {
        required: 'none',
        reviewers_needed: 0,
        reason: `standing approval "${c.name}": the selector and action match it, ${count} target(s) is within its max_count of ${c.max_count}, and no member is flagged`,
        standing_approval: c.name,
        ttl_minutes: ttl,
      }
  }
  const above = p.resource.config.approval.two_reviewers_above
  const base =
    above !== undefined && count > above
      ? { required: 'two_reviewers' as const, reviewers_needed: 2, reason: `${count} targets, more than the resource's two_reviewers_above (${above}): two distinct reviewers must approve` }
      : { required: 'one_reviewer' as const, reviewers_needed: 1, reason: `${count} target(s): one reviewer must approve${above !== undefined ? ` (two above ${above})` : ''}` }
  if (!p.selection.complete) notes.push('no reviewer can approve it until the selection is recovered (a reviewer can still reject it)')
  return { ...base, reason: [base.reason, ...notes].join('; '), standing_approval: null, ttl_minutes: ttl }
}

/**
 * The policy a plan is held to now: as stored at proposal, raised to two reviewers where the resource's config now
 * asks two for this many targets (`two_reviewers_above` lowered since), its approvals' TTL shortened where the config
 * now asks a shorter one. Never lowered or lengthened: an approval given under a
 * stricter config keeps the plan to it. The view, a decision and a commit all read it from here.
 *
 * @example policyNow(catalogue, row, selection.count).reviewers_needed // 2 once two_reviewers_above fell below count
 */
export function policyNow(catalogue: Catalogue, row: Pick<PlanRow, 'policy' | 'resource'>, count: number): StoredPolicy {
  const proposed = JSON.parse(row.policy) as StoredPolicy
  if (!catalogue.names.includes(row.resource)) return proposed
  const approval = catalogue.get(row.resource).config.approval
  // An approval lasts the shorter of the TTL stored and the one the config asks now: an operator who shortens it
  // (after an incident) means every approval given from then on, not only those on plans proposed since.
  const stored = approval.ttl_minutes < proposed.ttl_minutes ? { ...proposed, ttl_minutes: approval.ttl_minutes } : proposed
  if (stored.reviewers_needed !== 1) return stored
  const above = approval.two_reviewers_above
  if (above === undefined || count <= above) return stored
  return {
    ...stored,
    required: 'two_reviewers',
    reviewers_needed: 2,
    reason: `${stored.reason}; since it was proposed the resource asks two distinct reviewers above ${above} targets (two_reviewers_above), so two must approve`,
  }
}

/** A standing approval is re-checked at commit, since the config or the members' flags may have changed since proposing. */
export async function standingStillApplies(ctx: PlanContext, resource: Resource, selection: SelectionRecord, type: string, name: string | null): Promise<string | null> {
  const candidate = standingCandidates(resource.config, selection, type).find((c) => c.name === name)
  if (!candidate || !selection.complete || selection.count > candidate.max_count) return null
  let flagged = false
  if (candidate.flagged) {
    const flag = candidate.flagged
    await forEachMember(ctx, selection.selection_id, (m) => {
      if (unfrozenFields(flag, m.fields).length > 0 || matchesFilter(m.fields, flag, resource.config.fields)) flagged = true
    })
  }
  return flagged ? null : candidate.name
}
