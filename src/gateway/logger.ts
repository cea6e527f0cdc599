import pino, { type Logger } from 'pino'

export type { Logger }

/**
 * Logs go to stderr, always: under MCP stdio, stdout carries the protocol and a stray line would corrupt it.
 *
 * @example const log = createLogger({ level: 'info' })
 */
export function createLogger(options: { readonly level?: string } = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.WARRANT_LOG_LEVEL ?? 'info',
      redact: { paths: ['*.authorization', '*.Authorization', '*.token', '*.secret', '*.password', 'req.headers.authorization'], censor: '[redacted]' },
    },
    pino.destination({ fd: 2, sync: true }),
  )
}
