/**
 * Progress of long work on stderr, never on stdout (which carries the answer, maybe into a pipe). On a terminal:
 * one live line, redrawn in place. Off a terminal: the first state at once, then a line every few seconds, so a
 * log shows the work is alive without a line per record. `--quiet` silences it.
 *
 * @example const progress = createProgress({ quiet: flags.quiet }); progress.update('examined 1,200 records'); progress.done()
 */
export interface Progress {
  /** The current state, in words; drawn now or later, as the medium allows. */
  update(line: string): void
  /** Clears the live line (terminal) or prints the last state once more (log), then stops. */
  done(): void
}

export interface ProgressOptions {
  readonly quiet?: boolean
  readonly stream?: NodeJS.WriteStream
  /** Off a terminal: at most one line per this many milliseconds (default 5000; WARRANT_PROGRESS_INTERVAL_MS). */
  readonly intervalMs?: number
}

const REDRAW_MS = 100

export function createProgress(options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stderr
  if (options.quiet) return { update: () => undefined, done: () => undefined }
  const live = stream.isTTY === true
  const interval = live ? REDRAW_MS : (options.intervalMs ?? (Number(process.env.WARRANT_PROGRESS_INTERVAL_MS) || 5000))
  let last = ''
  let printed = ''
  let lastAt = -Infinity
  const draw = (line: string) => {
    lastAt = Date.now()
    printed = line
    stream.write(live ? `\r\x1b[2K${line.slice(0, Math.max(20, (stream.columns || 100) - 1))}` : `${line}\n`)
  }
  return {
    update(line) {
      last = line
      if (Date.now() - lastAt >= interval) draw(line)
    },
    done() {
      if (live) {
        if (printed) stream.write('\r\x1b[2K')
      } else if (last && last !== printed) draw(last)
      last = ''
    },
  }
}

/** `1,234` */
export const thousands = (n: number): string => n.toLocaleString('en-US')

/** `2m 05s`, `41s` */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  return s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`
}

/** A selection's walk in words (select, recover): `pages: 0` is the walk starting, before its first page arrives. */
export function freezeProgressLine(what: string, p: { readonly pages: number; readonly examined: number; readonly members: number; readonly excluded: number }, elapsedMs: number): string {
  if (p.pages === 0) return `${what}: reading the first page…`
  return `${what}: ${thousands(p.pages)} page(s) read, ${thousands(p.examined)} record(s) examined, ${thousands(p.members)} member(s) frozen, ${thousands(p.excluded)} excluded · ${duration(elapsedMs)}`
}
