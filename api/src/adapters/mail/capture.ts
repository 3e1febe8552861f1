// The sandbox's mailbox: a real SMTP server on 127.0.0.1 that keeps what it
// receives in memory, so that a newcomer reads the verification and reset
// mail of `npm start` on the dashboard without setting up a mail server.
import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface CapturedMail {
  id: number;
  receivedAt: string;
  from: string;
  to: string[];
  subject: string;
  text: string;
}

// A mailbox for one developer's session: old mail falls off rather than filling memory.
const KEEP = 100;
const MAX_BYTES = 256 * 1024;

export class MailCapture {
  private readonly mail: CapturedMail[] = [];
  private next = 1;
  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(): Promise<MailCapture> {
    let capture: MailCapture | undefined;
    const server = new SMTPServer({
      // Plain SMTP on loopback: there is nothing to protect between two ends of one process.
      disabledCommands: ["STARTTLS", "AUTH"],
      authOptional: true,
      size: MAX_BYTES,
      logger: false,
      onData(stream, _session, callback) {
        simpleParser(stream)
          .then((parsed) => {
            if (stream.sizeExceeded) return callback(new Error("message too large"));
            capture!.keep({
              from: parsed.from?.text ?? "",
              to: [parsed.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address ?? "")),
              subject: parsed.subject ?? "",
              text: parsed.text ?? "",
            });
            callback();
          })
          .catch((error: Error) => callback(error));
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    // A test or tool that forgets to close the app is not kept alive by its mailbox.
    server.server.unref();
    capture = new MailCapture(server, (server.server.address() as AddressInfo).port);
    return capture;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  private keep(mail: Omit<CapturedMail, "id" | "receivedAt">) {
    this.mail.unshift({ id: this.next++, receivedAt: new Date().toISOString(), ...mail });
    this.mail.length = Math.min(this.mail.length, KEEP);
  }

  /** Newest first. */
  list(): CapturedMail[] {
    return [...this.mail];
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
