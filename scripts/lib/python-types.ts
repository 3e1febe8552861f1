// The Python SDK's types, made from the API's OpenAPI document: a TypedDict
// per schema, request body and query, and the operations' methods and paths.
// sdk/python/zsd/_generated.py is this module's output, never edited by hand,
// so Python and the API share one definition of every schema.
import { createApp, loadConfig, openDatabase } from "@zsd/api";

type Schema = {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  description?: string;
};

interface Operation {
  operationId: string;
  summary?: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Schema; description?: string }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** The document the sandbox serves (every route, the sandbox's included). */
export async function sandboxDocument(): Promise<OpenApiDocument> {
  const db = await openDatabase({});
  try {
    const app = createApp({ config: loadConfig({ ENVIRONMENT: "sandbox", LOG_LEVEL: "silent" }), db });
    return JSON.parse(JSON.stringify(app.openApi)) as OpenApiDocument;
  } finally {
    await db.close();
  }
}

const KEYWORDS = new Set(
  (
    "False None True and as assert async await break class continue def del elif else except finally for from " +
    "global if import in is lambda nonlocal not or pass raise return try while with yield"
  ).split(" "),
);

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join("");

const pyLiteral = (value: unknown): string => {
  if (value === null) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  return JSON.stringify(value);
};

/** One line, no trailing spaces: descriptions become comments. */
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

export function pythonTypes(doc: OpenApiDocument): string {
  const classes: string[] = [];
  const emitted = new Set<string>();
  const components = new Set<string>();

  const unionOf = (types: string[]): string => {
    const unique = [...new Set(types)];
    const hasNone = unique.includes("None");
    const rest = unique.filter((t) => t !== "None");
    const inner = rest.length === 0 ? "None" : rest.length === 1 ? rest[0]! : `Union[${rest.join(", ")}]`;
    return hasNone && rest.length > 0 ? `Optional[${inner}]` : inner;
  };

  /** The Python type of `schema`; inline objects become TypedDicts named after `name`. */
  const typeOf = (schema: Schema, name: string): string => {
    if (schema.$ref) {
      const ref = schema.$ref.split("/").pop()!;
      component(ref);
      return ref;
    }
    if (schema.const !== undefined) return `Literal[${pyLiteral(schema.const)}]`;
    if (schema.enum) {
      const values = schema.enum.filter((v) => v !== null);
      const literal = `Literal[${values.map(pyLiteral).join(", ")}]`;
      return values.length < schema.enum.length ? `Optional[${literal}]` : literal;
    }
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (alternatives) {
      const objects = alternatives.filter((a) => a.type === "object" && a.properties).length;
      let n = 0;
      return unionOf(alternatives.map((a) => typeOf(a, objects > 1 && a.properties ? `${name}${++n}` : name)));
    }
    if (schema.allOf && schema.allOf.length === 1) return typeOf(schema.allOf[0]!, name);
    if (Array.isArray(schema.type)) return unionOf(schema.type.map((t) => typeOf({ ...schema, type: t }, name)));
    switch (schema.type) {
      case "string":
        return "str";
      case "integer":
        return "int";
      case "number":
        return "float";
      case "boolean":
        return "bool";
      case "null":
        return "None";
      case "array":
        return `List[${schema.items ? typeOf(schema.items, `${name}Item`) : "Any"}]`;
      case "object":
        if (schema.properties && Object.keys(schema.properties).length > 0) {
          typedDict(name, schema);
          return name;
        }
        if (typeof schema.additionalProperties === "object")
          return `Dict[str, ${typeOf(schema.additionalProperties, `${name}Value`)}]`;
        return "Dict[str, Any]";
      default:
        return "Any";
    }
  };

  /** A TypedDict; required keys in a base class, the others in total=False (Python 3.9 has no NotRequired). */
  const typedDict = (name: string, schema: Schema, doc?: string) => {
    if (emitted.has(name)) return;
    emitted.add(name);
    const required = new Set(schema.required ?? []);
    const fields = Object.entries(schema.properties ?? {}).map(([key, property]) => ({
      key,
      type: typeOf(property, `${name}${pascal(key)}`),
      description: property.description,
      required: required.has(key),
    }));
    const identifiers = fields.every((f) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(f.key) && !KEYWORDS.has(f.key));
    const comment = (text?: string) => (text ? `    # ${oneLine(text)}\n` : "");
    const docstring = doc ?? schema.description;
    const head = docstring ? `    """${oneLine(docstring).replaceAll('"""', "'''")}"""\n\n` : "";
    const group = (className: string, bases: string, total: boolean, members: typeof fields) => {
      if (identifiers) {
        const body = members.map((f) => `${comment(f.description)}    ${f.key}: ${f.type}\n`).join("");
        return `class ${className}(${bases}${total ? "" : ", total=False"}):\n${className === name ? head : ""}${body || "    pass\n"}`;
      }
      // Keys that are not identifiers (from, …): the functional form, which has no bases.
      const entries = members.map((f) => `        ${JSON.stringify(f.key)}: ${f.type},\n`).join("");
      return `${className} = TypedDict(\n    ${JSON.stringify(className)},\n    {\n${entries}    },\n    total=${total ? "True" : "False"},\n)\n`;
    };
    const mandatory = fields.filter((f) => f.required);
    const optional = fields.filter((f) => !f.required);
    if (mandatory.length > 0 && optional.length > 0 && identifiers) {
      classes.push(group(`_${name}Required`, "TypedDict", true, mandatory));
      classes.push(group(name, `_${name}Required`, false, optional));
    } else if (mandatory.length > 0 && optional.length > 0) {
      // Functional TypedDicts cannot inherit: every key optional, as the weaker promise.
      classes.push(group(name, "TypedDict", false, fields));
    } else {
      classes.push(group(name, "TypedDict", optional.length === 0, fields));
    }
  };

  /** A shared schema, emitted before its first user: annotations are evaluated when a class is made. */
  function component(name: string) {
    if (components.has(name)) return;
    components.add(name);
    const type = typeOf(doc.components.schemas[name]!, name);
    if (type !== name) classes.push(`${name} = ${type}\n`);
  }
  for (const name of Object.keys(doc.components.schemas)) component(name);

  const operations: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const base = pascal(op.operationId);
      const body = op.requestBody?.content["application/json"]?.schema;
      if (body) {
        const type = typeOf(body, `${base}Request`);
        if (type !== `${base}Request`) classes.push(`${base}Request = ${type}\n`);
      }
      const query = (op.parameters ?? []).filter((p) => p.in === "query");
      if (query.length > 0) {
        typedDict(
          `${base}Query`,
          {
            type: "object",
            properties: Object.fromEntries(query.map((p) => [p.name, { ...p.schema, description: p.description }])),
            required: query.filter((p) => p.required).map((p) => p.name),
          },
          `Query of ${method.toUpperCase()} ${path}`,
        );
      }
      for (const [status, response] of Object.entries(op.responses)) {
        const schema = response.content?.["application/json"]?.schema;
        if (!status.startsWith("2") || !schema || schema.$ref) continue;
        const type = typeOf(schema, `${base}Response`);
        if (type !== `${base}Response`) classes.push(`${base}Response = ${type}\n`);
      }
      operations.push(
        `    ${JSON.stringify(op.operationId)}: (${JSON.stringify(method.toUpperCase())}, ${JSON.stringify(path)}),\n`,
      );
    }
  }

  return [
    "# GENERATED by scripts/codegen-python.ts from the API's OpenAPI document (GET /v1/openapi.json).",
    "# Do not edit: run `npm run codegen:python` to regenerate; test/sdk/python-types.test.ts fails",
    "# when this file and the document differ.",
    "# fmt: off",
    "# pyright: reportUnusedImport=false",
    "from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union",
    "",
    "",
    classes.join("\n\n"),
    "",
    "# operationId: (method, path) of every operation of the document.",
    "OPERATIONS: Dict[str, Tuple[str, str]] = {",
    operations.join("").trimEnd(),
    "}",
    "",
  ].join("\n");
}
