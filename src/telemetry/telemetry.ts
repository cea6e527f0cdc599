import type { Labels, MetricName } from './metrics.js'

export type SpanAttributes = Readonly<Record<string, string | number | boolean | undefined>>

/**
 * What services report about themselves: metric samples and trace spans. They depend on this interface
 * only; the gateway assembles the real one (Prometheus + OpenTelemetry) and tests may pass `NO_TELEMETRY`.
 * Attributes and labels carry ids of Warrant's own objects (operation, plan, selection digest) and codes,
 * never a record's fields.
 */
export interface Telemetry {
  /** Adds `by` (default 1) to a counter or a gauge (a gauge may go down). */
  add<N extends MetricName>(metric: N, labels: Labels<N>, by?: number): void
  /** One observation of a histogram. */
  observe<N extends MetricName>(metric: N, labels: Labels<N>, value: number): void
  /** Runs `work` in a span, a child of the active one; the span ends when `work` settles. */
  span<T>(name: string, attributes: SpanAttributes, work: () => Promise<T>): Promise<T>
  /** A span that already happened (an upstream call reported after the fact), under the active span. */
  recordSpan(name: string, attributes: SpanAttributes, durationMs: number, failed: boolean): void
  /** Adds attributes to the active span, when they are known only after it started. */
  annotate(attributes: SpanAttributes): void
}

export const NO_TELEMETRY: Telemetry = {
  add: () => undefined,
  observe: () => undefined,
  span: (_name, _attributes, work) => work(),
  recordSpan: () => undefined,
  annotate: () => undefined,
}
