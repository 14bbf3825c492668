import { loadSettings } from '../config/settings.js';
import { composeVigil } from '../main/composition-root.js';
import { limitHeapGrowth } from '../main/heap-growth.js';
import { lockDataDir } from '../store/data-dir-lock.js';
import { createLogger } from '../observability/logger.js';
import { firstKeyBanner } from './first-key-banner.js';

export async function runServe(): Promise<number> {
  const heapGrowingPercent = limitHeapGrowth();
  const settings = loadSettings();
  // Before the database is opened: a second server on the directory stops here (DataDirInUseError, exit 1).
  const lock = lockDataDir(settings.dataDir);
  const logger = createLogger(settings.logLevel);
  let vigil: ReturnType<typeof composeVigil>;
  try {
    vigil = composeVigil(settings, logger);
  } catch (error) {
    lock.release();
    throw error;
  }
  const { createdKey } = vigil.accounts.bootstrap(settings.bootstrapApiKey, settings.namespace);
  const server = await vigil.listen();
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : settings.port;
  logger.info(
    { host: settings.host, port, runtime: settings.runtime, data_dir: settings.dataDir, heap_growing_percent: heapGrowingPercent },
    'vigil listening',
  );
  // After the start-up lines, so that it is the last thing on the screen, not lost among them.
  if (createdKey !== undefined) process.stderr.write(firstKeyBanner(createdKey, `${settings.publicUrl}/dashboard`));

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      vigil.close().then(
        () => {
          lock.release();
          logger.info('stopped');
          resolve(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
