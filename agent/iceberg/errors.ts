// Errors raised by the Iceberg bridge. They carry the query error code the agent reports (protocol QueryErrorCode):
// catalog_error for anything the catalog service or the object store refused (credentials, missing tables, commit
// conflicts that outlived their retries), sql_error for a statement the bridge cannot carry out on Iceberg.
export type BridgeErrorCode = 'catalog_error' | 'sql_error';

export class BridgeError extends Error {
  readonly code: BridgeErrorCode;
  constructor(code: BridgeErrorCode, message: string) {
    super(message);
    this.name = 'BridgeError';
    this.code = code;
  }
}

export const catalogError = (message: string) => new BridgeError('catalog_error', message);
export const unsupported = (message: string) => new BridgeError('sql_error', `Iceberg: ${message}`);
