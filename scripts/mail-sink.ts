/**
 * A local SMTP server for trying e-mail notifications: accepts every message
 * on 127.0.0.1 (port 46025, or MAIL_SINK_PORT) and prints its envelope,
 * subject and plain-text part. Start Vigil with
 * VIGIL_SMTP_URL=smtp://127.0.0.1:46025 to send to it.
 */
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { MAIL_SINK_DEFAULT_PORT } from './sink-ports.js';

const port = Number(process.env.MAIL_SINK_PORT ?? MAIL_SINK_DEFAULT_PORT);
const server = new SMTPServer({
  secure: false,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, session, callback) {
    simpleParser(stream).then(
      (mail) => {
        const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
        const to = session.envelope.rcptTo.map((rcpt) => rcpt.address).join(', ');
        process.stdout.write(`\n=== ${new Date().toISOString()} from ${from} to ${to}\nSubject: ${mail.subject ?? ''}\n`);
        process.stdout.write(`Parts: text ${mail.text === undefined ? 'no' : 'yes'}, html ${mail.html === false ? 'no' : 'yes'}\n\n${mail.text ?? ''}\n`);
        callback();
      },
      (error: Error) => callback(error),
    );
  },
});
server.listen(port, '127.0.0.1', () => process.stdout.write(`mail sink listening on smtp://127.0.0.1:${port}\n`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
