import { describe, expect, it } from 'vitest';
import { isUnderRoot, normalizeS3Root, parseS3Uri, StorageUriError } from './storageUri.ts';

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
