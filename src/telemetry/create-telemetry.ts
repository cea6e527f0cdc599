import { createPrometheusMetrics, type StoreCounts } from './prometheus.js'
import type { Telemetry } from './telemetry.js'
import { annotateActiveSpan, inSpan, recordFinishedSpan } from './tracing.js'

export interface GatewayTelemetry extends Telemetry {
  /** `/metrics`: the Prometheus text format. */
  scrape(): Promise<{ readonly contentType: string; readonly body: string }>
}

export interface TelemetryOptions {
  /** Gauges read from the store at each scrape (plans by state, targets of running operations). */
  readonly storeCounts?: StoreCounts
}

/** Prometheus metrics and OpenTelemetry spans behind one `Telemetry`; a failure to report never fails the work. */
export function createTelemetry(options: TelemetryOptions = {}): GatewayTelemetry {
  const metrics = createPrometheusMetrics(options.storeCounts)
  const quietly = (report: () => void) => {
    try {
      report()
    } catch {
      // a metric with an unexpected label must not fail the request or the write it describes
    }
  }
  return {
    add: (metric, labels, by = 1) => quietly(() => metrics.add(metric, labels, by)),
    observe: (metric, labels, value) => quietly(() => metrics.observe(metric, labels, value)),
    span: inSpan,
    recordSpan: (name, attributes, durationMs, failed) => quietly(() => recordFinishedSpan(name, attributes, durationMs, failed)),
    annotate: (attributes) => quietly(() => annotateActiveSpan(attributes)),
    scrape: () => metrics.scrape(),
  }
}
