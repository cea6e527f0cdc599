/**
 * One argument as a POSIX shell reads it back unchanged: bare where it holds only characters no shell treats
 * specially, else in single quotes (a quote inside closed, escaped and reopened). A command Warrant prints for a
 * person to paste (`--filter 'amount>=500'`) must run as the arguments it names, not as a redirection.
 *
 * @example shellWord("status!=gone") // "'status!=gone'"
 */
export function shellWord(value: string): string {
  if (/^[A-Za-z0-9_.,:/=@%+-]+$/.test(value)) return value
  return `'${value.replace(/'/g, `'\\''`)}'`
}

/** The words of a command, each as `shellWord` gives it, joined by spaces. */
export function shellCommand(words: readonly string[]): string {
  return words.map(shellWord).join(' ')
}
