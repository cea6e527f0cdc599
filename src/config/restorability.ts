import type { WriteConfig } from './schema.js'

/**
 * How far a compensation can restore what an action writes. A compensation writes through the action's own request
 * with each record's before-values: a `DELETE` deletes again, and an endpoint that does the change itself
 * (`POST /things/{id}/close`) restores nothing where its body carries no set field, and otherwise only if it sets what
 * its body says. One judgement for the review pages, the plan service (which refuses to propose what cannot restore)
 * and the config check, so no surface calls reversible what another refuses.
 *
 * `reason` is a stable code: `declared_irreversible`, `delete_not_restorable`, `body_sets_no_field`.
 */
export type Restorability =
  | { readonly kind: 'restorable' }
  | { readonly kind: 'refused'; readonly reason: 'declared_irreversible' }
  | { readonly kind: 'refused'; readonly reason: 'delete_not_restorable' | 'body_sets_no_field'; readonly request: string }
  | { readonly kind: 'if_endpoint_sets'; readonly request: string }

/** @example restorabilityOf(true, { style: 'action', method: 'DELETE', path: '/things/{id}', … }) // refused, delete_not_restorable */
export function restorabilityOf(reversible: boolean, write: WriteConfig | null | undefined): Restorability {
  if (!reversible) return { kind: 'refused', reason: 'declared_irreversible' }
  if (!write || write.style !== 'action') return { kind: 'restorable' }
  const request = `${write.method} ${write.path}`
  if (write.method === 'DELETE') return { kind: 'refused', reason: 'delete_not_restorable', request }
  if (!JSON.stringify(write.body ?? null).includes('{{set.')) return { kind: 'refused', reason: 'body_sets_no_field', request }
  return { kind: 'if_endpoint_sets', request }
}

/**
 * Why a compensation of `actionType` is refused, in the words the refusal (`assertRestorable`), `warrant check` and
 * the MCP operation summary share; null where one can be proposed (`restorabilityOf` not `refused`).
 *
 * @example notRestorableText('remove', restorabilityOf(true, deleteWrite)) // 'action "remove" cannot be compensated: its write is DELETE …'
 */
export function notRestorableText(actionType: string, judged: Restorability): string | null {
  if (judged.kind !== 'refused') return null
  if (judged.reason === 'declared_irreversible') return `action "${actionType}" is declared irreversible; there is no compensation to propose`
  const why =
    judged.reason === 'delete_not_restorable'
      ? `its write is ${judged.request}, and a compensation would send that DELETE again, which restores no removed record`
      : `its write is ${judged.request}, whose body carries no set field, and a compensation would send that same request again without the before-values`
  return `action "${actionType}" cannot be compensated: ${why} (though the config declares it reversible)`
}
