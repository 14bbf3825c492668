/** Webhook endpoints: list, add, detail with the delivery log, reveal the secret, send a test event, delete. */
import type { Response, Router } from 'express';
import type { WebhookEndpointsService } from '../../../app/webhook-endpoints-service.js';
import { InvalidRequestError } from '../../../domain/errors.js';
import { formField, named, sessionOf } from '../context.js';
import { asSentence, noticeFrom, withNotice } from '../notices.js';
import { PATHS } from '../paths.js';
import type { Notice } from '../views/components.js';
import { webhookPage, webhooksPage } from '../views/webhooks.js';

function renderEndpoint(res: Response, endpoints: WebhookEndpointsService, id: string, options: { revealSecret: boolean; notice?: Notice | undefined }): void {
  const session = sessionOf(res);
  const accountId = session.account.id;
  const endpoint = endpoints.get(accountId, id);
  res.type('html').send(webhookPage({ session, endpoint, log: endpoints.deliveryLog(accountId, id), ...options }));
}

export function webhookRoutes(router: Router, endpoints: WebhookEndpointsService): void {
  router.get('/webhooks', named('dashboard.webhooks'), (req, res) => {
    const session = sessionOf(res);
    res.type('html').send(webhooksPage({ session, endpoints: endpoints.list(session.account.id), notice: noticeFrom(req) }));
  });

  router.post('/webhooks', named('dashboard.addWebhook'), (req, res) => {
    const session = sessionOf(res);
    const url = (formField(req, 'url') ?? '').trim();
    try {
      const endpoint = endpoints.add(session.account.id, url);
      res.redirect(303, withNotice(PATHS.webhook(endpoint.id), 'endpoint-added'));
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      res
        .status(400)
        .type('html')
        .send(webhooksPage({ session, endpoints: endpoints.list(session.account.id), form: { url, error: asSentence(error.message) } }));
    }
  });

  router.get('/webhooks/:id', named('dashboard.webhook'), (req, res) => {
    renderEndpoint(res, endpoints, String(req.params.id), { revealSecret: false, notice: noticeFrom(req) });
  });

  // A POST, so that the secret never sits in an address, a history entry or a cache.
  router.post('/webhooks/:id/reveal', named('dashboard.revealWebhookSecret'), (req, res) => {
    renderEndpoint(res, endpoints, String(req.params.id), { revealSecret: true });
  });

  router.post('/webhooks/:id/test', named('dashboard.testWebhook'), (req, res) => {
    const id = String(req.params.id);
    endpoints.sendTestEvent(sessionOf(res).account.id, id);
    res.redirect(303, withNotice(PATHS.webhook(id), 'test-sent'));
  });

  router.post('/webhooks/:id/delete', named('dashboard.deleteWebhook'), (req, res) => {
    endpoints.remove(sessionOf(res).account.id, String(req.params.id));
    res.redirect(303, withNotice(PATHS.webhooks, 'endpoint-deleted'));
  });
}
