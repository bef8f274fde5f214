import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';
import { detailsFromZodIssues, validationError, type ErrorDetail } from '@billing/contracts';

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

const PARTS = ['params', 'query', 'body'] as const;

/**
 * Parses the request's parts with zod. On failure it answers 422 `validation_error` with
 * `details[]`; on success the parsed values are in `res.locals.input`, and `req.body` and
 * `req.params` are replaced by the parsed ones so unknown fields never reach a handler.
 * Express 5's `req.query` is a getter, so parsed query values live only in
 * `res.locals.input.query`. Use it on the route itself (not `router.use`): the router resets
 * `req.params` between layers.
 *
 * Issue paths are not prefixed with the part: the spec's `details[].path` names the field,
 * and an endpoint takes its input either from the body or from the query.
 */
export function validate<S extends RequestSchemas>(schemas: S): ValidatedHandler<S> {
  return (req, res, next) => {
    const details: ErrorDetail[] = [];
    const parsed: Partial<Record<(typeof PARTS)[number], unknown>> = {};
    for (const part of PARTS) {
      const schema = schemas[part];
      if (!schema) continue;
      const result = schema.safeParse(req[part]);
      if (result.success) parsed[part] = result.data;
      else details.push(...detailsFromZodIssues(result.error.issues));
    }
    if (details.length > 0) {
      next(validationError(details));
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
