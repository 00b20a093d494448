// `eider agent`: read the configuration from the environment, run until SIGINT/SIGTERM/SIGHUP.
// First of all: sizes libuv's thread pool before anything uses it.
import './threadPool.ts';
import { agentConfigFromEnv, AgentConfigError, runAgent } from './main.ts';
import { unbuiltAgentSettings } from './config.ts';

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let config;
  try {
    config = agentConfigFromEnv(env);
  } catch (error) {
    if (error instanceof AgentConfigError) {
      process.stderr.write(`eider agent: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  const agent = await runAgent(config, { unbuilt: unbuiltAgentSettings(env) });
  const shutdown = () => {
    agent.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  // A closed terminal: stop cleanly too.
  process.once('SIGHUP', shutdown);
}

if (import.meta.main) {
  await main();
}
