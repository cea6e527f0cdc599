import type { WriteConfig } from '../config/index.js'
import { revealed } from './reveal.js'

/**
 * The request each record of an http plan is written by, as the config declares it: method, path template and body
 * template (`{{set.…}}`, `{{params.…}}` filled per record). The fields an action sets are not all a write does: a
 * `DELETE`, or a body carrying more than them (`refund_all: true`), reads as "status → closed" alone otherwise.
 */
export function WriteRequest(props: { write: WriteConfig | null }) {
  const w = props.write
  if (w === null) return null
  const body =
    w.style === 'replace' ? (
      ' with the whole record as re-read just before the write, the set fields applied'
    ) : w.body === undefined ? (
      ' with no body'
    ) : (
      <>
        {' '}
        with the body <code>{revealed(JSON.stringify(w.body))}</code>
      </>
    )
  return (
    <p data-testid="write-request">
      Each record is written by the request{' '}
      <code>
        {w.method} {revealed(w.path)}
      </code>
      {body} (<code>{'{{…}}'}</code> filled in per record).
    </p>
  )
}
