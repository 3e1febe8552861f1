// A self-contained reference page rendered from the OpenAPI document: no
// script from a CDN, so it works offline and under a strict CSP.
const escape = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

interface Operation {
  summary?: string;
  operationId?: string;
  parameters?: { name: string; in: string; required?: boolean; description?: string }[];
  requestBody?: unknown;
  responses: Record<string, { description: string }>;
  security?: unknown[];
}

export function docsPage(
  doc: { info: { title: string; description: string }; paths: Record<string, Record<string, unknown>> },
  baseUrl: string,
): string {
  const sections = Object.entries(doc.paths)
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, raw]) => {
        const op = raw as Operation;
        const params = (op.parameters ?? [])
          .map(
            (p) =>
              `<li><code>${escape(p.name)}</code> (${p.in}${p.required ? ", required" : ""}) ${escape(p.description ?? "")}</li>`,
          )
          .join("");
        const responses = Object.entries(op.responses)
          .map(([status, r]) => `<li><code>${status}</code> ${escape(r.description)}</li>`)
          .join("");
        return `<section id="${escape(op.operationId ?? path)}"><h2><span class="m">${method.toUpperCase()}</span> <code>${escape(path)}</code></h2>
<p>${escape(op.summary ?? "")}${op.security?.length === 0 ? " <em>(no API key)</em>" : ""}</p>
${params ? `<h3>Parameters</h3><ul>${params}</ul>` : ""}${op.requestBody ? "<p>Body: JSON, see the OpenAPI document.</p>" : ""}
<h3>Responses</h3><ul>${responses}</ul></section>`;
      }),
    )
    .join("\n");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info.title)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:54rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}.m{font-size:.8em;background:#222;color:#fff;padding:.1em .4em;border-radius:.2em}section{border-top:1px solid #ddd;margin-top:1.5rem}</style>
</head><body><h1>${escape(doc.info.title)}</h1><p>${escape(doc.info.description)}</p>
<p>Base address: <code>${escape(baseUrl)}</code>. Authenticate with <code>Authorization: Bearer sk_test_…</code>. Machine-readable: <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
${sections}</body></html>`;
}
