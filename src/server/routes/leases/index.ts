/** The lease routes, one file per route: acquire, list, get, renew, release, and the lease-scoped helper calls. */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../env.ts';
import { registerAcquireLease } from './acquire.ts';
import { registerAppActions } from './app-action.ts';
import { registerInstallApp } from './apps-install.ts';
import { registerListApps } from './apps-list.ts';
import { registerEnsureHelper } from './ensure.ts';
import { registerGesture } from './gestures.ts';
import { registerGetLease } from './get.ts';
import { registerListLeases } from './list.ts';
import { registerLogcat } from './logcat.ts';
import { registerReleaseLease } from './release.ts';
import { registerRenewLease } from './renew.ts';
import { registerShell } from './shell.ts';
import { registerSnapshot } from './snapshot.ts';
import { registerViewport } from './viewport.ts';

export function registerLeases(app: OpenAPIHono<AppEnv>): void {
  registerAcquireLease(app);
  registerListLeases(app);
  registerGetLease(app);
  registerRenewLease(app);
  registerReleaseLease(app);
  registerEnsureHelper(app);
  registerSnapshot(app);
  registerViewport(app);
  registerGesture(app);
  registerShell(app);
  registerInstallApp(app);
  registerListApps(app);
  registerAppActions(app);
  registerLogcat(app);
}
