import { AsyncLocalStorage } from 'node:async_hooks'

/** What an upstream call was made for: the operation, selection and target it serves. */
export interface CallContext {
  readonly operation_id?: string
  readonly plan_id?: string
  readonly selection_id?: string
  readonly selection_digest?: string
}

/**
 * The context of the upstream calls made inside `run()`. Connectors report calls without knowing why they
 * were made; the executor runs each target inside a context, and the call-level audit log reads it, so every
 * upstream call is logged with its operation id and selection digest without threading them through every
 * connector signature.
 *
 * @example callContext.run({ operation_id, selection_digest }, () => connector.write(request))
 */
export const callContext = new AsyncLocalStorage<CallContext>()
