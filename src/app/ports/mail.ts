export interface EmailMessage {
  to: string[];
  subject: string;
  text: string;
  html: string;
}

/** Sends e-mail (SMTP through nodemailer; or the log, when no server is set). Throws when the message was not accepted. */
export interface Mailer {
  send(message: EmailMessage): Promise<void>;
}
