// A browser's part in the dashboard's HTTP, for tests without one: a cookie
// jar, form posts, and the CSRF token read from the page's form.

export interface Page {
  status: number;
  html: string;
  location: string | null;
}

export class FormClient {
  readonly jar = new Map<string, string>();

  constructor(readonly base: string) {}

  get cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async request(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Page> {
    const response = await fetch(`${this.base}${path}`, {
      redirect: "manual",
      ...init,
      headers: { ...(this.jar.size ? { cookie: this.cookieHeader } : {}), ...init.headers },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === "") this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return { status: response.status, html: await response.text(), location: response.headers.get("location") };
  }

  get(path: string): Promise<Page> {
    return this.request(path);
  }

  /** Posts a form as a browser would: urlencoded, same origin. */
  post(path: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Page> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const item of [v].flat()) body.append(k, item);
    return this.request(path, {
      method: "POST",
      body: body.toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: this.base, ...headers },
    });
  }

  /** The CSRF token of the first form on a page. */
  static csrf(html: string): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!match) throw new Error("no CSRF field on the page");
    return match[1]!;
  }

  async signUp(email: string, password: string): Promise<Page> {
    const page = await this.get("/dashboard/signup");
    return this.post("/dashboard/signup", { _csrf: FormClient.csrf(page.html), email, password });
  }

  async signIn(email: string, password: string): Promise<Page> {
    const page = await this.get("/dashboard/signin");
    return this.post("/dashboard/signin", { _csrf: FormClient.csrf(page.html), email, password });
  }

  /** A form of a signed-in page, posted with that page's token. */
  async submit(pagePath: string, action: string, fields: Record<string, string | string[]>): Promise<Page> {
    const page = await this.get(pagePath);
    return this.post(action, { _csrf: FormClient.csrf(page.html), ...fields });
  }
}

/** The secret shown once after a key is created. */
export function shownSecret(html: string): string {
  const match = /data-secret>(sk_(?:test|live)_[0-9A-Za-z]{48})</.exec(html);
  if (!match) throw new Error("no secret on the page");
  return match[1]!;
}
