import { codePointName, differingParts } from '../contract/index.js'
import type { LookalikeIds } from '../selections/index.js'
import { AgentWords, Notice, RecordId } from './components.js'
import { plural } from './format.js'

/** A value of a look-alike group as the pages show it, then the characters where it differs from the others by code point. */
function Spelled(props: { value: string; differs: string; agent?: boolean }) {
  const spelled = [...props.differs].map((ch) => codePointName(ch)).join(' ')
  return (
    <>
      {props.agent ? <AgentWords value={props.value} /> : <RecordId id={props.value} />}
      <span class="muted small"> ({spelled === '' ? 'no character apart' : spelled})</span>
    </>
  )
}

/**
 * Said before the plan: the selection holds ids drawn alike ("admin-I" and "admin-l", "user-10" and "user-1O", " r002 "
 * and "r002", NFC and NFD "café"), or the agent's words name an id drawn like a target's but not it. Each value is
 * shown as everywhere else, never left out, with the characters where it differs spelled by code point: a reviewer
 * told of "admin-l" must know there is more than one record reading so, and which is which.
 */
export function LookalikeNotice(props: { lookalikes: LookalikeIds }) {
  const { groups, more, named, moreNamed } = props.lookalikes
  if (groups.length === 0 && named.length === 0) return null
  const title =
    groups.length > 0
      ? `This selection holds record ids that look alike: ${plural(groups.length + more, 'group')} of different records.`
      : `The agent's words hold a value drawn like a record id of this selection: ${plural(named.length + moreNamed, 'word')}.`
  return (
    <Notice kind="warn" title={title} testid="lookalike-ids">
      {groups.length > 0 ? (
        <>
          <p>
            The upstream holds each as a separate record. They are drawn alike (letters such as l, I and 1, O and 0, rn and m;
            compatibility forms; invisible characters, spaces at either end or Unicode normalisation); the code points where they
            differ follow each: read the id of each record this plan changes.
          </p>
          <ul>
            {groups.map((ids) => {
              const differs = differingParts(ids)
              return (
                <li>
                  {ids.map((id, i) => (
                    <>
                      {i > 0 ? ' · ' : ''}
                      <Spelled value={id} differs={differs[i]!} />
                    </>
                  ))}
                </li>
              )
            })}
          </ul>
          {more > 0 ? <p>and {plural(more, 'more group')}.</p> : null}
        </>
      ) : null}
      {named.length > 0 ? (
        <>
          <p>The agent's words name a value drawn like a record id of this selection that is not that id: the record changed is the id, not the word.</p>
          <ul>
            {named.map(({ word, id }) => {
              const [inWords, inId] = differingParts([word, id])
              return (
                <li>
                  <Spelled value={word} differs={inWords!} agent /> looks like the record id <Spelled value={id} differs={inId!} />
                </li>
              )
            })}
          </ul>
          {moreNamed > 0 ? <p>and {plural(moreNamed, 'more word')}.</p> : null}
        </>
      ) : null}
    </Notice>
  )
}
