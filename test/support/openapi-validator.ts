/**
 * Checks HTTP responses against the OpenAPI document the service serves
 * (DESIGN.md: HTTP tests validate every response against it).
 */
import { OpenAPIBackend } from 'openapi-backend';
import addFormats from 'ajv-formats';

export class ResponseValidator {
  private constructor(private readonly api: OpenAPIBackend) {}

  static async fromDocument(document: unknown): Promise<ResponseValidator> {
    const api = new OpenAPIBackend({
      definition: document as never,
      quick: true,
      validate: true,
      customizeAjv: (ajv) => {
        addFormats.default(ajv);
        return ajv;
      },
    });
    await api.init();
    return new ResponseValidator(api);
  }

  /** Throws when the response does not match the documented response for the operation and status. */
  validate(method: string, path: string, status: number, body: unknown): void {
    const operation = this.api.matchOperation({ method, path, headers: {} });
    if (operation === undefined) return; // unknown paths have no documented response; their 404 is checked by the test
    const documented = operation.responses?.[String(status)];
    if (documented === undefined) {
      throw new Error(`${method} ${path} answered ${status}, which the OpenAPI document does not list for ${operation.operationId}`);
    }
    const result = this.api.validateResponse(body, operation, status);
    if (result.errors && result.errors.length > 0) {
      throw new Error(`${method} ${path} ${status} response does not match the OpenAPI document: ${JSON.stringify(result.errors)}`);
    }
  }
}
