/** Small pieces every page uses: notices, CSRF-carrying buttons, times and badges. */
import { html, type HtmlValue, type SafeHtml } from '../../../app/present/html.js';
import { THREAT_LEVELS } from '../../../domain/risks/finding.js';
import { NOT_SCANNED_YET, type OpenRiskCounts } from '../../../domain/targets/health-score.js';
import { withQuery } from '../paths.js';

export interface Notice {
  kind: 'ok' | 'error';
  text: string;
}

/** Success as a polite status message; an error as an alert, read out at once. */
export function notice(message: Notice | undefined): SafeHtml | undefined {
  if (message === undefined) return undefined;
  return message.kind === 'ok'
    ? html`<p class="notice notice-ok" role="status">${message.text}</p>`
    : html`<p class="notice notice-error" role="alert">${message.text}</p>`;
}

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${token}">`;
}

export interface PostButton {
  action: string;
  csrf: string;
  label: HtmlValue;
  variant?: 'primary' | 'secondary' | 'danger' | 'quiet';
  small?: boolean;
}

/** A one-button form: every state change is a POST with the session's CSRF token. */
export function postButton(button: PostButton): SafeHtml {
  const classes = ['button', button.variant === undefined || button.variant === 'primary' ? '' : `button-${button.variant}`, button.small ? 'button-small' : '']
    .filter(Boolean)
    .join(' ');
  return html`<form method="post" action="${button.action}">${csrfField(button.csrf)}<button type="submit" class="${classes}">${button.label}</button></form>`;
}

/** Text only assistive technology reads, to tell apart buttons that look alike ("Revoke" of which key). */
export function hidden(text: string): SafeHtml {
  return html`<span class="visually-hidden">${text}</span>`;
}

/** An ISO time shown in UTC, to the minute, with the exact value in datetime. */
export function time(iso: string | null | undefined): SafeHtml {
  if (iso === null || iso === undefined) return html`<span class="empty">never</span>`;
  const shown = iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
  return html`<time datetime="${iso}">${shown}</time>`;
}

export function badge(kind: string, text: string): SafeHtml {
  return html`<span class="badge badge-${kind.toLowerCase()}">${text}</span>`;
}

export interface InputField {
  label: string;
  name: string;
  type?: 'text' | 'password' | 'url' | 'search';
  value?: string;
  hint?: string;
  /** A sentence saying what is wrong with the value; marks the control invalid and describes it. */
  error?: string | undefined;
  required?: boolean;
  maxLength?: number;
  autocomplete?: string;
  placeholder?: string;
  multiline?: boolean;
}

/** A labelled control with its hint and error linked by aria-describedby. */
export function inputField(input: InputField): SafeHtml {
  const id = `field-${input.name}`;
  const described = [input.hint === undefined ? '' : `${id}-hint`, input.error === undefined ? '' : `${id}-error`].filter(Boolean).join(' ');
  const attributes = html`id="${id}" name="${input.name}"${input.required ? html` required` : ''}${
    input.maxLength === undefined ? '' : html` maxlength="${input.maxLength}"`
  }${input.autocomplete === undefined ? '' : html` autocomplete="${input.autocomplete}"`}${
    input.placeholder === undefined ? '' : html` placeholder="${input.placeholder}"`
  }${described === '' ? '' : html` aria-describedby="${described}"`}${input.error === undefined ? '' : html` aria-invalid="true"`}`;
  const control = input.multiline
    ? html`<textarea ${attributes}>${input.value ?? ''}</textarea>`
    : html`<input type="${input.type ?? 'text'}" ${attributes} value="${input.value ?? ''}">`;
  return html`<div class="field">
    <label for="${id}">${input.label}</label>
    ${input.hint === undefined ? '' : html`<span class="hint" id="${id}-hint">${input.hint}</span>`}
    ${control}
    ${input.error === undefined ? '' : html`<span class="hint field-error" id="${id}-error" role="alert">${input.error}</span>`}
  </div>`;
}

export interface SelectField {
  label: string;
  name: string;
  options: ReadonlyArray<{ value: string; text: string }>;
  selected: string;
}

export function selectField(select: SelectField): SafeHtml {
  const id = `field-${select.name}`;
  return html`<div class="field">
    <label for="${id}">${select.label}</label>
    <select id="${id}" name="${select.name}">${select.options.map(
      (option) => html`<option value="${option.value}"${option.value === select.selected ? html` selected` : ''}>${option.text}</option>`,
    )}</select>
  </div>`;
}

export interface CheckboxGroup {
  legend: string;
  name: string;
  options: ReadonlyArray<{ value: string; text: string }>;
  checked: readonly string[];
  hint?: string;
}

/** Checkboxes under one legend, sent as the same field name once per ticked box. */
export function checkboxGroup(group: CheckboxGroup): SafeHtml {
  const hintId = `field-${group.name}-hint`;
  return html`<fieldset class="field checkbox-group"${group.hint === undefined ? '' : html` aria-describedby="${hintId}"`}>
    <legend>${group.legend}</legend>
    ${group.hint === undefined ? '' : html`<span class="hint" id="${hintId}">${group.hint}</span>`}
    <div class="checkboxes">${group.options.map(
      (option) =>
        html`<label class="checkbox"><input type="checkbox" name="${group.name}" value="${option.value}"${group.checked.includes(option.value) ? html` checked` : ''}> ${option.text}</label>`,
    )}</div>
  </fieldset>`;
}

/** "First page" and "Next page" links of a list that pages with tokens, keeping its filters. */
export function pagination(path: string, filters: Record<string, string>, nextPageToken: string | undefined, onLaterPage: boolean): SafeHtml {
  return html`<nav class="pagination" aria-label="Pages">
  ${onLaterPage ? html`<a href="${withQuery(path, filters)}">First page</a>` : ''}
  ${nextPageToken === undefined ? '' : html`<a href="${withQuery(path, { ...filters, page_token: nextPageToken })}">Next page</a>`}
</nav>`;
}

/** Open risks as one badge per threat level that has any ("2 critical"), or "none". */
export function riskCountBadges(counts: OpenRiskCounts | undefined): SafeHtml {
  const present = THREAT_LEVELS.filter((level) => (counts?.[level] ?? 0) > 0);
  if (present.length === 0) return html`<span class="empty">none</span>`;
  return html`<span class="badge-list">${present.map((level) => html`${badge(level, `${counts![level]} ${level.toLowerCase()}`)} `)}</span>`;
}

/** The grade letter, coloured, then the score: "C 53" to a screen reader, under a "Health" header. */
/** A target's grade and score, or "not scanned yet" while no scan has measured it (lastScannedAt null). */
export function gradeBadge(score: number, grade: string, lastScannedAt: string | null): SafeHtml {
  if (lastScannedAt === null) return html`<span class="empty">${NOT_SCANNED_YET}</span>`;
  return html`<span class="grade grade-${grade.toLowerCase()}">${grade}</span> ${score}`;
}
