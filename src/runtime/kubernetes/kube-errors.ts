/** client-node 1.x reports HTTP failures as ApiException with a numeric `code` (STACK.md). */
export function statusCodeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (error: unknown): boolean => statusCodeOf(error) === 404;
export const isAlreadyExists = (error: unknown): boolean => statusCodeOf(error) === 409;
export const isForbidden = (error: unknown): boolean => statusCodeOf(error) === 403;

/** The API server's own sentence from an ApiException's JSON Status body, or the error's message. */
export function apiServerMessageOf(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  try {
    const message = (JSON.parse(String(body)) as { message?: unknown }).message;
    if (typeof message === 'string' && message !== '') return message;
  } catch {
    // not a Status object: fall back to the exception's own message
  }
  return (error as Error).message;
}

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
