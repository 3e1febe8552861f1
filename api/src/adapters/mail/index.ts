// Outgoing mail through nodemailer: SMTP_URL's server, or in the sandbox
// without one, the in-process capture (a real SMTP hop all the same). Mail is
// sent after the response, never in it: a request that mails takes as long as
// one that does not, and a slow mail server delays no page.
import nodemailer, { type Transporter } from "nodemailer";
import type { Config } from "../../config/config.ts";
import type { Logger } from "../../observability/logger.ts";
import { MailCapture } from "./capture.ts";

export { type CapturedMail, MailCapture } from "./capture.ts";

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

// Past this many unfinished jobs, new ones are dropped: a flood of sign-ups cannot grow memory without end.
const MAX_PENDING = 1000;
const RETRY_DELAYS_MS = [1_000, 5_000];

export class Mailer {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly transport: Promise<Transporter | undefined>,
    private readonly from: string,
    private readonly logger: Logger,
    /** The sandbox's mailbox when there is no SMTP_URL. */
    readonly capture?: Promise<MailCapture>,
  ) {}

  /** Runs `task` off the request path; its failure is logged as `what`, never thrown. */
  later(what: string, task: () => Promise<void>): void {
    if (this.pending.size >= MAX_PENDING) {
      this.logger.warn({ what }, "mail queue full; dropped");
      return;
    }
    const job = (async () => {
      // A macrotask later: the response is written first.
      await new Promise((resolve) => setImmediate(resolve));
      await task();
    })()
      .catch((error: unknown) =>
        // The message only: a mail's text carries a token, and it must not reach a log.
        this.logger.warn({ what, err: error instanceof Error ? error.message : String(error) }, "mail not sent"),
      )
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  /** Sends now, retrying twice; throws when the server never takes it. */
  async send(mail: OutgoingMail): Promise<void> {
    const transport = await this.transport;
    if (!transport) {
      this.logger.warn({ subject: mail.subject }, "SMTP_URL is not set: mail not sent");
      return;
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
        return;
      } catch (error) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** Resolves when every job queued so far has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    await this.idle();
    (await this.transport)?.close();
    await (await this.capture)?.close();
  }
}

const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

export function createMailer(config: Config, logger: Logger): Mailer {
  if (config.SMTP_URL) {
    const transport = nodemailer.createTransport({ url: config.SMTP_URL, ...TIMEOUTS });
    return new Mailer(Promise.resolve(transport), config.MAIL_FROM, logger);
  }
  if (config.ENVIRONMENT === "production") {
    logger.warn("SMTP_URL is not set: the dashboard cannot send email verification or password reset mail");
    return new Mailer(Promise.resolve(undefined), config.MAIL_FROM, logger);
  }
  const capture = MailCapture.start();
  const transport = capture.then((c) => nodemailer.createTransport({ url: c.url, ignoreTLS: true, ...TIMEOUTS }));
  // A capture that cannot listen leaves mail unsent (logged per mail), never a failed start.
  capture.catch((error: unknown) => logger.warn({ err: error }, "sandbox mail capture did not start"));
  return new Mailer(
    transport.catch(() => undefined),
    config.MAIL_FROM,
    logger,
    capture,
  );
}

/**
 * The origin links in mail name: this environment's public base address when
 * set, else this server's own (`npm start`). Never a request's Host header,
 * which whoever asks for a reset link chooses.
 */
export function linkOrigin(config: Config): string {
  const base = config.ENVIRONMENT === "production" ? config.PRODUCTION_BASE_URL : config.SANDBOX_BASE_URL;
  if (base) return new URL(base).origin;
  const host = config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}`;
}
