// Test-only start gate for racing `devicebridge` processes: loaded with `node --import`, it loads the
// CLI's modules (so every racer has paid its start-up cost), says so by creating
// `$DEVICEBRIDGE_TEST_GATE.ready-<pid>`, and then holds the process until the file named by
// DEVICEBRIDGE_TEST_GATE exists; then src/cli/bin.js runs as usual.
import { existsSync, writeFileSync } from 'node:fs';
import { register } from 'tsx/esm/api';

const gate = process.env.DEVICEBRIDGE_TEST_GATE;
if (gate) {
  register();
  await import('../../src/cli/main.ts');
  await import('../../src/releases/publish.ts');
  await import('../../src/artifacts/open-store.ts');
  await import('../../src/artifacts/s3-store.ts');
  writeFileSync(`${gate}.ready-${process.pid}`, '');
  const deadline = Date.now() + 60_000;
  while (!existsSync(gate) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
