import { html } from '../../../app/present/html.js';
import { PATHS } from '../paths.js';
import { csrfField, inputField, type Notice } from './components.js';
import { page } from './layout.js';

export interface SignInView {
  /** The sign-in form's own token (double-submitted with its cookie). */
  formToken: string;
  error?: string | undefined;
  notice?: Notice | undefined;
}

export function signInPage(view: SignInView): string {
  return page(
    { title: 'Sign in', notice: view.notice, bodyClass: 'sign-in-page' },
    html`<div class="narrow">
  <h1>Sign in to Vigil</h1>
  <p class="lead">Sign in with an API key of your account. The first start of <code>vigil serve</code> prints one, and <code>vigil accounts create</code> makes a new account with its key.</p>
  <form class="stack panel" method="post" action="${PATHS.signIn}">
    ${csrfField(view.formToken)}
    ${inputField({ label: 'API key', name: 'api_key', type: 'password', required: true, autocomplete: 'off', error: view.error })}
    <div><button type="submit" class="button">Sign in</button></div>
  </form>
</div>`,
  );
}
