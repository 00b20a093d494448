import { describe, expect, it } from 'vitest';
import { azureContainerUri, isUnderRoot, normalizeAzureRoot, normalizeS3Root, normalizeStorageRoot, objectPath, parseAzureUri, parseS3Uri, StorageUriError } from './storageUri.ts';

describe('storage URIs', () => {
  it('parse s3, s3a and s3n locations into bucket and key', () => {
    expect(parseS3Uri('s3://warehouse/a/b.parquet')).toEqual({ bucket: 'warehouse', key: 'a/b.parquet' });
    expect(parseS3Uri('s3a://warehouse/a/')).toEqual({ bucket: 'warehouse', key: 'a/' });
    expect(parseS3Uri('s3n://warehouse')).toEqual({ bucket: 'warehouse', key: '' });
    expect(() => parseS3Uri('gs://warehouse/a')).toThrow(StorageUriError);
    expect(() => parseS3Uri('/local/file')).toThrow(StorageUriError);
  });

  it('normalize roots to one trailing slash and refuse bad buckets and relative segments', () => {
    expect(normalizeS3Root(' s3://warehouse ')).toBe('s3://warehouse/');
    expect(normalizeS3Root('s3a://warehouse/lake//')).toBe('s3://warehouse/lake/');
    expect(() => normalizeS3Root('s3://Warehouse/')).toThrow(/bucket/);
    expect(() => normalizeS3Root('s3://warehouse/a/../b/')).toThrow(/relative/);
    expect(() => normalizeS3Root('s3://warehouse/a//b/')).toThrow(/empty/);
  });

  it('place a location under a root only strictly below it', () => {
    expect(isUnderRoot('s3://warehouse/lake/t1', 's3://warehouse/lake/')).toBe(true);
    expect(isUnderRoot('s3://warehouse/lake', 's3://warehouse/lake/')).toBe(false);
    expect(isUnderRoot('s3://warehouse/lakehouse/t1', 's3://warehouse/lake')).toBe(false);
    expect(isUnderRoot('s3://other/lake/t1', 's3://warehouse/lake/')).toBe(false);
  });
});

describe('azure storage URIs', () => {
  it('parse az:// (account from the backend) and abfss:// / wasbs:// (account in the host)', () => {
    expect(parseAzureUri('az://lake/a/b.parquet')).toEqual({ container: 'lake', key: 'a/b.parquet', account: null });
    expect(parseAzureUri('abfss://lake@acct.dfs.core.windows.net/a/')).toEqual({ container: 'lake', key: 'a/', account: 'acct' });
    expect(parseAzureUri('wasbs://lake@acct.blob.core.windows.net')).toEqual({ container: 'lake', key: '', account: 'acct' });
    expect(() => parseAzureUri('s3://lake/a')).toThrow(StorageUriError);
    expect(azureContainerUri('abfss://lake@acct.dfs.core.windows.net/a/b')).toBe('abfss://lake@acct.dfs.core.windows.net/');
  });

  it('normalize roots in the form given and place locations under them', () => {
    expect(normalizeStorageRoot(' az://lake/x// ')).toBe('az://lake/x/');
    expect(normalizeStorageRoot('abfss://lake@acct.dfs.core.windows.net')).toBe('abfss://lake@acct.dfs.core.windows.net/');
    expect(() => normalizeAzureRoot('az://Lake/x')).toThrow(/container/);
    expect(() => normalizeAzureRoot('az://lake/a/../b')).toThrow(/relative/);
    expect(isUnderRoot('az://lake/x/cat/t1', 'az://lake/x/')).toBe(true);
    expect(isUnderRoot('az://lake/xy/t1', 'az://lake/x')).toBe(false);
    expect(isUnderRoot('s3://lake/x/t1', 'az://lake/x/')).toBe(false);
    expect(objectPath('az://lake/x/a.parquet')).toBe('lake/x/a.parquet');
    expect(objectPath('s3://lake/x/a.parquet')).toBe('lake/x/a.parquet');
  });
});
