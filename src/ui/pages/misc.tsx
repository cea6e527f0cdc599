import { Layout, Notice, type Viewer, paths } from '../components.js'
import { revealed } from '../reveal.js'

export function SignInPage(d: { csrf: string; next: string; problem?: { title: string; text: string } | null }) {
  return (
    <Layout title="Sign in">
      <h1>Sign in to review</h1>
      {d.problem ? (
        <Notice kind="error" title={d.problem.title} testid="sign-in-problem">
          <p>{d.problem.text}</p>
        </Notice>
      ) : null}
      <p>
        Paste a <strong>reviewer</strong> or <strong>admin</strong> token (create one with <code>warrant token create --name YOUR_NAME --role reviewer</code>). Agents' tokens
        are refused here: agents propose changes, they never approve them.
      </p>
      <form method="post" action={paths.signIn}>
        <input type="hidden" name="csrf" value={d.csrf} />
        <input type="hidden" name="next" value={d.next} />
        <p>
          <label for="token">Reviewer token</label>
          <br />
          <input id="token" name="token" type="password" autocomplete="off" required spellcheck={false} autofocus />
        </p>
        <button type="submit">Sign in</button>
      </form>
      <p class="small muted">The page keeps a session cookie (HttpOnly, SameSite=Strict); the token itself is not stored, only its hash.</p>
    </Layout>
  )
}

/** A refusal or a failure, in words and with its stable code. */
export function ErrorPage(d: { viewer?: Viewer | null; status: number; code: string; title: string; message: string; back?: string | null }) {
  return (
    <Layout title={d.title} viewer={d.viewer ?? null}>
      <h1>{d.title}</h1>
      <Notice kind="error" testid="error">
        <p>
          {/* a refusal can repeat what it refused (an address, an id): revealed like any value from outside */}
          {revealed(d.message)} <code>{d.code}</code> <span class="muted">(HTTP {d.status})</span>
        </p>
      </Notice>
      <p>
        {d.back ? (
          <>
            <a href={d.back}>Back</a> ·{' '}
          </>
        ) : null}
        <a href={paths.queue}>The queue</a>
      </p>
    </Layout>
  )
}
