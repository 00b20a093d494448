// STS's own rules, shared by the client that asks for temporary credentials (iceberg/stsCredentials.ts, the api's
// and the catalog's checks of a backend's role_arn) and the bundled store that answers AssumeRole
// (runtime/objectStoreSts.ts), so that both hold the same line. No dependency: the store loads no AWS SDK for it.

/** AssumeRole's bounds on DurationSeconds. */
export const STS_MIN_DURATION_SECONDS = 900;
export const STS_MAX_DURATION_SECONDS = 43_200;

/**
 * An IAM role ARN: `arn:<partition>:iam::<12-digit account>:role/<optional path/><name>` (IAM's role path and name
 * characters; at most 2048 characters in all, STS's limit on RoleArn).
 */
const ROLE_ARN_PATTERN = /^arn:[a-z][a-z0-9-]{1,31}:iam::\d{12}:role\/(?:[\w+=,.@-]+\/)*[\w+=,.@-]{1,64}$/;
export const isRoleArn = (v: string) => v.length <= 2048 && ROLE_ARN_PATTERN.test(v);
