import type { ActiveSession } from '../../../app/dashboard-sessions.js';
import type { LoggedAttempt, WebhookEndpoint } from '../../../app/ports.js';
import type { DeliveryLog } from '../../../app/webhook-endpoints-service.js';
import { html, type SafeHtml } from '../../../app/present/html.js';
import { PATHS } from '../paths.js';
import { badge, csrfField, inputField, postButton, time, type Notice } from './components.js';
import { page } from './layout.js';

export interface WebhooksView {
  session: ActiveSession;
  endpoints: readonly WebhookEndpoint[];
  form?: { url: string; error: string } | undefined;
  notice?: Notice | undefined;
}

export function webhooksPage(view: WebhooksView): string {
  const rows = view.endpoints.map(
    (endpoint) => html`<tr>
  <th scope="row"><a href="${PATHS.webhook(endpoint.id)}" class="mono">${endpoint.url}</a></th>
  <td>${time(endpoint.createdAt)}</td>
</tr>`,
  );
  return page(
    { title: 'Webhook endpoints', session: view.session, section: 'webhooks', notice: view.notice },
    html`<h1>Webhook endpoints</h1>
<p class="lead">Vigil sends <code>scan.created</code>, <code>scan.updated</code>, <code>risk.created</code> and <code>risk.updated</code> events to every endpoint of the account, signed with the endpoint's own secret and retried for about three hours. An endpoint receives the events that happen after it is added; while the account has no endpoint, no event is kept. Open an endpoint to see its signing secret and delivery log, or to send it a test event.</p>
${
  view.endpoints.length === 0
    ? html`<p class="empty">No endpoints yet.</p>`
    : html`<div class="table-wrap"><table>
  <caption>Endpoints of this account</caption>
  <thead><tr><th scope="col">URL</th><th scope="col">Added</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
}
<section class="panel" aria-labelledby="add-endpoint-heading">
  <h2 id="add-endpoint-heading">Add an endpoint</h2>
  <form class="stack" method="post" action="${PATHS.webhooks}">
    ${csrfField(view.session.csrfToken)}
    ${inputField({ label: 'Endpoint URL', name: 'url', type: 'url', required: true, maxLength: 2048, placeholder: 'https://hooks.example.com/vigil', hint: 'An https:// address with a certificate from a public authority.', value: view.form?.url, error: view.form?.error })}
    <div><button type="submit" class="button">Add endpoint</button></div>
  </form>
</section>`,
  );
}

export interface WebhookView {
  session: ActiveSession;
  endpoint: WebhookEndpoint;
  log: DeliveryLog;
  /** True after "Reveal signing secret". */
  revealSecret: boolean;
  notice?: Notice | undefined;
}

function outcome(attempt: LoggedAttempt): SafeHtml {
  if (attempt.status !== null && attempt.status >= 200 && attempt.status < 300) return html`${badge('active', `HTTP ${attempt.status}`)}`;
  if (attempt.status !== null) return html`${badge('failed', `HTTP ${attempt.status}`)}`;
  return html`${badge('failed', 'Error')} ${attempt.error ?? ''}`;
}

function deliveryLog(log: DeliveryLog): SafeHtml {
  const counts = html`<dl class="counts">
  <div><dt>Pending</dt><dd>${log.counts.pending}</dd></div>
  <div><dt>Delivered</dt><dd>${log.counts.delivered}</dd></div>
  <div><dt>Failed</dt><dd>${log.counts.failed}</dd></div>
</dl>`;
  if (log.attempts.length === 0) return html`${counts}<p class="empty">No delivery attempts yet.</p>`;
  return html`${counts}<div class="table-wrap"><table>
  <caption>Latest attempts, newest first</caption>
  <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Result</th><th scope="col">Duration</th></tr></thead>
  <tbody>${log.attempts.map(
    (attempt) => html`<tr>
    <th scope="row">${time(attempt.attemptedAt)}</th>
    <td><code>${attempt.eventType}</code><br><span class="hint mono">${attempt.eventId}</span></td>
    <td>${outcome(attempt)}</td>
    <td>${attempt.durationMs} ms</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}

function signingSecret(view: WebhookView): SafeHtml {
  if (view.revealSecret) {
    return html`<div class="field">
  <label for="signing-secret">Signing secret</label>
  <input type="text" id="signing-secret" readonly value="${view.endpoint.secret}">
</div>`;
  }
  return html`<p>The signing secret is hidden. Receivers verify <code>X-SERVICE-SIGNATURE</code> with it.</p>
${postButton({ action: PATHS.revealSecret(view.endpoint.id), csrf: view.session.csrfToken, label: 'Reveal signing secret', variant: 'secondary' })}`;
}

export function webhookPage(view: WebhookView): string {
  const { endpoint, session } = view;
  return page(
    { title: 'Webhook endpoint', session, section: 'webhooks', notice: view.notice },
    html`<p class="breadcrumb"><a href="${PATHS.webhooks}">Webhook endpoints</a></p>
<h1>Webhook endpoint</h1>
<section class="panel" aria-labelledby="endpoint-heading">
  <h2 id="endpoint-heading" class="visually-hidden">Details</h2>
  <dl class="facts">
    <dt>URL</dt><dd class="mono">${endpoint.url}</dd>
    <dt>Added</dt><dd>${time(endpoint.createdAt)}</dd>
  </dl>
  <div class="actions">
    ${postButton({ action: PATHS.testWebhook(endpoint.id), csrf: session.csrfToken, label: 'Send test event' })}
    ${postButton({ action: PATHS.deleteWebhook(endpoint.id), csrf: session.csrfToken, label: 'Delete endpoint', variant: 'danger' })}
  </div>
</section>
<section class="panel" aria-labelledby="secret-heading">
  <h2 id="secret-heading">Signing secret</h2>
  ${signingSecret(view)}
</section>
<section aria-labelledby="log-heading">
  <h2 id="log-heading">Delivery log</h2>
  <p><a href="${PATHS.webhook(endpoint.id)}">Refresh</a> to see new attempts; the dispatcher looks for new events every second.</p>
  ${deliveryLog(view.log)}
</section>`,
  );
}
