// The dashboard's pages, for the router to import in one line. Each group of
// pages lives in a file of its own beside the frame they share (layout.ts) and
// the one table helper they all draw tables with (table.ts).
export { ASSETS, type PageContext, csrfField, errorPage, layout } from "./layout.ts";
export { describeRestrictions, keyPage, keysPage, revokePage } from "./key-views.ts";
export { analyticsPage, requestsPage } from "./traffic-views.ts";
export { agentPage, agentsPage } from "./agent-views.ts";
export { sandboxPage } from "./sandbox-views.ts";
export { reservesPage } from "./reserves-views.ts";
