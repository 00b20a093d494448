import { describe, expect, it } from 'vitest';
import { agentConfigFromEnv, AgentConfigError } from './config.ts';

const required = { CONTROL_PLANE_URL: 'ws://api:8000/agents/connect', BOOTSTRAP_TOKEN: 'tok', AGENT_DATA_DIR: '/var/lib/eider-agent' };

function errorOf(env: Record<string, string>): AgentConfigError {
  try {
    agentConfigFromEnv(env);
  } catch (error) {
    if (error instanceof AgentConfigError) return error;
    throw error;
  }
  throw new Error('expected a configuration error');
}

describe('agentConfigFromEnv', () => {
  it('applies the spec defaults', () => {
    const c = agentConfigFromEnv(required);
    expect(c).toMatchObject({
      controlPlaneUrls: ['ws://api:8000/agents/connect'], bootstrapToken: 'tok', dataDir: '/var/lib/eider-agent',
      resultsDir: '/var/lib/eider-agent/results', resultsHttpPort: 8001, memoryHeadroomFraction: 0.1,
      maxConcurrencyProfile: 'auto', profilingEnabled: true, sessionBaselineBytes: 67108864, sessionMaxBucketFraction: 0.333,
      sandboxDisabledFilesystems: [], sandboxLockConfiguration: true, estimateSafetyMultiplier: 1.5,
      estimateFloorBytes: 64 * 2 ** 20, estimateCeilingFraction: 1, explainTimeoutS: 2, estimateFallbackBucket: 'M',
      grantFeedbackEnabled: true, grantFeedbackSafetyMultiplier: 1.5, elasticCeilingFraction: 0.85,
      statementAdmissionWaitS: 300, statementAdmissionFloorFraction: 0.5, maxQueueDepth: 100, queuedTimeoutS: 0,
      sessionQueuedTimeoutS: 30, maxTimeoutS: 600, resultRetentionHours: 24,
    });
  });

  it('reads every variable it is given', () => {
    const c = agentConfigFromEnv({
      ...required, RESULTS_DIR: '/r', RESULTS_HTTP_PORT: '0', MAX_CONCURRENCY_PROFILE: 'decaying_3', PROFILING_ENABLED: 'false',
      SESSION_BASELINE_BYTES: '32MiB', SANDBOX_DISABLED_FILESYSTEMS: 'HTTPFileSystem, S3FileSystem  LocalFileSystem',
      SANDBOX_LOCK_CONFIGURATION: '0', ESTIMATE_FLOOR_BYTES: '1048576', ESTIMATE_FALLBACK_BUCKET: 'XL', QUEUED_TIMEOUT_S: '2.5',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318', OTEL_SERVICE_NAME: 'agent-7',
    });
    expect(c).toMatchObject({
      resultsDir: '/r', resultsHttpPort: 0, maxConcurrencyProfile: 'decaying_3', profilingEnabled: false,
      sessionBaselineBytes: 32 * 2 ** 20, sandboxDisabledFilesystems: ['HTTPFileSystem', 'S3FileSystem', 'LocalFileSystem'],
      sandboxLockConfiguration: false, estimateFloorBytes: 1048576, estimateFallbackBucket: 'XL', queuedTimeoutS: 2.5,
      otelExporterOtlpEndpoint: 'http://otel:4318', otelServiceName: 'agent-7',
    });
  });

  it('reads a comma-separated list of control-plane replicas in order', () => {
    const c = agentConfigFromEnv({ ...required, CONTROL_PLANE_URL: 'ws://a:8000/agents/connect, ws://b:8001/agents/connect' });
    expect(c.controlPlaneUrls).toEqual(['ws://a:8000/agents/connect', 'ws://b:8001/agents/connect']);
  });

  it('names the variable in one line for a missing or bad value', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ ...required, CONTROL_PLANE_URL: '' }, 'CONTROL_PLANE_URL'],
      [{ ...required, CONTROL_PLANE_URL: 'http://api:8000' }, 'CONTROL_PLANE_URL'],
      [{ ...required, CONTROL_PLANE_URL: 'ws://a:8000/agents/connect,http://b:8001' }, 'CONTROL_PLANE_URL'],
      [{ CONTROL_PLANE_URL: required.CONTROL_PLANE_URL }, 'BOOTSTRAP_TOKEN'],
      [{ ...required, RESULTS_HTTP_PORT: '70000' }, 'RESULTS_HTTP_PORT'],
      [{ ...required, MEMORY_HEADROOM_FRACTION: '1' }, 'MEMORY_HEADROOM_FRACTION'],
      [{ ...required, MAX_CONCURRENCY_PROFILE: 'double' }, 'MAX_CONCURRENCY_PROFILE'],
      [{ ...required, PROFILING_ENABLED: 'maybe' }, 'PROFILING_ENABLED'],
      // Only the documented boolean forms (true/false, 1/0): `yes` is refused, not read as true.
      [{ ...required, PROFILING_ENABLED: 'yes' }, 'PROFILING_ENABLED'],
      [{ ...required, SANDBOX_LOCK_CONFIGURATION: 'off' }, 'SANDBOX_LOCK_CONFIGURATION'],
      [{ ...required, MAX_QUEUE_DEPTH: '1.5' }, 'MAX_QUEUE_DEPTH'],
      [{ ...required, ESTIMATE_SAFETY_MULTIPLIER: '0.5' }, 'ESTIMATE_SAFETY_MULTIPLIER'],
      [{ ...required, ESTIMATE_FLOOR_BYTES: 'lots' }, 'ESTIMATE_FLOOR_BYTES'],
      [{ ...required, EXPLAIN_TIMEOUT_S: '0' }, 'EXPLAIN_TIMEOUT_S'],
      [{ ...required, STATEMENT_ADMISSION_WAIT_S: '-1' }, 'STATEMENT_ADMISSION_WAIT_S'],
      [{ ...required, RESULT_RETENTION_HOURS: 'NaN' }, 'RESULT_RETENTION_HOURS'],
      [{ ...required, OTEL_EXPORTER_OTLP_ENDPOINT: 'otel:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    ];
    for (const [env, variable] of cases) {
      const error = errorOf(env);
      expect(error.variable).toBe(variable);
      expect(error.message).toContain(variable);
      expect(error.message).not.toContain('\n');
    }
  });
});
