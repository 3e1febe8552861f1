// A real SMTP server (smtp-server) for tests to send the API's mail to: each
// message is parsed with mailparser and kept, and tests wait for the one they
// expect.
import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  /** The envelope's recipients, as the SMTP session gave them. */
  rcptTo: string[];
}

export class TestMailbox {
  private constructor(
    private readonly server: SMTPServer,
    readonly url: string,
    readonly received: ReceivedMail[],
  ) {}

  static async start(): Promise<TestMailbox> {
    const received: ReceivedMail[] = [];
    const server = new SMTPServer({
      disabledCommands: ["STARTTLS", "AUTH"],
      authOptional: true,
      logger: false,
      onData(stream, session, callback) {
        simpleParser(stream)
          .then((parsed) => {
            received.push({
              from: parsed.from?.text ?? "",
              to: [parsed.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address ?? "")),
              subject: parsed.subject ?? "",
              text: parsed.text ?? "",
              rcptTo: session.envelope.rcptTo.map((r) => r.address),
            });
            callback();
          })
          .catch((error: Error) => callback(error));
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    return new TestMailbox(server, `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`, received);
  }

  /** Mail to `to`, newest last. */
  to(to: string): ReceivedMail[] {
    return this.received.filter((m) => m.rcptTo.includes(to));
  }

  /** The first mail to `to` whose subject matches, waiting for it. */
  async waitFor(to: string, subject: RegExp, timeoutMs = 15_000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.to(to).find((m) => subject.test(m.subject));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${subject} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The path and query of the mail's link to `path` (the link names the configured origin, the test its own). */
export function linkTo(mail: ReceivedMail, path: string): string {
  const match = new RegExp(`https?://[^\\s/]+(${path.replace(/[/?]/g, "\\$&")}\\?token=[^\\s]+)`).exec(mail.text);
  if (!match) throw new Error(`no link to ${path} in: ${mail.text}`);
  return match[1]!;
}
