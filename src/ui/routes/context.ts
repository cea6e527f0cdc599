import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { type Actor, WarrantError } from '../../contract/index.js'
import type { Gateway } from '../../gateway/index.js'
import { isRefusal, markRequestAudited } from '../../audit/index.js'
import type { ReviewSession } from '../../review/index.js'
import { type WriteConfig, connectorHostsOf, mislabelledHostOf } from '../../config/index.js'
import { type PlanView, actionConfigOf } from '../../plans/index.js'
import type { Reach, Viewer } from '../components.js'
import type { FieldTypes, IdField } from '../format.js'
import { DEFAULT_PAGE_SIZE, PAGE_SIZES } from '../selection-parts.js'

export type UiEnv = { Variables: { viewer: Viewer; session: ReviewSession } }
export type Ctx = Context<UiEnv>

export interface UiAuditEvent {
  plan_id?: string | null
  selection_id?: string | null
  operation_id?: string | null
  summary?: Record<string, unknown>
  details?: Record<string, unknown> | null
}

/** What every area of the review pages registers its routes with. */
export interface ReviewRouteDeps {
  readonly gateway: Gateway
  /** Run-level audit of what a reviewer did on these pages. */
  readonly recordUi: (actor: Actor | null, action: string, event: UiAuditEvent) => Promise<unknown>
}

/** Recording never fails the page: the reviewer's action already happened, and the failure is logged. */
export function uiAuditRecorder(gateway: Gateway): ReviewRouteDeps['recordUi'] {
  return (actor, action, event) => {
    markRequestAudited()
    const summary = event.summary ?? {}
    // the rule the listing's `refused_claim` and who-asked read the row by (a status of 400 or more, or an `error`):
    // a refusal is always written `refused` (a summary's own `outcome: ok` beside a 403 never stands); a row that is
    // none keeps its own outcome (an export's `started`, `failed`)
    const { outcome: own, ...rest } = summary
    const outcome = isRefusal(summary) ? 'refused' : (own ?? 'ok')
    return gateway.audit.record({ actor, surface: 'ui', action, ...event, summary: { outcome, ...rest } }).catch((error: unknown) => gateway.log.error({ err: error, action }, 'review pages: could not record an audit event'))
  }
}

/** Renders a page component to a full HTML document. */
export async function html(c: Ctx, node: unknown, status: ContentfulStatusCode = 200): Promise<Response> {
  const body = `<!doctype html>${await (node as { toString(): string | Promise<string> }).toString()}`
  return c.body(body, status, { 'content-type': 'text/html; charset=utf-8' })
}

/**
 * The declared field types of a resource, as the config holds them now (none for a resource no longer configured):
 * a number field may hold its exact digits as text, which the pages then show as the number, not as text.
 */
export function fieldTypesOf(gateway: Gateway, resource: string | null | undefined): FieldTypes {
  const config = resource ? gateway.config.resources[resource] : undefined
  return config?.fields ?? {}
}

/** A template that takes a parameter's value: `{{params.reason}}`, whole or inside other text. */
const PARAM_TEMPLATE = /\{\{\s*params\./

/**
 * The fields a plan's action sets from the agent's parameters, as the config holds the action now: their values are
 * the agent's words, shown set apart. None for a compensation (it restores the records' before-values) or an action
 * no longer configured.
 */
export function agentWrittenFields(gateway: Gateway, plan: { readonly resource: string; readonly compensates: string | null; readonly action: { readonly type: string } }): ReadonlySet<string> {
  const actions = plan.compensates ? undefined : gateway.config.resources[plan.resource]?.actions
  const action = actions && Object.hasOwn(actions, plan.action.type) ? actions[plan.action.type] : undefined
  return new Set(Object.entries(action?.set ?? {}).filter(([, template]) => PARAM_TEMPLATE.test(JSON.stringify(template))).map(([field]) => field))
}

/** A manifest page size from the query; anything not offered falls back to the default rather than failing. */
export function pageSize(value: string | undefined): number {
  const n = Number(value)
  return (PAGE_SIZES as readonly number[]).includes(n) ? n : DEFAULT_PAGE_SIZE
}

/** The hosts the resource's connector reaches and whether its environment label names another (none for an unknown resource). */
/** The resource's id field and its declared type (an integer id's digits are shown as that number); undefined for a resource no longer configured. */
export function idFieldOf(gateway: Gateway, resource: string | null | undefined): IdField | undefined {
  const config = resource ? gateway.config.resources[resource] : undefined
  return config ? { field: config.id_field, type: config.fields[config.id_field] } : undefined
}

export function reachOf(gateway: Gateway, resource: string | null | undefined): Reach {
  const config = resource ? gateway.config.resources[resource] : undefined
  if (config === undefined) return { hosts: [], mislabelled: null }
  const hosts = connectorHostsOf(config.connector)
  return { hosts, mislabelled: mislabelledHostOf(config.environment, hosts) }
}

/** The write config an http plan's records are written by; null for a sql resource or an action no longer configured. */
export function writeConfigOf(gateway: Gateway, plan: Pick<PlanView, 'resource' | 'compensates' | 'action'>): WriteConfig | null {
  if (gateway.config.resources[plan.resource]?.connector.kind !== 'http') return null
  try {
    return actionConfigOf(gateway, plan).write ?? null
  } catch (error) {
    if (error instanceof WarrantError && error.code === 'conflict') return null
    throw error
  }
}
