/** The lease routes, one file per route: acquire, list, get, renew, release, and the lease-scoped helper and glass calls. */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../env.ts';
import { registerA11yAction } from './a11y-actions.ts';
import { registerA11yTree } from './a11y-tree.ts';
import { registerAcquireLease } from './acquire.ts';
import { registerAdbEndpoint } from './adb-endpoint.ts';
import { registerGetClipboard } from './clipboard-get.ts';
import { registerSetClipboard } from './clipboard-set.ts';
import { registerEnsureHelper } from './ensure.ts';
import { registerGesture } from './gestures.ts';
import { registerGetLease } from './get.ts';
import { registerPressKeys } from './keys.ts';
import { registerListLeases } from './list.ts';
import { registerPointer } from './pointer.ts';
import { registerReleaseLease } from './release.ts';
import { registerRenewLease } from './renew.ts';
import { registerScreenshot } from './screenshot.ts';
import { registerSnapshot } from './snapshot.ts';
import { registerTypeText } from './text.ts';
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
  registerGetClipboard(app);
  registerSetClipboard(app);
  registerTypeText(app);
  registerPressKeys(app);
  registerPointer(app);
  registerA11yTree(app);
  registerA11yAction(app);
  registerScreenshot(app);
  registerAdbEndpoint(app);
}
