// The dashboard's one table helper: every page's table goes through it, so
// its escaping and its empty states are checked here on their own, with
// hostile text in every place a caller's data can reach.
import { describe, expect, it } from "vitest";
import { html } from "../../api/src/http/dashboard/html.ts";
import { type Column, table } from "../../api/src/http/dashboard/table.ts";

const HOSTILE = `<img src=x onerror="alert(1)">'&`;
/** Markup with the spaces an empty attribute leaves, and a tag's last space, taken out. */
const tidy = (markup: string) => markup.replace(/ +>/g, ">").replace(/(\S) {2,}(\S)/g, "$1 $2");
const ESCAPED = "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;";

interface Row {
  name: string;
  count: number;
}
const columns: Column<Row>[] = [
  { header: "Name", cell: (r) => r.name, rowHeader: true },
  { header: html`<span class="visually-hidden">Count</span>`, cell: (r) => r.count },
  { header: HOSTILE, cell: (r) => html`<code>${r.name}</code>` },
  { header: "Plain", cell: (r) => r.name },
];

describe("dashboard table helper", () => {
  it("escapes every caption, header, cell and row attribute taken from data", () => {
    const raw = table([{ name: HOSTILE, count: 3 }], columns, {
      caption: HOSTILE,
      rowAttributes: (r) => html`data-name="${r.name}"`,
    }).value;
    const out = tidy(raw);
    expect(out).not.toContain("<img");
    expect(out).toContain(`<caption>\n              ${ESCAPED}\n            </caption>`);
    expect(out).toContain(`<th scope="col" role="columnheader">${ESCAPED}</th>`);
    expect(out).toContain(`<th scope="row" role="rowheader" data-label="Name">${ESCAPED}</th>`);
    expect(out).toContain(`<code>${ESCAPED}</code>`);
    // A cell carries its column's name for a phone's stacked rows, escaped like the rest.
    expect(out).toContain(`<td role="cell" data-label="${ESCAPED}"><code>`);
    expect(out).toContain(`<td role="cell" data-label="Plain">${ESCAPED}</td>`);
    expect(out).toContain(`<tr role="row" data-name="${ESCAPED}">`);
    // Markup made by the html tag is kept as markup, not escaped twice; a header of markup names no cell.
    expect(out).toContain(`<th scope="col" role="columnheader"><span class="visually-hidden">Count</span></th>`);
    expect(out).toContain(`<td role="cell">3</td>`);
  });

  it("says an empty table is empty in a row spanning every column, or in a paragraph instead of the table", () => {
    const inRow = tidy(table([], columns, { empty: { text: HOSTILE, as: "row" } }).value);
    expect(inRow).toContain(`<td role="cell" colspan="4">${ESCAPED}</td>`);
    expect(inRow).toContain(`<thead role="rowgroup">`);
    const instead = table([], columns, { empty: { text: HOSTILE, as: "paragraph" } }).value;
    expect(instead).toBe(`<p>${ESCAPED}</p>`);
    const bare = table([], columns).value;
    expect(bare).toMatch(/<tbody role="rowgroup">\s*<\/tbody>/);
  });

  it("draws one row per item, in order, inside a scrolling figure", () => {
    const out = tidy(
      table(
        [
          { name: "a", count: 1 },
          { name: "b", count: 2 },
        ],
        columns,
      ).value,
    );
    expect(out.startsWith(`<figure class="scroll">`)).toBe(true);
    expect(out.match(/<tr role="row">/g)).toHaveLength(3); // the head's row and two
    expect(out.indexOf(`<td role="cell">1</td>`)).toBeLessThan(out.indexOf(`<td role="cell">2</td>`));
  });
});
