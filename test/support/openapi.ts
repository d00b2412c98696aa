/**
 * Validate requests against GitHub's published OpenAPI description (@octokit/openapi) and GraphQL queries
 * against GitHub's GraphQL schema (@octokit/graphql-schema). A test fails on any violation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/package-root.js';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { buildSchema, graphql, parse, validate, type GraphQLSchema } from 'graphql';

const MODULES = join(packageRoot(), 'node_modules');

interface Operation {
  readonly method: string;
  readonly template: string;
  readonly regex: RegExp;
  readonly params: readonly { name: string; in: string; required?: boolean }[];
  readonly body?: () => ValidateFunction;
  readonly bodyRequired: boolean;
  readonly operationId: string;
}

let operations: Operation[] | undefined;

function load(): Operation[] {
  if (operations) return operations;
  // Ajv rejects OpenAPI's `nullable` without `type`; requests never need it, so it is dropped.
  const text = readFileSync(join(MODULES, '@octokit', 'openapi', 'generated', 'api.github.com.json'), 'utf8').replace(
    /"nullable":\s*(true|false),?/g,
    '',
  );
  const spec = JSON.parse(text.replace(/,(\s*[}\]])/g, '$1')) as {
    paths: Record<
      string,
      Record<
        string,
        {
          operationId: string;
          parameters?: { $ref?: string; name?: string; in?: string; required?: boolean }[];
          requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
        }
      >
    >;
    components: {
      parameters: Record<string, { name: string; in: string; required?: boolean }>;
      schemas: Record<string, unknown>;
    };
  };
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  ajv.addSchema({ $id: 'gh', components: spec.components });
  const rewrite = (schema: unknown): unknown =>
    JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"gh#/components/'));
  operations = [];
  for (const [template, methods] of Object.entries(spec.paths)) {
    const regex = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [method, op] of Object.entries(methods)) {
      if (!op || typeof op !== 'object' || !('operationId' in op)) continue;
      const params = (op.parameters ?? []).map((param) =>
        param.$ref ? spec.components.parameters[param.$ref.split('/').pop()!]! : param,
      ) as {
        name: string;
        in: string;
        required?: boolean;
      }[];
      const schema = op.requestBody?.content?.['application/json']?.schema;
      let compiled: ValidateFunction | undefined;
      const body = schema ? () => (compiled ??= ajv.compile(rewrite(schema) as object)) : undefined;
      operations.push({
        method: method.toUpperCase(),
        template,
        regex,
        params,
        operationId: op.operationId,
        bodyRequired: op.requestBody?.required === true,
        ...(body ? { body } : {}),
      });
    }
  }
  // Literal segments beat parameters: /repos/{o}/{r}/pulls/{n}/files before /repos/{o}/{r}/contents/{path}.
  operations.sort((a, b) => b.template.replace(/\{[^}]+\}/g, '').length - a.template.replace(/\{[^}]+\}/g, '').length);
  return operations;
}

export function findOperation(method: string, path: string): Operation | undefined {
  return load().find((op) => op.method === method && op.regex.test(path));
}

export function validateRest(method: string, path: string, query: URLSearchParams, body: unknown): string[] {
  const op = findOperation(method, path);
  if (!op) return [`${method} ${path} is not an operation in GitHub's REST API description`];
  const problems: string[] = [];
  for (const name of query.keys()) {
    if (!op.params.some((param) => param.in === 'query' && param.name === name))
      problems.push(`${op.operationId}: unknown query parameter "${name}"`);
  }
  if (op.body) {
    if (body === undefined && op.bodyRequired) problems.push(`${op.operationId}: request body required`);
    else if (body !== undefined) {
      const check = op.body();
      if (!check(body))
        problems.push(
          ...(check.errors ?? []).map((error) => `${op.operationId}: body${error.instancePath} ${error.message}`),
        );
    }
  }
  return problems;
}

let graphqlSchema: GraphQLSchema | undefined;

export function githubGraphqlSchema(): GraphQLSchema {
  if (!graphqlSchema) {
    const idl = readFileSync(join(MODULES, '@octokit', 'graphql-schema', 'schema.graphql'), 'utf8');
    graphqlSchema = buildSchema(idl, { assumeValidSDL: true });
  }
  return graphqlSchema;
}

export function validateGraphql(query: string): string[] {
  try {
    return validate(githubGraphqlSchema(), parse(query)).map((error) => `GraphQL: ${error.message}`);
  } catch (error) {
    return [`GraphQL syntax: ${(error as Error).message}`];
  }
}

/** An error GitHub itself answers with (NOT_FOUND, FORBIDDEN, …): resolvers of the fake throw it. */
export class GitHubGraphqlError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export interface GraphqlErrorBody {
  readonly type?: string;
  readonly path?: readonly (string | number)[];
  readonly locations?: readonly { line: number; column: number }[];
  readonly message: string;
}

/**
 * Execute a query against GitHub's schema. Errors come out as GitHub writes them: `type`, `path`, `locations`,
 * `message`, in that order, and no `errors` key at all when there are none.
 */
export async function executeGraphql(
  query: string,
  variables: Record<string, unknown>,
  rootValue: unknown,
): Promise<{ data?: unknown; errors?: readonly GraphqlErrorBody[] }> {
  const result = await graphql({ schema: githubGraphqlSchema(), source: query, variableValues: variables, rootValue });
  const errors = result.errors?.map((error): GraphqlErrorBody => {
    const type = error.originalError instanceof GitHubGraphqlError ? error.originalError.type : undefined;
    return {
      ...(type ? { type } : {}),
      ...(error.path ? { path: error.path } : {}),
      ...(error.locations ? { locations: error.locations } : {}),
      message: error.message,
    };
  });
  return { ...(result.data ? { data: result.data } : {}), ...(errors?.length ? { errors } : {}) };
}
