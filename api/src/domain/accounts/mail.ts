// What the dashboard mails and when: each job runs after the response (the
// Mailer's `later`), so that whether an address has an account changes
// neither the answer nor its timing. Links name the configured public
// origin, never the request's Host: a forged Host must not put an attacker's
// site in a victim's reset mail.
import type { Mailer } from "../../adapters/mail/index.ts";
import { type Account, type AccountService, type SignUpResult, isUnverified } from "./accounts.ts";
import { TOKEN_LIFETIME_MINUTES } from "./tokens.ts";

const hours = (minutes: number) =>
  minutes % 60 === 0 ? `${minutes / 60} hour${minutes === 60 ? "" : "s"}` : `${minutes} minutes`;

export class AccountMail {
  constructor(
    private readonly accounts: AccountService,
    private readonly mailer: Mailer,
    /** The dashboard's public origin, e.g. https://sandbox.zsd.example. */
    private readonly origin: string,
  ) {}

  private async sendVerification(account: Account): Promise<void> {
    const token = await this.accounts.tokens.issue(account.id, "verify_email", account.email!);
    await this.mailer.send({
      to: account.email!,
      subject: "Confirm your email for the ZSD dashboard",
      text: [
        "Confirm that this address is yours to finish setting up your ZSD dashboard account:",
        "",
        `${this.origin}/dashboard/verify?token=${token}`,
        "",
        `The link works once, for ${hours(TOKEN_LIFETIME_MINUTES.verify_email)}. Until then the account uses the`,
        "sandbox but cannot make production keys.",
        "",
        "If you did not sign up, ignore this mail: nothing is done without the link.",
      ].join("\n"),
    });
  }

  /** After a sign-up: a verification link to a new account, a warning to the owner of an existing one. */
  afterSignUp(result: SignUpResult): void {
    if (result.created) {
      this.mailer.later("verification mail", () => this.sendVerification(result.account));
      return;
    }
    this.mailer.later("sign-up attempt mail", () =>
      this.mailer.send({
        to: result.email,
        subject: "Someone tried to sign up to the ZSD dashboard with your email",
        text: [
          "Someone tried to create a ZSD dashboard account with this address, which already has one.",
          "Nothing about your account changed, and they were not told that it exists.",
          "",
          "If it was you, sign in instead:",
          `${this.origin}/dashboard/signin`,
          "",
          "Forgot your password? Ask for a reset link:",
          `${this.origin}/dashboard/reset`,
        ].join("\n"),
      }),
    );
  }

  /** A verification link again, for a signed-in owner who lost the first. */
  resendVerification(account: Account): void {
    if (!isUnverified(account)) return;
    this.mailer.later("verification mail", () => this.sendVerification(account));
  }

  /** A reset link when the address signs in to an account; nothing otherwise (the page says the same). */
  requestReset(email: string): void {
    this.mailer.later("password reset mail", async () => {
      const account = await this.accounts.byEmail(email);
      if (!account?.email) return;
      const token = await this.accounts.tokens.issue(account.id, "reset_password", account.email);
      await this.mailer.send({
        to: account.email,
        subject: "Reset your ZSD dashboard password",
        text: [
          "Someone (you, we hope) asked to reset the password of the ZSD dashboard account of this address.",
          "Choose a new password here:",
          "",
          `${this.origin}/dashboard/reset/confirm?token=${token}`,
          "",
          `The link works once, for ${hours(TOKEN_LIFETIME_MINUTES.reset_password)}. Using it signs every session of the`,
          "account out. If you did not ask, ignore this mail: your password stays as it is.",
        ].join("\n"),
      });
    });
  }

  /** Tells the owner the password was reset, in case it was not them. */
  passwordReset(account: Account): void {
    if (!account.email) return;
    const to = account.email;
    this.mailer.later("password changed mail", () =>
      this.mailer.send({
        to,
        subject: "Your ZSD dashboard password was reset",
        text: [
          "The password of your ZSD dashboard account was just reset with a mailed link, and every",
          "session was signed out. If this was not you, reset it again at once:",
          `${this.origin}/dashboard/reset`,
        ].join("\n"),
      }),
    );
  }
}
