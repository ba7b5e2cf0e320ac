/**
 * `devicebridge whoami [--json]`: who the configured token is and what it may do, from
 * `GET /v1/whoami`. Human output is one `key: value` line each (`capabilities: shell, adb`, or
 * `none`); `--json` prints the answer, `{"name","tenant","role","capabilities":[…]}`.
 * Exit codes: 0 ok, 1 failure reported by the bridge (401 for a missing or unknown token).
 */
import type { Command } from 'commander';
import { type ClientFlags, client, common, run } from './lease.ts';

export function registerWhoami(program: Command): void {
  common(program.command('whoami'))
    .description('Who your token is (name, tenant, role) and what it may do (its capabilities)')
    .action(async (opts: ClientFlags) => {
      const c = await client(opts);
      await run(
        opts,
        () => c.whoami(),
        (me) =>
          [
            `name: ${me.name}`,
            `tenant: ${me.tenant}`,
            `role: ${me.role}`,
            `capabilities: ${me.capabilities.length === 0 ? 'none' : me.capabilities.join(', ')}`,
          ].join('\n'),
      );
    });
}
