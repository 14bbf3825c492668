/**
 * The Mailer port's adapters: SMTP through nodemailer (VIGIL_SMTP_URL), or,
 * when no server is set, the log (CONTRACT.md: "unset means e-mails are
 * logged, not sent"). The SMTP URL may carry credentials: it is never logged.
 */
import type { Transporter } from 'nodemailer';
import type { EmailMessage, Mailer } from '../../app/ports.js';
import type { Logger } from '../../observability/logger.js';

/** nodemailer is loaded with the first e-mail, not at start: a service that sends none (the operator's process) does not hold it. */
export function smtpMailer(smtpUrl: string, from: string): Mailer {
  let transport: Promise<Transporter> | undefined;
  const transportOnce = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        url: smtpUrl,
        // Bounded waits: a dead server fails the attempt, which is retried later.
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
      }),
    ));
  return {
    async send(message: EmailMessage) {
      await (await transportOnce()).sendMail({ from, to: message.to, subject: message.subject, text: message.text, html: message.html });
    },
  };
}

export function loggingMailer(logger: Logger, from: string): Mailer {
  return {
    async send(message: EmailMessage) {
      logger.info({ email: { from, to: message.to, subject: message.subject, text: message.text } }, 'e-mail not sent: VIGIL_SMTP_URL is unset');
    },
  };
}
