import { z } from 'zod'

/**
 * Who is asking, as every service sees it. Surfaces build it from a token (or the CLI's local operator);
 * services check roles and scopes on it without knowing how it was authenticated.
 */
export const ROLES = ['agent', 'reviewer', 'admin'] as const
export type Role = (typeof ROLES)[number]

export const SURFACES = ['http', 'mcp', 'ui', 'cli', 'system'] as const
export type Surface = (typeof SURFACES)[number]

/** `'*'` means every resource or action. */
export interface Scopes {
  readonly resources: readonly string[] | '*'
  readonly actions: readonly string[] | '*'
}

/** Scopes as a principal's row keeps them (JSON): read where tokens authenticate and where approvals are judged. */
export const scopesSchema = z.object({
  resources: z.union([z.literal('*'), z.array(z.string())]),
  actions: z.union([z.literal('*'), z.array(z.string())]),
})

export interface Actor {
  readonly principal: string
  readonly name: string
  readonly role: Role
  readonly scopes: Scopes
  readonly surface: Surface
  /**
   * The token this request was authenticated with (absent for the CLI's local operator and the gateway itself). An
   * approval keeps it: revoking a leaked token withdraws what was approved with it.
   */
  readonly token_id?: string
}

/** Whether the actor's scope covers a resource (and, when given, an action on it). */
export function inScope(actor: Actor, resource: string, action?: string): boolean {
  const { resources, actions } = actor.scopes
  const resourceOk = resources === '*' || resources.includes(resource)
  const actionOk = action === undefined || actions === '*' || actions.includes(action) || actions.includes(`${resource}.${action}`)
  return resourceOk && actionOk
}

/** The gateway itself (crash recovery, expiry sweeps): never an approver. */
export const SYSTEM_ACTOR: Actor = {
  principal: 'system',
  name: 'warrant',
  role: 'admin',
  scopes: { resources: '*', actions: '*' },
  surface: 'system',
}
