// `npm run demo-model`: the offline demo model in the foreground, on PORT (default 3001), HOST as
// the services read it. It lives in scripts/ because scripts import demo/, never the reverse.
import { serviceEnv } from '@agentmesh/shared/settings';
import { startDemoModel } from '../demo/model/demo-model.js';
import { watchLauncher } from './watch-launcher.js';

const port = Number(process.env.PORT ?? 3001);
let host = '127.0.0.1';
try {
  host = serviceEnv(process.env).host;
  const model = await startDemoModel({ port, host });
  process.stdout.write(
    `offline demo model (scripted, not a language model) listening at ${model.url}\n` +
      `use it with MODEL_BASE_URL=${model.url}\n`,
  );
  const stop = () => void model.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  watchLauncher(stop); // `kill <npm pid>` does not reach this process (see watchLauncher)
} catch (e) {
  process.stderr.write(
    `the offline demo model could not start on ${host}:${port}: ${(e as Error).message}\n`,
  );
  process.exit(1);
}
