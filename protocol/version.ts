// The control-channel protocol version. Exchanged in the `auth` frame; the control plane refuses a different version
// (auth_error protocol_version_mismatch, then close with CLOSE_CODES.protocolVersionMismatch) and both sides log
// the reason. Bump it only when a frame changes in a way an older peer would misread.
export const PROTOCOL_VERSION = 1;

// WebSocket close codes (4000-4999 is the application range) so both sides can tell why a socket ended.
export const CLOSE_CODES = {
  authFailed: 4001,
  protocolVersionMismatch: 4002,
  heartbeatTimeout: 4003,
  replaced: 4004,
  shutdown: 4005,
} as const;
