import type { ActiveSession } from '../../../app/dashboard-sessions.js';
import { html } from '../../../app/present/html.js';
import { PATHS } from '../paths.js';
import { page } from './layout.js';

export interface ErrorView {
  status: number;
  title: string;
  message: string;
  session?: ActiveSession | undefined;
  /** The request id, for a server error someone should report. */
  reference?: string | undefined;
}

export function errorPage(view: ErrorView): string {
  return page(
    view.session === undefined ? { title: view.title } : { title: view.title, session: view.session },
    html`<h1>${view.title}</h1>
<p role="alert">${view.message}</p>
${view.reference === undefined ? '' : html`<p class="hint">Reference: <code>${view.reference}</code></p>`}
<p><a href="${PATHS.home}">Back to the dashboard</a></p>`,
  );
}
