import { context, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api'
import type { SpanAttributes } from './telemetry.js'

/**
 * Spans through `@opentelemetry/api` only: without an SDK installed by the host application (or the
 * environment), every call is a no-op. With one, spans nest through its context manager.
 */
const tracer = () => trace.getTracer('warrant')

function clean(attributes: SpanAttributes): Attributes {
  const out: Attributes = {}
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value
  return out
}

export function inSpan<T>(name: string, attributes: SpanAttributes, work: () => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { attributes: clean(attributes) }, async (span) => {
    try {
      return await work()
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' })
      throw error
    } finally {
      span.end()
    }
  })
}

export function recordFinishedSpan(name: string, attributes: SpanAttributes, durationMs: number, failed: boolean): void {
  const end = Date.now()
  const span = tracer().startSpan(name, { attributes: clean(attributes), startTime: end - Math.max(0, durationMs) }, context.active())
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR })
  span.end(end)
}

export function annotateActiveSpan(attributes: SpanAttributes): void {
  trace.getActiveSpan()?.setAttributes(clean(attributes))
}
