/** client-node 1.x reports HTTP failures as ApiException with a numeric `code` (STACK.md). */
export function statusCodeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (error: unknown): boolean => statusCodeOf(error) === 404;
export const isAlreadyExists = (error: unknown): boolean => statusCodeOf(error) === 409;

/** Runs a create; an object that already exists counts as created (deterministic names make creation idempotent). */
export async function createIdempotently(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/** Runs a create; when the object exists already (applied with kubectl, or created before a restart), reads it instead. */
export async function createOrRead<T>(create: () => Promise<T>, read: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    return read();
  }
}
