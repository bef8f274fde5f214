import {
  CreateProductBody,
  ListProductsQuery,
  ProductIdParams,
  ProductSlugParams,
  UpdateProductBody,
  livemodeOf,
  newId,
  notFound,
  toList,
  unauthorized,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { adminOrganizationOf, callerOf, requireAdminOrganization, requireCaller, validate } from '@billing/service';
import type { Express } from 'express';
import { productAggregate } from './aggregate';
import {
  findOrganizationProduct,
  findProductById,
  findProductBySlug,
  listProducts,
  toProductListItem,
  toProductResource,
} from './queries';
import { type ProductView, viewOf } from './read-model';

const found = (view: ProductView | null | undefined, id: string): ProductView => {
  if (!view) throw notFound(`No such product: ${id}`);
  return view;
};

export function mountProductRoutes(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;

  app.use('/v1', requireCaller);
  app.use('/admin', requireAdminOrganization);

  app.get('/v1/products', validate({ query: ListProductsQuery }), async (req, res) => {
    const caller = callerOf(req);
    const { type, status } = res.locals.input.query;
    const products = await listProducts(db, schema, caller, { type, active: status !== 'archived' });
    const items = products.map(toProductListItem);
    // SDKs read `products` (as clients read `subscriptions`); `data` keeps the list envelope.
    res.json({ ...toList(items, livemodeOf(caller.environment)), products: items });
  });

  app.get('/v1/products/by-slug/:slug', validate({ params: ProductSlugParams }), async (req, res) => {
    const { slug } = res.locals.input.params;
    res.json(toProductResource(found(await findProductBySlug(db, schema, callerOf(req), slug), slug)));
  });

  app.get('/v1/products/:id', validate({ params: ProductIdParams }), async (req, res) => {
    const caller = callerOf(req);
    // Spec: products take the Secret Key; Publishable Keys may only list and read by slug.
    if (caller.keyKind !== 'secret') throw unauthorized('Retrieving a product by id requires a Secret Key');
    const { id } = res.locals.input.params;
    res.json(toProductResource(found(await findProductById(db, schema, caller, id), id)));
  });

  app.post('/admin/products', validate({ body: CreateProductBody }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const { environment, ...fields } = res.locals.input.body;
    const productId = newId('product');
    const at = now();
    const { state } = await productAggregate.handle(
      store,
      productId,
      { type: 'CreateProduct', data: { productId, organization, environment, fields, now: at } },
      { organization, environment, occurredAt: at },
    );
    res.status(201).json(toProductResource(found(viewOf(state), productId)));
  });

  // A body-less PATCH changes nothing, like `{}`.
  const updateSchemas = { params: ProductIdParams, body: UpdateProductBody.default({}) };
  app.patch('/admin/products/:id', validate(updateSchemas), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const { params, body: changes } = res.locals.input;
    // The environment is fixed at creation; the read model knows it before the stream is read.
    const { environment } = found(await findOrganizationProduct(db, schema, organization, params.id), params.id);
    const at = now();
    const { state } = await productAggregate.handle(
      store,
      params.id,
      { type: 'UpdateProduct', data: { productId: params.id, organization, changes, now: at } },
      { organization, environment, occurredAt: at },
    );
    res.json(toProductResource(found(viewOf(state), params.id)));
  });
}
