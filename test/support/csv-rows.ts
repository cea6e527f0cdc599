/**
 * An RFC 4180 reader for tests: rows of cells, each cell's text and whether it was quoted (so `""` and an
 * empty unquoted cell stay apart, as PostgreSQL's COPY … CSV reads them: null and empty text).
 */
export function csvRows(text: string): { text: string; quoted: boolean }[][] {
  const rows: { text: string; quoted: boolean }[][] = []
  let row: { text: string; quoted: boolean }[] = []
  let i = 0
  for (;;) {
    let cell = ''
    let quoted = false
    if (text[i] === '"') {
      quoted = true
      i++
      for (;;) {
        if (i >= text.length) throw new Error('a quoted cell never closed')
        if (text[i] === '"' && text[i + 1] === '"') (cell += '"'), (i += 2)
        else if (text[i] === '"') {
          i++
          break
        } else cell += text[i++]
      }
    } else while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') cell += text[i++]
    row.push({ text: cell, quoted })
    if (text[i] === ',') {
      i++
      continue
    }
    if (text.startsWith('\r\n', i)) i += 2
    else if (i < text.length) throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i}`)
    rows.push(row)
    row = []
    if (i >= text.length) return rows
  }
}

/** The rows as objects by the header row's names (cell text only). */
export function csvRecords(text: string): Record<string, string>[] {
  const [header, ...rows] = csvRows(text)
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h.text, r[i]?.text ?? ''])))
}
