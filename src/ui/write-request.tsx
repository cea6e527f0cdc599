import { type WriteConfig, restorabilityOf } from '../config/index.js'
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

/**
 * How far a compensation can restore what a plan writes (`restorabilityOf`, the judgement the plan service refuses
 * by), said in the glance (`glance`, after the change) and under "Reversible?" (`text`). Declared reversible (the
 * config's default), a DELETE and an endpoint doing the change itself both read "Yes … can restore them" otherwise.
 */
export function reversibleWords(reversible: boolean, write: WriteConfig | null): { readonly glance: string; readonly text: string } {
  const judged = restorabilityOf(reversible, write)
  if (judged.kind === 'refused' && judged.reason === 'declared_irreversible')
    return { glance: ' (not reversible)', text: 'No. This action is declared irreversible: there will be no compensation plan.' }
  const kept = 'The before-values are kept for every record written'
  if (judged.kind === 'restorable')
    return { glance: ' (reversible)', text: `Yes. ${kept}; after the operation, a compensation plan can restore them (it is reviewed like any plan, and skips records changed since).` }
  const request = revealed(judged.request)
  if (judged.kind === 'refused') {
    const deletes = judged.reason === 'delete_not_restorable'
    return {
      glance: ` (not restorable: its write is ${deletes ? 'a DELETE' : `${request}, whose body carries no set field`})`,
      text: `No, though the config declares the action reversible: each record is written by ${request}, and a compensation plan would send that same request again${
        deletes ? ', which restores no removed record' : ' without the before-values'
      }, so none is proposed. ${kept}, to restore them by other means.`,
    }
  }
  return {
    glance: ` (reversible only if ${request} sets what its body says)`,
    text: `Only as far as the endpoint allows. Each record is written by ${request}, an endpoint that does the change itself; a compensation plan sends that same request, ${request}, with each record's before-values in its body, which restores them only if the endpoint sets what its body says (each record is checked after the write: one left otherwise is never counted restored). ${kept}.`,
  }
}
