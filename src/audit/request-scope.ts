import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * Whether a surface already recorded the request being served (an MCP tool call, a review-page action), so
 * the catch-all trail that records every request does not record it twice. Set by the surface's recorder,
 * read by the trail once the answer is ready.
 */
const scope = new AsyncLocalStorage<{ recorded: boolean }>()

/** Runs `serve` in a fresh scope; resolves to whether a surface recorded the request inside it. */
export async function withRequestAudit(serve: () => Promise<void>): Promise<boolean> {
  const state = { recorded: false }
  await scope.run(state, serve)
  return state.recorded
}

/** Called by a surface that wrote the request's audit row itself. */
export function markRequestAudited(): void {
  const state = scope.getStore()
  if (state) state.recorded = true
}
