/**
 * Every metric Warrant exports, with its labels. A label's values come from bounded sets (resource and source
 * names from the config, reason and refusal codes, outcomes, HTTP routes as templates): never a record id, a
 * field value or anything from a token. README's metrics table follows this one.
 */
export const METRICS = {
  warrant_walks_total: { type: 'counter', labels: ['resource', 'outcome'], help: 'Inventory walks (searches and selections) by how they ended: complete or partial' },
  warrant_walk_incomplete_reasons_total: { type: 'counter', labels: ['resource', 'reason'], help: 'Reason codes of partial walks (MORE_PAGES_AVAILABLE, SOURCE_UNAVAILABLE, …), one per reason' },
  warrant_walk_pages_total: { type: 'counter', labels: ['resource', 'source', 'result'], help: 'Upstream pages read by walks, by result (page, unavailable, rate_limited, cursor_expired)' },
  warrant_walk_records_total: { type: 'counter', labels: ['resource', 'source'], help: 'Records read by walks' },
  warrant_selection_members: { type: 'histogram', labels: ['resource'], help: 'Members of each frozen selection', buckets: [0, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000] },
  warrant_approval_decisions_total: { type: 'counter', labels: ['resource', 'decision'], help: 'Reviewer decisions on plans (approve, reject)' },
  warrant_refusals_total: { type: 'counter', labels: ['surface', 'code'], help: 'Requests refused, by surface and stable error code (not_approved, digest_mismatch, …)' },
  warrant_operation_targets_total: { type: 'counter', labels: ['resource', 'outcome'], help: 'Operation targets recorded, by outcome (succeeded, failed, skipped, unknown)' },
  warrant_operations_total: { type: 'counter', labels: ['resource', 'state'], help: 'Operations that ended, by final state' },
  warrant_executor_targets_in_flight: { type: 'gauge', labels: [], help: 'Targets this process is executing right now (executor concurrency)' },
  warrant_executor_rate_pauses_total: { type: 'counter', labels: ['resource'], help: 'Times an operation paused because the upstream asked it to wait (429, lock contention)' },
  warrant_upstream_calls_total: { type: 'counter', labels: ['source', 'method', 'status', 'outcome'], help: 'Calls to upstreams by source, method, HTTP status (none for SQL) and outcome' },
  warrant_upstream_call_duration_seconds: {
    type: 'histogram',
    labels: ['source', 'method'],
    help: 'Latency of upstream calls (writes: UPDATE, PATCH, POST…)',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  },
  warrant_audit_rows_total: { type: 'counter', labels: ['level'], help: 'Audit rows by level: run rows once committed, call rows when queued for the batched append (a failed batch is logged)' },
  warrant_audit_verify_total: { type: 'counter', labels: ['result'], help: 'Audit chain verifications, by result (ok, broken, error)' },
  warrant_http_requests_total: { type: 'counter', labels: ['method', 'route', 'status'], help: 'HTTP requests by method, route template and status' },
  warrant_http_request_duration_seconds: {
    type: 'histogram',
    labels: ['method', 'route'],
    help: 'HTTP request latency by route template',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  },
} as const satisfies Record<string, MetricSpec>

/** Read at scrape time from the store, so they are true for every instance sharing it. */
export const STORE_GAUGES = {
  warrant_plans: { labels: ['state'], help: 'Plans by state (pending, approved, rejected, expired, committed), from the store' },
  warrant_operation_targets: { labels: ['state'], help: 'Targets of operations not yet finished, by state: the progress of running operations' },
  warrant_webhook_deliveries: { labels: ['webhook', 'state'], help: 'Webhook deliveries by webhook (its name, or scheme and host) and state (pending, delivered, failed), from the store: a reviewer never told is a failed one' },
} as const

export interface MetricSpec {
  readonly type: 'counter' | 'gauge' | 'histogram'
  readonly labels: readonly string[]
  readonly help: string
  readonly buckets?: readonly number[]
}

export type MetricName = keyof typeof METRICS
type LabelsOf<N extends MetricName> = (typeof METRICS)[N]['labels'][number]
/** A metric's labels, each named; values are strings from a bounded set (see METRICS). */
export type Labels<N extends MetricName> = { readonly [K in LabelsOf<N>]: string }
