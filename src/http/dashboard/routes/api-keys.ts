/** API keys: list, create (the key shown once, in the response to the POST), revoke. */
import type { Response, Router } from 'express';
import type { AccountsService } from '../../../app/accounts-service.js';
import type { DashboardSessionsService } from '../../../app/dashboard-sessions.js';
import { InvalidRequestError, NotFoundError } from '../../../domain/errors.js';
import { formField, named, sessionOf } from '../context.js';
import { asSentence, noticeFrom, withNotice } from '../notices.js';
import { PATHS } from '../paths.js';
import { apiKeysPage, type ApiKeysView } from '../views/api-keys.js';
import { endSession } from './sign-in.js';

export interface ApiKeyDeps {
  accounts: AccountsService;
  sessions: DashboardSessionsService;
  secureCookies: boolean;
}

function render(res: Response, deps: ApiKeyDeps, status: number, view: Omit<ApiKeysView, 'session' | 'keys'>): void {
  const session = sessionOf(res);
  res
    .status(status)
    .type('html')
    .send(apiKeysPage({ session, keys: deps.accounts.listApiKeys(session.account.id), ...view }));
}

export function apiKeyRoutes(router: Router, deps: ApiKeyDeps): void {
  router.get('/keys', named('dashboard.keys'), (req, res) => render(res, deps, 200, { notice: noticeFrom(req) }));

  router.post('/keys', named('dashboard.createKey'), (req, res) => {
    const name = formField(req, 'name') ?? '';
    try {
      const { apiKey } = deps.accounts.createApiKey(sessionOf(res).account.id, name);
      render(res, deps, 200, { created: { name: name.trim(), apiKey } });
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      render(res, deps, 400, { form: { name, error: asSentence(error.message) } });
    }
  });

  router.post('/keys/:id/revoke', named('dashboard.revokeKey'), (req, res) => {
    const session = sessionOf(res);
    const keyId = String(req.params.id);
    if (!deps.accounts.revokeApiKey(session.account.id, keyId)) {
      // Revoked already (a second click) is done; a key of another account is not here at all.
      if (!deps.accounts.listApiKeys(session.account.id).some((key) => key.id === keyId)) throw new NotFoundError('API key', keyId);
    }
    if (keyId === session.apiKeyId) {
      endSession(res, deps.sessions, deps.secureCookies);
      return res.redirect(303, withNotice(PATHS.signIn, 'own-key-revoked'));
    }
    res.redirect(303, withNotice(PATHS.keys, 'key-revoked'));
  });
}
