import type { NotificationEventKind } from '../config/index.js'
import { revealed } from '../contract/index.js'

/**
 * What a notification may say about a plan: where, what, how many, and where to look. Never a record, an
 * id of a record, an action parameter (free text an agent wrote) or a field value.
 */
export interface PlanFacts {
  readonly plan_id: string
  readonly resource: string
  readonly environment: string
  /** the action type, e.g. `pause_collection` */
  readonly action: string
  readonly target_count: number
}

export type NotificationEvent =
  | {
      readonly kind: 'plan.awaiting_review'
      readonly plan: PlanFacts
      readonly reviewers_needed: number
      /** the proposer's name */
      readonly proposed_by: string | null
      /** when the plan dies with its selection */
      readonly expires_at: string | null
    }
  | {
      readonly kind: 'plan.decided'
      readonly plan: PlanFacts
      readonly decision: 'approve' | 'reject'
      /** the reviewer's name */
      readonly decided_by: string | null
      /** the plan's state after the decision: `approved`, `rejected`, or `pending` when another reviewer is needed */
      readonly plan_state: string
      readonly still_needed: number
    }
  | {
      readonly kind: 'operation.finished' | 'operation.halted'
      readonly plan: PlanFacts
      readonly operation_id: string
      readonly state: string
      /** targets per outcome */
      readonly counts: Readonly<Record<string, number>>
      /** the stop rule that halted it (its name only: the message may name a record) */
      readonly halt_rule: string | null
    }

export type NotificationFormat = 'json' | 'slack'

/** The JSON body of a `json` webhook. Field names are part of the public contract. */
export interface NotificationPayload {
  readonly event: NotificationEventKind
  /** stable across the retries of one delivery: receivers de-duplicate on it */
  readonly delivery_id: string
  readonly occurred_at: string
  readonly resource: string
  readonly environment: string
  readonly action: string
  readonly target_count: number
  readonly plan_id: string
  readonly plan_url: string
  readonly operation_id: string | null
  readonly operation_url: string | null
  /** what happened: the decision, the operation's state and counts */
  readonly outcome: Readonly<Record<string, unknown>>
  /** one human sentence naming the environment, the action, the count and the link */
  readonly text: string
}

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`

/** `pause_collection on 482 subscriptions records`: the resource name is used as the noun. */
function what(plan: PlanFacts): string {
  return `${plan.action} on ${plural(plan.target_count, 'record')} of ${plan.resource}`
}

/** The sentence every format carries. */
export function sentenceOf(event: NotificationEvent, links: { readonly plan: string; readonly operation: string | null }): string {
  const where = `in ${event.plan.environment}`
  switch (event.kind) {
    case 'plan.awaiting_review':
      return `Review needed ${where}: ${what(event.plan)}; ${event.reviewers_needed === 1 ? 'one reviewer' : `${event.reviewers_needed} distinct reviewers`} must approve. ${links.plan}`
    case 'plan.decided': {
      // A reviewer's name reads as the review pages show it: "аlice" (a Cyrillic а) must not pass for alice in chat.
      const by = event.decided_by ? ` by ${revealed(event.decided_by)}` : ''
      if (event.decision === 'reject') return `Rejected${by} ${where}: ${what(event.plan)}. ${links.plan}`
      const next = event.plan_state === 'approved' ? 'the plan is approved and may be committed' : `${event.still_needed} more reviewer approval(s) needed`
      return `Approved${by} ${where}: ${what(event.plan)}; ${next}. ${links.plan}`
    }
    case 'operation.finished':
    case 'operation.halted': {
      const counts = ['succeeded', 'failed', 'skipped', 'unknown', 'pending']
        .map((k) => `${(event.counts[k] ?? 0) + (k === 'pending' ? (event.counts.in_flight ?? 0) : 0)} ${k}`)
        .join(', ')
      const head = event.kind === 'operation.halted' ? `Operation HALTED (${event.halt_rule ?? 'stop rule'})` : `Operation ${event.state}`
      return `${head} ${where}: ${what(event.plan)}: ${counts}. ${links.operation ?? links.plan}`
    }
  }
}

/**
 * A person's name twice: as stored, which receivers match on, and as the review pages and `text` show it, for a
 * receiver that composes its own message: "аlice" (a Cyrillic а) in `decided_by` would pass for alice in chat.
 */
const named = (field: 'proposed_by' | 'decided_by', name: string | null) => ({ [field]: name, [`${field}_revealed`]: name === null ? null : revealed(name) })

function outcomeOf(event: NotificationEvent): Record<string, unknown> {
  switch (event.kind) {
    case 'plan.awaiting_review':
      return { plan_state: 'pending', reviewers_needed: event.reviewers_needed, ...named('proposed_by', event.proposed_by), expires_at: event.expires_at }
    case 'plan.decided':
      return { decision: event.decision, ...named('decided_by', event.decided_by), plan_state: event.plan_state, still_needed: event.still_needed }
    default:
      return { state: event.state, counts: { ...event.counts }, halt_rule: event.halt_rule }
  }
}

/** Slack's mrkdwn needs &, < and > escaped. */
const slackEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/**
 * The body sent to one webhook. `baseUrl` is where the review pages are served (`server.public_url`).
 *
 * @example payloadOf(event, { format: 'json', deliveryId: 'whd_1', occurredAt, baseUrl: 'https://warrant.example' })
 */
export function payloadOf(
  event: NotificationEvent,
  options: { readonly format: NotificationFormat; readonly deliveryId: string; readonly occurredAt: string; readonly baseUrl: string },
): Record<string, unknown> {
  const base = options.baseUrl.replace(/\/+$/, '')
  const planUrl = `${base}/review/plans/${encodeURIComponent(event.plan.plan_id)}`
  const operationId = 'operation_id' in event ? event.operation_id : null
  const operationUrl = operationId ? `${base}/review/operations/${encodeURIComponent(operationId)}` : null
  const text = sentenceOf(event, { plan: planUrl, operation: operationUrl })
  if (options.format === 'slack') {
    const link = operationUrl ?? planUrl
    const sentence = sentenceOf(event, { plan: '', operation: null }).trim()
    return { text: `${slackEscape(sentence)} <${link}|${operationUrl ? 'Open the operation' : 'Open the plan'}>` }
  }
  const payload: NotificationPayload = {
    event: event.kind,
    delivery_id: options.deliveryId,
    occurred_at: options.occurredAt,
    resource: event.plan.resource,
    environment: event.plan.environment,
    action: event.plan.action,
    target_count: event.plan.target_count,
    plan_id: event.plan.plan_id,
    plan_url: planUrl,
    operation_id: operationId,
    operation_url: operationUrl,
    outcome: outcomeOf(event),
    text,
  }
  return { ...payload }
}
