/**
 * What the review pages need beyond the plan, selection and operation services: reviewer sessions (opened
 * with a bearer token, CSRF token per session) and the queue of plans waiting for a decision.
 *
 * @example
 * const review = createReviewService({ store, principals, plans, operations })
 * const { sessionId } = await review.sessions.signIn(token)
 * const { plans } = await review.queue.awaitingDecision(actor)
 */
import type { PrincipalStore } from '../auth/index.js'
import type { OperationService } from '../operations/index.js'
import type { PlanService } from '../plans/index.js'
import type { Store } from '../store/index.js'
import { createReviewQueue, type ReviewQueue } from './queue.js'
import { createReviewSessions, type ReviewSessions } from './sessions.js'

export { createReviewSessions, type ReviewSessions, type ReviewSession, type OpenedSession, type ReviewSessionOptions } from './sessions.js'
export { createReviewQueue, type QueuePosition, type ReviewQueue, type ReviewQueueOptions } from './queue.js'

export interface ReviewService {
  readonly sessions: ReviewSessions
  readonly queue: ReviewQueue
}

export function createReviewService(options: {
  readonly store: Store
  readonly principals: PrincipalStore
  readonly plans: PlanService
  readonly operations: OperationService
}): ReviewService {
  return {
    sessions: createReviewSessions({ store: options.store, principals: options.principals }),
    queue: createReviewQueue({ store: options.store, plans: options.plans, operations: options.operations }),
  }
}
