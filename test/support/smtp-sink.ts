/**
 * A real SMTP server on loopback (the smtp-server package) that keeps every
 * message it accepts, parsed into its MIME parts by mailparser. It can be told
 * to refuse messages, to test retries.
 */
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  parsed: ParsedMail;
}

export interface SmtpSink {
  url: string;
  port: number;
  received: ReceivedMail[];
  /** While > 0, each message is refused with 451 (a temporary failure) and the count goes down. */
  refuseNext: number;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const sink: SmtpSink = { url: '', port: 0, received: [], refuseNext: 0, close: async () => undefined };
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (sink.refuseNext > 0) {
          sink.refuseNext -= 1;
          callback(Object.assign(new Error('mailbox busy, try later'), { responseCode: 451 }));
          return;
        }
        simpleParser(Buffer.concat(chunks)).then(
          (parsed) => {
            const from = session.envelope.mailFrom;
            sink.received.push({ envelopeFrom: from === false ? '' : from.address, envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address), parsed });
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sink.port = (server.server.address() as AddressInfo).port;
  sink.url = `smtp://127.0.0.1:${sink.port}`;
  sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sink;
}
