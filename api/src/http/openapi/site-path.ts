// Where the API serves the documentation site, and so the base its build links from
// (docs/.vitepress/config.ts imports it): one place, or the pages would name assets elsewhere.
export const DOCS_SITE_PATH = "/docs/site/";
