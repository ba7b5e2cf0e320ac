/**
 * The glass a11y service's lifecycle on a simulated device, as Android runs an AccessibilityService:
 * bound while `secure enabled_accessibility_services` (":"-separated components) names it,
 * `secure accessibility_enabled` is 1, and its package is installed and declares the service with
 * BIND_ACCESSIBILITY_SERVICE; unbound as soon as any of that stops holding (settings restored,
 * package uninstalled). Binding is asynchronous on a device: the service listens on
 * `localabstract:glass-a11y` BIND_DELAY_MS after it became bindable, so a host must poll readiness.
 * Each connection gets its own protocol instance (the served tree belongs to the connection).
 *
 * Actions edit the device's screen: `set_text` replaces an editable node's text, `click` on an
 * editable node gives it the input focus — except on a Compose node, where ACTION_CLICK answers
 * success and does nothing, as on a device (a tap on its bounds does act). The `glass-a11y-unbind` fault unbinds the service until
 * the secure settings change again (the change clears the fault) or the fault is lifted; the
 * `no-active-window` fault (screen off, keyguard up) leaves it bound but without a window to serve;
 * the `a11y-policy-blocked` fault (a device admin restricting accessibility services) keeps it
 * unbound whatever the settings say.
 */
import { BIND_ACCESSIBILITY_SERVICE, resolveComponent } from '../../protocol/android/java-names.ts';
import type { SimDeviceImpl } from '../android/device.ts';
import type { PackageManager } from '../android/package-manager.ts';
import type { SettingsStore } from '../android/settings.ts';
import type { DeviceListener } from '../types.ts';
import { GlassA11yProtocol } from './a11y.ts';
import { type LineServer, lineServer } from './line-server.ts';
import { activeA11yWindow } from './ui-tree.ts';

export const GLASS_A11Y_SOCKET = 'glass-a11y';
/** Service classes the simulator runs as the glass a11y service (ours, and the test fixture's). */
export const GLASS_A11Y_SERVICE_CLASSES: ReadonlySet<string> = new Set([
  'dev.devicebridge.glassa11y.GlassAccessibilityService',
  'dev.glass.a11y.GlassAccessibilityService',
]);
/** How long after enabling the service starts listening (a real bind takes a few hundred ms). */
export const BIND_DELAY_MS = 150;

/** `pkg/.Cls` or `pkg/full.Cls` → {packageName, className}; null when not a component. */
function component(text: string): { packageName: string; className: string } | null {
  try {
    return resolveComponent(text);
  } catch {
    return null;
  }
}

export class GlassA11yService {
  readonly #device: SimDeviceImpl;
  readonly #settings: SettingsStore;
  readonly #packages: PackageManager;
  #bound: { listener: DeviceListener; server: LineServer } | null = null;
  #pending: NodeJS.Timeout | null = null;

  constructor(device: SimDeviceImpl, settings: SettingsStore, packages: PackageManager) {
    this.#device = device;
    this.#settings = settings;
    this.#packages = packages;
  }

  /** Whether the settings and packages allow the service to run now. */
  bindable(): boolean {
    if (this.#device.faults.glassA11yUnbind === true) return false;
    if (this.#device.faults.a11yPolicyBlocked === true) return false;
    if (this.#settings.get('secure', 'accessibility_enabled') !== '1') return false;
    const enabled = this.#settings.get('secure', 'enabled_accessibility_services') ?? '';
    return enabled.split(':').some((entry) => {
      const c = component(entry.trim());
      if (c === null || !GLASS_A11Y_SERVICE_CLASSES.has(c.className)) return false;
      const pkg = this.#packages.get(c.packageName);
      return (
        pkg?.services.some((s) => s.name === c.className && s.permission === BIND_ACCESSIBILITY_SERVICE) ??
        false
      );
    });
  }

  get bound(): boolean {
    return this.#bound !== null;
  }

  /** The secure settings changed: the service binds anew (lifting `glass-a11y-unbind`) if it may. */
  settingsChanged(): void {
    delete this.#device.faults.glassA11yUnbind;
    this.reconcile();
  }

  /** Bind or unbind after a settings, package or fault change. */
  reconcile(): void {
    if (!this.bindable()) {
      if (this.#pending) clearTimeout(this.#pending);
      this.#pending = null;
      this.#unbind();
      return;
    }
    if (this.#bound !== null || this.#pending !== null) return;
    this.#pending = setTimeout(() => {
      this.#pending = null;
      if (this.bindable()) this.#bind();
    }, BIND_DELAY_MS);
    this.#pending.unref?.();
  }

  #bind(): void {
    const device = this.#device;
    const server = lineServer(() => {
      const protocol = new GlassA11yProtocol({
        activeWindow: () => (device.faults.noActiveWindow === true ? null : activeA11yWindow(device.uiXml())),
        perform: (node, action, text) => {
          const done = node.enabled && (action === 'click' ? node.clickable : node.editable);
          if (!done) return false;
          device.recordInput({ type: `a11y-${action}`, class: node.className, bounds: node.bounds, text });
          // Compose: ACTION_CLICK answers success and does nothing (a tap on the bounds acts).
          if (action === 'click' && node.compose === true) return true;
          if (node.source !== undefined) {
            if (action === 'set_text') device.screen.setText(node.source, text ?? '');
            else if (node.editable) device.screen.focus(node.source);
          }
          return true;
        },
      });
      return (line) => protocol.handle(line);
    }, device.faults);
    try {
      const listener = device.listen({ abstract: GLASS_A11Y_SOCKET }, (socket) => server.accept(socket));
      this.#bound = { listener, server };
    } catch {
      server.close(); // another process holds the socket: the service does not come up
    }
  }

  #unbind(): void {
    if (this.#bound === null) return;
    this.#bound.server.close();
    this.#bound.listener.close();
    this.#bound = null;
  }

  close(): void {
    if (this.#pending) clearTimeout(this.#pending);
    this.#pending = null;
    this.#unbind();
  }
}
