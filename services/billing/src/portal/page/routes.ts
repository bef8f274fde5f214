import type { ServiceContext } from '@billing/runtime';
import type { Express } from 'express';

export function mountPortalPages(_app: Express, _context: ServiceContext): void {}
