// The one way the dashboard draws a table: a scrolling figure (a wide table
// scrolls sideways, not the page: tables.test.ts), a header cell per column,
// a row per item, and what an empty table says. On a phone each row stacks its
// cells, each under its column's name (`data-label`), so that words wrap
// between words instead of being cut to fit eight columns; the roles keep it a
// table for screen readers once the stylesheet makes its parts blocks. Every
// header, caption and cell goes through the html tag, so a caller's data is
// escaped here as anywhere.
import { type Html, html } from "./html.ts";

export interface Column<T> {
  /** Words, or markup for a header with no visible words (a visually hidden label, which stacked cells do without). */
  header: Html | string;
  cell: (item: T) => Html | string | number;
  /** The cell names its row (`<th scope="row">`), as the first column of a breakdown does. */
  rowHeader?: boolean;
}

export interface TableOptions<T> {
  caption?: string;
  /**
   * What an empty table says: in a row of the table ("row", where the table's
   * head still explains the filters), or instead of the table ("paragraph").
   * Without it an empty table shows its head alone.
   */
  empty?: { text: string; as: "row" | "paragraph" };
  /** Attributes of an item's `<tr>`, made with the html tag. */
  rowAttributes?: (item: T) => Html;
}

export function table<T>(items: readonly T[], columns: Column<T>[], options: TableOptions<T> = {}): Html {
  const { caption, empty, rowAttributes } = options;
  if (items.length === 0 && empty?.as === "paragraph") return html`<p>${empty.text}</p>`;
  const label = (c: Column<T>) => (typeof c.header === "string" ? html`data-label="${c.header}"` : "");
  const rows = items.length
    ? items.map(
        (item) =>
          html`<tr role="row" ${rowAttributes ? rowAttributes(item) : ""}>
            ${columns.map((c) =>
              c.rowHeader
                ? html`<th scope="row" role="rowheader" ${label(c)}>${c.cell(item)}</th>`
                : html`<td role="cell" ${label(c)}>${c.cell(item)}</td>`,
            )}
          </tr>`,
      )
    : empty
      ? html`<tr role="row">
          <td role="cell" colspan="${columns.length}">${empty.text}</td>
        </tr>`
      : "";
  return html`<figure class="scroll">
    <table role="table">
      ${
        caption
          ? html`<caption>
              ${caption}
            </caption>`
          : ""
      }
      <thead role="rowgroup">
        <tr role="row">
          ${columns.map((c) => html`<th scope="col" role="columnheader">${c.header}</th>`)}
        </tr>
      </thead>
      <tbody role="rowgroup">
        ${rows}
      </tbody>
    </table>
  </figure>`;
}
