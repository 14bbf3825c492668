import type { ActiveSession } from '../../../app/dashboard-sessions.js';
import type { StoredApiKey } from '../../../app/ports.js';
import { MAX_API_KEY_NAME_LENGTH } from '../../../app/accounts-service.js';
import { html } from '../../../app/present/html.js';
import { PATHS } from '../paths.js';
import { badge, csrfField, hidden, inputField, postButton, time, type Notice } from './components.js';
import { page } from './layout.js';

export interface ApiKeysView {
  session: ActiveSession;
  keys: readonly StoredApiKey[];
  /** A key just created: shown this once, never stored in the clear. */
  created?: { name: string; apiKey: string } | undefined;
  form?: { name: string; error: string } | undefined;
  notice?: Notice | undefined;
}

function keyRow(key: StoredApiKey, view: ApiKeysView) {
  const current = key.id === view.session.apiKeyId;
  return html`<tr>
  <th scope="row">${key.name}${current ? html` <span class="hint">(this session)</span>` : ''}</th>
  <td>${time(key.createdAt)}</td>
  <td>${key.revokedAt === null ? badge('active', 'Active') : html`${badge('revoked', 'Revoked')} ${time(key.revokedAt)}`}</td>
  <td>${
    key.revokedAt === null
      ? postButton({
          action: PATHS.revokeKey(key.id),
          csrf: view.session.csrfToken,
          label: html`Revoke${hidden(` key ${key.name}`)}`,
          variant: 'danger',
          small: true,
        })
      : ''
  }</td>
</tr>`;
}

export function apiKeysPage(view: ApiKeysView): string {
  return page(
    { title: 'API keys', session: view.session, section: 'keys', notice: view.notice },
    html`<h1>API keys</h1>
<p class="lead">Keys authenticate requests to the API in the <code>X-SERVICE-API-KEY</code> header. Vigil stores only a hash of each key, so a key is shown once, when it is created. Revoking a key stops it at once, and ends dashboard sessions signed in with it.</p>
${
  view.created === undefined
    ? ''
    : html`<section class="notice notice-secret" role="status" aria-labelledby="new-key-heading">
  <h2 id="new-key-heading">Key “${view.created.name}” created</h2>
  <p>Copy it now: it will not be shown again.</p>
  <div class="field">
    <label for="new-api-key">New API key</label>
    <input type="text" id="new-api-key" readonly value="${view.created.apiKey}">
  </div>
</section>`
}
<div class="table-wrap">
<table>
  <caption>Keys of this account, newest first</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${view.keys.map((key) => keyRow(key, view))}</tbody>
</table>
</div>
<section class="panel" aria-labelledby="account-heading">
  <h2 id="account-heading">This account</h2>
  <dl class="facts">
    <dt>Name</dt><dd>${view.session.account.name}</dd>
    <dt>Account id</dt><dd><code>${view.session.account.id}</code></dd>
    <dt>Plan</dt><dd>${view.session.account.plan}</dd>
    <dt>Kubernetes namespace</dt><dd><code>${view.session.account.namespace}</code></dd>
  </dl>
  <p class="hint">The <code>vigil</code> command takes the id or the name wherever it asks for <code>--account</code>, for example <code>vigil accounts create-key --account ${view.session.account.name}</code>.</p>
</section>
<section class="panel" aria-labelledby="create-key-heading">
  <h2 id="create-key-heading">Create a key</h2>
  <form class="stack" method="post" action="${PATHS.keys}">
    ${csrfField(view.session.csrfToken)}
    ${inputField({ label: 'Key name', name: 'name', required: true, maxLength: MAX_API_KEY_NAME_LENGTH, hint: 'Say where the key is used, for example “CI pipeline”.', value: view.form?.name, error: view.form?.error })}
    <div><button type="submit" class="button">Create key</button></div>
  </form>
</section>`,
  );
}
