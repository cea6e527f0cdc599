import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { METRICS, STORE_GAUGES, type MetricName } from './metrics.js'

/** One count read from the store, with its labels (those the gauge names in `STORE_GAUGES`). */
export interface StoreCount {
  readonly labels: Readonly<Record<string, string>>
  readonly count: number
}

/** Counts read from the store at scrape time. */
export type StoreCounts = Record<keyof typeof STORE_GAUGES, () => Promise<readonly StoreCount[]>>

export interface PrometheusMetrics {
  add(metric: MetricName, labels: Readonly<Record<string, string>>, by: number): void
  observe(metric: MetricName, labels: Readonly<Record<string, string>>, value: number): void
  /** The registry in the Prometheus text exposition format. */
  scrape(): Promise<{ readonly contentType: string; readonly body: string }>
}

/** One registry per gateway (never prom-client's global one), so two gateways in a process never mix. */
export function createPrometheusMetrics(storeCounts?: StoreCounts): PrometheusMetrics {
  const registry = new Registry()
  const instruments = new Map<MetricName, Counter | Gauge | Histogram>()
  for (const [name, spec] of Object.entries(METRICS) as [MetricName, (typeof METRICS)[MetricName]][]) {
    const common = { name, help: spec.help, labelNames: [...spec.labels], registers: [registry] }
    instruments.set(
      name,
      spec.type === 'counter' ? new Counter(common) : spec.type === 'gauge' ? new Gauge(common) : new Histogram({ ...common, buckets: [...('buckets' in spec ? spec.buckets : [])] }),
    )
  }
  if (storeCounts) {
    for (const [name, spec] of Object.entries(STORE_GAUGES) as [keyof typeof STORE_GAUGES, (typeof STORE_GAUGES)[keyof typeof STORE_GAUGES]][]) {
      const read = storeCounts[name]
      new Gauge({
        name,
        help: spec.help,
        labelNames: [...spec.labels],
        registers: [registry],
        async collect() {
          const counts = await read()
          this.reset()
          for (const { labels, count } of counts) this.set(labels, count)
        },
      })
    }
  }
  return {
    add(metric, labels, by) {
      const instrument = instruments.get(metric)
      if (instrument instanceof Counter) instrument.inc(labels, by)
      else if (instrument instanceof Gauge) instrument.inc(labels, by)
    },
    observe(metric, labels, value) {
      const instrument = instruments.get(metric)
      if (instrument instanceof Histogram) instrument.observe(labels, value)
    },
    scrape: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  }
}
