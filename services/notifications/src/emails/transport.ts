import nodemailer, { type TransportOptions } from 'nodemailer';

/** One email as the SMTP server gets it. */
export interface OutgoingEmail {
  from: { name: string; address: string };
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The same for every attempt of one email: a receiving server may drop a repeat by it. */
  messageId: string;
}

/**
 * What became of a hand-over: `accepted`; `refused` when the server answered with a reply code
 * or was never reached (nothing was taken: `permanent` for a 5xx); `unknown` when the connection
 * broke after the message went out, so it may have been taken.
 */
export type Handover =
  | { outcome: 'accepted' }
  | { outcome: 'refused'; permanent: boolean; error: string }
  | { outcome: 'unknown'; error: string };

export interface EmailTransport {
  send(email: OutgoingEmail): Promise<Handover>;
  close(): void;
}

/** Errors of a connection that never carried the message. */
const NOT_REACHED = new Set(['ECONNECTION', 'EDNS', 'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETLS', 'EAUTH']);

/**
 * SMTP through nodemailer, from `SMTP_URL` (`smtp://user:pass@host:587`, `smtps://…:465`). Each
 * hand-over is one attempt the outbox records (nodemailer does not retry on its own).
 */
export function smtpTransport(url: string): EmailTransport {
  // nodemailer reads the URL's parts over these options (its `url` option).
  const transporter = nodemailer.createTransport({
    url,
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
  } as TransportOptions);
  return {
    async send(email) {
      try {
        await transporter.sendMail({
          from: email.from,
          to: email.to,
          subject: email.subject,
          text: email.text,
          html: email.html,
          messageId: email.messageId,
        });
        return { outcome: 'accepted' };
      } catch (error) {
        return handoverOfError(error);
      }
    },
    close: () => transporter.close(),
  };
}

export function handoverOfError(error: unknown): Handover {
  const { responseCode, code, command, message } = error as {
    responseCode?: unknown;
    code?: unknown;
    command?: unknown;
    message?: unknown;
  };
  const text = typeof message === 'string' ? message : String(error);
  if (typeof responseCode === 'number' && responseCode >= 400) {
    return { outcome: 'refused', permanent: responseCode >= 500, error: `SMTP ${responseCode}: ${text}` };
  }
  if ((typeof code === 'string' && NOT_REACHED.has(code)) || command === 'CONN') {
    return { outcome: 'refused', permanent: false, error: text };
  }
  return { outcome: 'unknown', error: text };
}
