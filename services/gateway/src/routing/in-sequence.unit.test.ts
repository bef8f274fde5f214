import type { Request, RequestHandler, Response } from 'express';
import { inSequence } from './in-sequence';

/** Runs `handlers` as one; what reached the final `next`, and which handlers ran. */
async function run(handlers: RequestHandler[]) {
  const ran: number[] = [];
  const numbered = handlers.map<RequestHandler>((handler, i) => (req, res, next) => {
    ran.push(i);
    return handler(req, res, next);
  });
  const passed = await new Promise<unknown[]>((resolve) => {
    inSequence(numbered)({} as Request, {} as Response, (...args: unknown[]) => resolve(args));
  });
  return { ran, passed };
}

const passes: RequestHandler = (_req, _res, next) => next();
const failure = new Error('refused');

describe('inSequence', () => {
  it('runs every handler in turn, then calls next once with nothing', async () => {
    const later: RequestHandler = (_req, _res, next) => void setTimeout(() => next(), 1);
    expect(await run([passes, later, passes])).toEqual({ ran: [0, 1, 2], passed: [] });
  });

  it('stops at an error passed on, thrown, or a rejected promise, and hands it to next', async () => {
    const passesOn: RequestHandler = (_req, _res, next) => next(failure);
    const throws: RequestHandler = () => {
      throw failure;
    };
    const rejects: RequestHandler = async () => {
      throw failure;
    };
    for (const failing of [passesOn, throws, rejects]) {
      expect(await run([passes, failing, passes])).toEqual({ ran: [0, 1], passed: [failure] });
    }
  });

  it('stops where a handler answers without calling next', async () => {
    const answers: RequestHandler = () => undefined;
    const done = jest.fn();
    inSequence([answers, passes])({} as Request, {} as Response, done);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(done).not.toHaveBeenCalled();
  });
});
