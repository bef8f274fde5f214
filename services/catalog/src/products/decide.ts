import {
  type Environment,
  ProductFields,
  conflict,
  detailsFromZodIssues,
  notFound,
  validationError,
} from '@billing/contracts';
import type { ProductEvent, ProductState } from './product';

export type ProductChanges = Partial<ProductFields> & { active?: boolean };

export type CreateProduct = {
  type: 'CreateProduct';
  data: {
    productId: string;
    organization: string;
    environment: Environment;
    fields: ProductFields;
    now: Date;
  };
};

export type UpdateProduct = {
  type: 'UpdateProduct';
  data: {
    productId: string;
    /** The caller's organization: another organization's product is absent to it. */
    organization: string;
    changes: ProductChanges;
    now: Date;
  };
};

export type ProductCommand = CreateProduct | UpdateProduct;

export function decide(command: ProductCommand, state: ProductState): ProductEvent[] {
  switch (command.type) {
    case 'CreateProduct':
      return create(command, state);
    case 'UpdateProduct':
      return update(command, state);
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

function create({ data }: CreateProduct, state: ProductState): ProductEvent[] {
  if (state.status !== 'Empty') throw conflict(`Product ${data.productId} already exists`);
  const fields = checked(data.fields);
  return [
    {
      type: 'ProductCreated',
      data: {
        product_id: data.productId,
        organization: data.organization,
        environment: data.environment,
        ...fields,
        created_at: data.now.toISOString(),
      },
    },
  ];
}

function update({ data }: UpdateProduct, state: ProductState): ProductEvent[] {
  if (state.status === 'Empty' || state.product.organization !== data.organization) {
    throw notFound(`No such product: ${data.productId}`);
  }
  const { active, ...requested } = data.changes;
  const changes = changedFields(state.product, requested);
  // The rules between fields hold for the product as it would be, not for the request alone.
  if (Object.keys(changes).length > 0) checked({ ...fieldsOf(state.product), ...changes });

  const at = data.now.toISOString();
  const events: ProductEvent[] = [];
  if (Object.keys(changes).length > 0) {
    events.push({ type: 'ProductUpdated', data: { product_id: data.productId, changes, updated_at: at } });
  }
  if (active === false && state.status === 'Active') {
    events.push({ type: 'ProductArchived', data: { product_id: data.productId, archived_at: at } });
  }
  if (active === true && state.status === 'Archived') {
    events.push({ type: 'ProductRestored', data: { product_id: data.productId, restored_at: at } });
  }
  return events;
}

/** Every product rule, per field and between fields; a violation is a 422 with its paths. */
function checked(fields: ProductFields): ProductFields {
  const result = ProductFields.safeParse(fields);
  if (!result.success) throw validationError(detailsFromZodIssues(result.error.issues));
  return result.data;
}

const FIELD_NAMES = Object.keys(ProductFields.shape) as Array<keyof ProductFields>;

function fieldsOf(product: ProductFields): ProductFields {
  return Object.fromEntries(FIELD_NAMES.map((name) => [name, product[name]])) as ProductFields;
}

/** Only what differs from the current product, so that an update records real changes. */
function changedFields(current: ProductFields, requested: Partial<ProductFields>): Partial<ProductFields> {
  const changes: Record<string, unknown> = {};
  for (const name of FIELD_NAMES) {
    if (!(name in requested) || requested[name] === undefined) continue;
    // A field products made before it existed lack (`credits`) is null to a change.
    if (!sameValue(current[name] ?? null, requested[name])) changes[name] = requested[name];
  }
  return changes as Partial<ProductFields>;
}

/** Equal values, objects and arrays compared member by member (a stored document's keys come in any order). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((key) => sameValue(left[key], right[key]));
}
