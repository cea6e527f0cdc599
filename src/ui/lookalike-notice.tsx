import { GROUPS_SHOWN, type LookalikeIds, type SelectionLookalikes } from '../selections/index.js'
import { AgentWords, Notice, RecordId, paths } from './components.js'
import { plural } from './format.js'

/** A value of a look-alike group as the pages show it, then the code points where it differs from the others. */
function Spelled(props: { value: string; codePoints: readonly string[]; agent?: boolean }) {
  return (
    <>
      {props.agent ? <AgentWords value={props.value} /> : <RecordId id={props.value} />}
      <span class="muted small"> ({props.codePoints.length === 0 ? 'no character apart' : props.codePoints.join(' ')})</span>
    </>
  )
}

/**
 * Said before the plan, and on a selection's own page: the selection holds ids drawn alike ("admin-I" and "admin-l",
 * "user-10" and "user-1O", " r002 " and "r002", NFC and NFD "café"), or the agent's words name an id drawn like a
 * target's but not it. The view's `lookalike_ids`, the one answer the CLI and the MCP summaries render too. Each
 * value is shown as everywhere else, never left out, with the code points where it differs: a reviewer told of
 * "admin-l" must know there is more than one record reading so, and which is which.
 */
export function LookalikeNotice(props: { lookalikes: SelectionLookalikes | LookalikeIds; of: 'plan' | 'selection'; selectionId: string }) {
  const { groups, more_groups } = props.lookalikes
  const named = 'named' in props.lookalikes ? props.lookalikes.named : []
  const moreNamed = 'more_named' in props.lookalikes ? props.lookalikes.more_named : 0
  if (groups.length === 0 && named.length === 0) return null
  const title =
    groups.length > 0
      ? `This selection holds record ids that look alike: ${plural(groups.length + more_groups, 'group')} of different records.`
      : `The agent's words hold a value drawn like a record id of this selection: ${plural(named.length + moreNamed, 'word')}.`
  return (
    <Notice kind="warn" title={title} testid="lookalike-ids">
      {groups.length > 0 ? (
        <>
          <p>
            The upstream holds each as a separate record. They are drawn alike (letters such as l, I and 1, O and 0, rn and m;
            compatibility forms; invisible characters, spaces at either end or Unicode normalisation); the code points where they
            differ follow each: read the id of each record {props.of === 'plan' ? 'this plan changes' : 'a plan on this selection would change'}.
          </p>
          <ul>
            {groups.map((ids) => (
              <li>
                {ids.map(({ id, code_points }, i) => (
                  <>
                    {i > 0 ? ' · ' : ''}
                    <Spelled value={id} codePoints={code_points} />
                  </>
                ))}
              </li>
            ))}
          </ul>
          {more_groups > 0 ? (
            // the groups past the first are not kept anywhere: the ids are, in the manifest and the export
            <p data-testid="lookalike-more-groups">
              and {plural(more_groups, 'more group')}, not listed: only the first {GROUPS_SHOWN} are kept. Every member id is in{' '}
              <a href="#records-manifest">the manifest on this page</a> (each id spelled as here) and in the export (
              <a href={paths.exportOf(props.selectionId, 'csv')}>CSV</a>, <a href={paths.exportOf(props.selectionId, 'ndjson')}>NDJSON</a>).
            </p>
          ) : null}
        </>
      ) : null}
      {named.length > 0 ? (
        <>
          <p>The agent's words name a value drawn like a record id of this selection that is not that id: the record changed is the id, not the word.</p>
          <ul>
            {named.map(({ word, word_code_points, id, id_code_points }) => (
              <li>
                <Spelled value={word} codePoints={word_code_points} agent /> looks like the record id <Spelled value={id} codePoints={id_code_points} />
              </li>
            ))}
          </ul>
          {moreNamed > 0 ? (
            <p data-testid="lookalike-more-named">
              and {plural(moreNamed, 'more word')}, not listed: the agent's words are shown whole under <a href="#action-params">the action's parameters</a>, the
              ids in <a href="#records-manifest">the manifest</a>.
            </p>
          ) : null}
        </>
      ) : null}
    </Notice>
  )
}
