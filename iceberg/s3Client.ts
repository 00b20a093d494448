// The S3 client settings every Eider component needs to talk to the bundled store or any S3-compatible server
// (engineering notes: S3-compatible servers). Shared by the catalog service, the object store's tests and the agent.
import { DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';

export interface S3ClientOptions {
  endpoint?: string;
  region?: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Path-style addressing; true by default (S3-compatible servers need it). */
  pathStyle?: boolean;
  /** The SDK's attempts per request (3 by default). */
  maxAttempts?: number;
}

/** An S3 client with the settings S3-compatible servers need (see engineering notes: S3-compatible servers). */
export function makeS3Client(opts: S3ClientOptions): S3Client {
  const client = new S3Client({
    endpoint: opts.endpoint || undefined,
    region: opts.region || 'us-east-1',
    forcePathStyle: opts.pathStyle ?? true,
    ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}),
    credentials: {
      accessKeyId: opts.accessKeyId,
      secretAccessKey: opts.secretAccessKey,
      ...(opts.sessionToken ? { sessionToken: opts.sessionToken } : {}),
    },
    // Default checksums send aws-chunked bodies that s3rver mis-stores.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  // The SDK signs bucket-level paths as `/bucket/`, s3rver verifies `/bucket`: strip the slash before signing.
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { path?: string };
      if (request && typeof request.path === 'string' && /^\/[^/]+\/$/.test(request.path)) {
        request.path = request.path.slice(0, -1);
      }
      return next(args);
    },
    { step: 'build', name: 'eiderStripBucketSlash' },
  );
  return client;
}

/** Deletes every object under `prefix` (a key prefix ending with `/`) of `bucket`; returns how many. Throws when the store
 *  refused some (a caller that must finish, such as a durable effect, tries again). */
export async function deletePrefix(client: S3Client, bucket: string, prefix: string): Promise<number> {
  let deleted = 0;
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
    if (keys.length) {
      // Quiet answers name only the keys that failed; a partial delete must not count as done.
      const out = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
      const failed = out.Errors ?? [];
      if (failed.length) throw new Error(`could not delete ${failed.length} of ${keys.length} objects under s3://${bucket}/${prefix} (${failed[0].Code ?? 'error'}: ${failed[0].Key})`);
      deleted += keys.length;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return deleted;
}
