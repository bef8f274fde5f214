import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';
import { type ApiError, detailsFromZodIssues, invalidParameters, validationError } from '@billing/contracts';

export interface RequestSchemas {
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
}

type ParamsDictionary = Request['params'];
type ParsedQs = Request['query'];
type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

/** What `validate(schemas)` leaves for the handlers: every part's parsed value. */
export interface ValidatedInput<S extends RequestSchemas> {
  body: Out<S['body']>;
  query: Out<S['query']>;
  params: Out<S['params']>;
}

export interface ValidatedLocals<S extends RequestSchemas> extends Record<string, unknown> {
  input: ValidatedInput<S>;
}

type ParamsOf<S extends RequestSchemas> = S['params'] extends z.ZodType ? z.output<S['params']> : ParamsDictionary;

/**
 * The handler type that follows `validate(schemas)`: `req.body` and `res.locals.input` are
 * typed from the schemas. Annotate separately declared handlers with it.
 */
export type ValidatedHandler<S extends RequestSchemas> = RequestHandler<
  ParamsOf<S>,
  unknown,
  Out<S['body']>,
  ParsedQs,
  ValidatedLocals<S>
>;

type Part = 'params' | 'query' | 'body';
type Parsed = Partial<Record<Part, unknown>>;
type RequestParts = Record<Part, unknown>;

/** The request line's parts, checked before the body; their failures are the caller's parameters. */
const PARAMETERS = [
  ['params', 'path'],
  ['query', 'query'],
] as const;

/**
 * Parses the request's parts with zod. Path and query parameters that fail answer 400
 * `bad_request` (spec: "invalid or missing parameters"), naming them; only when they pass is the
 * body checked, and a body that fails answers 422 `validation_error`. Both carry `details[]` of
 * `{path, message, code}`. On success the parsed values are in `res.locals.input`, and
 * `req.body` and `req.params` are replaced by the parsed ones so unknown fields never reach a
 * handler. Express 5's `req.query` is a getter, so parsed query values live only in
 * `res.locals.input.query`. Use it on the route itself (not `router.use`): the router resets
 * `req.params` between layers.
 *
 * Issue paths are not prefixed with the part: `details[].path` names the field or parameter.
 */
export function validate<S extends RequestSchemas>(schemas: S): ValidatedHandler<S> {
  return (req, res, next) => {
    const parsed: Parsed = {};
    const failure = parameterFailure(schemas, req, parsed) ?? bodyFailure(schemas, req, parsed);
    if (failure) {
      next(failure);
      return;
    }
    // Sound by construction: each part holds its schema's output, absent parts are undefined.
    const input = parsed as ValidatedInput<S>;
    res.locals.input = input;
    if (schemas.body) req.body = input.body;
    if (schemas.params) req.params = input.params as ParamsOf<S>;
    next();
  };
}

/** 400 for the first of path and query that fails, or undefined when both pass. */
function parameterFailure(schemas: RequestSchemas, req: RequestParts, parsed: Parsed): ApiError | undefined {
  for (const [part, location] of PARAMETERS) {
    const details = parsePart(schemas[part], req[part], part, parsed);
    if (details) return invalidParameters(location, details);
  }
  return undefined;
}

function bodyFailure(schemas: RequestSchemas, req: RequestParts, parsed: Parsed): ApiError | undefined {
  const details = parsePart(schemas.body, req.body, 'body', parsed);
  return details ? validationError(details) : undefined;
}

/** Stores the parsed value and returns undefined, or returns the failure's details. */
function parsePart(schema: z.ZodType | undefined, value: unknown, part: Part, parsed: Parsed) {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) return detailsFromZodIssues(result.error.issues);
  parsed[part] = result.data;
  return undefined;
}
