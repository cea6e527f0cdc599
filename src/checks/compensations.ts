import { notRestorableText, restorabilityOf, type ResourceConfig } from '../config/index.js'
import type { Guarantee } from './guarantee.js'

/**
 * A warning per action the config leaves reversible (the default) whose write no compensation can restore
 * (`restorabilityOf`: a `DELETE`, an action endpoint whose body carries no set field), in the words the refusal of
 * its compensation gives (`notRestorableText`). Nothing for an action a compensation can restore, nor for one
 * declared irreversible: the config already says so. A warning, not a failure: the bulk change itself is sound, and
 * its before-values are kept; only the undo the operator may count on is refused when asked for.
 */
export function compensations(config: ResourceConfig): Guarantee[] {
  return Object.entries(config.actions).flatMap(([name, action]): Guarantee[] => {
    if (!action.reversible) return []
    const text = notRestorableText(name, restorabilityOf(action.reversible, action.write))
    if (text === null) return []
    return [
      {
        name: `compensation.${name}`,
        promise: 'what an action declared reversible writes, a compensation can restore',
        status: 'warning',
        detail: `${text}: a compensation of it is refused; set reversible: false to say so, or give it a write a compensation can send back (a PATCH, or a body carrying the set fields)`,
        config_keys: [`actions.${name}.reversible`, `actions.${name}.write`],
      },
    ]
  })
}
