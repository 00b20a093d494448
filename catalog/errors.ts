// Catalog errors as the Iceberg REST OpenAPI's ErrorModel: `{error: {message, type, code}}`, where `type` is the
// exception name clients switch on (NoSuchTableException, CommitFailedException…) and `code` the HTTP status.
export class CatalogError extends Error {
  readonly status: number;
  readonly type: string;
  constructor(status: number, type: string, message: string) {
    super(message);
    this.name = 'CatalogError';
    this.status = status;
    this.type = type;
  }
  toBody() {
    return { error: { message: this.message, type: this.type, code: this.status } };
  }
}

export const badRequest = (message: string) => new CatalogError(400, 'BadRequestException', message);
export const notAuthorized = (message: string) => new CatalogError(401, 'NotAuthorizedException', message);
export const forbidden = (message: string) => new CatalogError(403, 'ForbiddenException', message);
export const noSuchWarehouse = (name: string) => new CatalogError(404, 'NoSuchWarehouseException', `Warehouse does not exist: ${name}`);
export const noSuchNamespace = (ns: readonly string[]) =>
  new CatalogError(404, 'NoSuchNamespaceException', `Namespace does not exist: ${ns.join('.')}`);
export const noSuchTable = (ns: readonly string[], name: string) =>
  new CatalogError(404, 'NoSuchTableException', `Table does not exist: ${[...ns, name].join('.')}`);
export const alreadyExists = (what: string) => new CatalogError(409, 'AlreadyExistsException', `${what} already exists`);
export const namespaceNotEmpty = (ns: readonly string[]) =>
  new CatalogError(409, 'NamespaceNotEmptyException', `Namespace is not empty: ${ns.join('.')}`);
export const commitFailed = (message: string) => new CatalogError(409, 'CommitFailedException', message);
export const unprocessable = (message: string) => new CatalogError(422, 'UnprocessableEntityException', message);
