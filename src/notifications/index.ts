/**
 * Outbound notifications for reviewers: signed webhooks (JSON or Slack-compatible) when a plan awaits review,
 * when it is decided, and when an operation finishes or halts. Deliveries and their failures are stored and
 * shown on the plan pages. Messages name the environment, the action, the count and the link; never records.
 *
 * @example
 * const notifications = createNotifier({ config: config.notifications, store, log, baseUrl })
 * const plans = observePlans(createPlanService(...), notifications.emit, log)
 */
export { createNotifier, type Notifications, type NotifierOptions, type NotifierLog, type WebhookDelivery } from './notifier.js'
export { observePlans, observeOperationEnds, type ObserverLog } from './observe.js'
export { payloadOf, sentenceOf, type NotificationEvent, type NotificationPayload, type NotificationFormat, type PlanFacts } from './events.js'
export { signatureOf, verifySignature, SIGNATURE_HEADER, TIMESTAMP_HEADER, EVENT_HEADER, DELIVERY_HEADER } from './signature.js'
