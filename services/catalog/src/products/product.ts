import type {
  Environment,
  ProductArchivedData,
  ProductCreatedData,
  ProductFields,
  ProductRestoredData,
  ProductUpdatedData,
} from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export const productStream = (productId: string) => `product-${productId}`;

export type ProductCreated = { type: 'ProductCreated'; data: ProductCreatedData };
export type ProductUpdated = { type: 'ProductUpdated'; data: ProductUpdatedData };
export type ProductArchived = { type: 'ProductArchived'; data: ProductArchivedData };
export type ProductRestored = { type: 'ProductRestored'; data: ProductRestoredData };

export type ProductEvent = ProductCreated | ProductUpdated | ProductArchived | ProductRestored;

/** A `product-<id>` stream holds only product events, upcast to their current shape by the store. */
export const productEvents = streamEvents<ProductEvent>({
  ProductCreated: true,
  ProductUpdated: true,
  ProductArchived: true,
  ProductRestored: true,
});

/** A product as the catalog knows it; whether it is active is the state's `status`. */
export type Product = ProductFields & {
  id: string;
  organization: string;
  environment: Environment;
  created_at: string;
  updated_at: string;
};

export type ProductState =
  { status: 'Empty' } | { status: 'Active'; product: Product } | { status: 'Archived'; product: Product };

export const initialState = (): ProductState => ({ status: 'Empty' });

export function evolve(state: ProductState, event: ProductEvent): ProductState {
  switch (event.type) {
    case 'ProductCreated': {
      const { product_id, ...product } = event.data;
      return { status: 'Active', product: { id: product_id, ...product, updated_at: product.created_at } };
    }
    case 'ProductUpdated':
      if (state.status === 'Empty') return state;
      return {
        status: state.status,
        product: { ...state.product, ...event.data.changes, updated_at: event.data.updated_at },
      };
    case 'ProductArchived':
      if (state.status === 'Empty') return state;
      return { status: 'Archived', product: { ...state.product, updated_at: event.data.archived_at } };
    case 'ProductRestored':
      if (state.status === 'Empty') return state;
      return { status: 'Active', product: { ...state.product, updated_at: event.data.restored_at } };
    default: {
      // Compile-time exhaustiveness; at run time an unknown (newer) event type leaves the state alone.
      const _unknown: never = event;
      return state;
    }
  }
}
