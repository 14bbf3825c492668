/** The page shell: landmarks, skip link, navigation with aria-current, the account and sign-out. */
import type { ActiveSession } from '../../../app/dashboard-sessions.js';
import { ASSETS } from '../assets/index.js';
import { html, type SafeHtml } from '../../../app/present/html.js';
import { PATHS } from '../paths.js';
import { notice, postButton, type Notice } from './components.js';

export type Section = 'overview' | 'targets' | 'scans' | 'scheduled' | 'reports' | 'risks' | 'webhooks' | 'keys';

/** CONTRACT.md's order; a plain list, so that a section added later (Reports) slots in where it belongs. */
const SECTIONS: ReadonlyArray<{ section: Section; path: string; text: string }> = [
  { section: 'overview', path: PATHS.home, text: 'Overview' },
  { section: 'targets', path: PATHS.targets, text: 'Targets' },
  { section: 'scans', path: PATHS.scans, text: 'Scans' },
  { section: 'scheduled', path: PATHS.scheduledScans, text: 'Scheduled scans' },
  { section: 'reports', path: PATHS.reports, text: 'Reports' },
  { section: 'risks', path: PATHS.risks, text: 'Risks' },
  { section: 'webhooks', path: PATHS.webhooks, text: 'Webhooks' },
  { section: 'keys', path: PATHS.keys, text: 'API keys' },
];

export interface PageShell {
  title: string;
  /** Signed in: navigation and the sign-out button are shown. */
  session?: ActiveSession;
  section?: Section;
  notice?: Notice | undefined;
  bodyClass?: string;
}

function header(shell: PageShell): SafeHtml {
  const session = shell.session;
  return html`<header class="topbar">
  <div class="topbar-inner">
    <a class="brand" href="${PATHS.home}"><img src="${ASSETS.icon.path}" alt="" width="24" height="24">Vigil</a>
    ${
      session === undefined
        ? ''
        : html`<nav aria-label="Dashboard">
      <ul>${SECTIONS.map(
        (item) => html`<li><a href="${item.path}"${item.section === shell.section ? html` aria-current="page"` : ''}>${item.text}</a></li>`,
      )}</ul>
    </nav>
    <div class="account">
      <a href="/docs">API reference</a>
      <span>Account <strong>${session.account.name}</strong></span>
      ${postButton({ action: PATHS.signOut, csrf: session.csrfToken, label: 'Sign out', variant: 'quiet' })}
    </div>`
    }
  </div>
</header>`;
}

export function page(shell: PageShell, content: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${shell.title} · Vigil</title>
<link rel="icon" href="${ASSETS.icon.path}" type="image/svg+xml">
<link rel="stylesheet" href="${ASSETS.stylesheet.path}">
</head>
<body${shell.bodyClass === undefined ? '' : html` class="${shell.bodyClass}"`}>
<a class="skip-link" href="#main">Skip to main content</a>
${header(shell)}
<main id="main" tabindex="-1">
${notice(shell.notice)}
${content}
</main>
</body>
</html>
`.markup;
}
