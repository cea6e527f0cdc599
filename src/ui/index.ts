/**
 * The review pages, served by `warrant serve` at `/review`: sign-in, the queue of plans waiting for a decision,
 * the plan page (the five questions of a preview, and the decision), selections, operations and the audit trail.
 * Server-rendered with hono/jsx; a little progressive JavaScript refreshes a running operation's counts.
 *
 * @example registerReviewPages(app, gateway)
 */
export { registerReviewPages, createReviewApp, reviewRefusalPage } from './routes/app.js'
export { STYLESHEET, SCRIPT } from './assets.js'
export { clauseText, filterText, filterClauses, type IdField } from './format.js'
