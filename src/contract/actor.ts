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

export interface Actor {
  readonly principal: string
  readonly name: string
  readonly role: Role
  readonly scopes: Scopes
  readonly surface: Surface
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
