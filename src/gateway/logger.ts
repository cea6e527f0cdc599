import pino, { type Logger } from 'pino'

export type { Logger }

/**
 * Logs go to stderr, always: under MCP stdio, stdout carries the protocol and a stray line would corrupt it.
 *
 * @example const log = createLogger({ level: 'info' })
 * @example const log = createLogger({ level: 'trace', destination: pino.destination({ dest: '/tmp/warrant.log', sync: true }) })
 */
export function createLogger(options: { readonly level?: string; readonly destination?: pino.DestinationStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.WARRANT_LOG_LEVEL ?? 'info',
      redact: { paths: ['*.authorization', '*.Authorization', '*.token', '*.secret', '*.password', 'req.headers.authorization'], censor: '[redacted]' },
    },
    // `destination` is for tests that read what was logged; a server logs to stderr.
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  )
}
