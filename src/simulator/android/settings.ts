/** The `settings` provider's three tables with realistic defaults. */

export type SettingsNamespace = 'system' | 'secure' | 'global';

export const SETTINGS_NAMESPACES: readonly SettingsNamespace[] = ['system', 'secure', 'global'];

export function isSettingsNamespace(value: string): value is SettingsNamespace {
  return (SETTINGS_NAMESPACES as readonly string[]).includes(value);
}

export class SettingsStore {
  readonly #tables: Record<SettingsNamespace, Map<string, string>>;
  /** Called after every put and delete (the a11y manager binds what `enabled_accessibility_services` names). */
  onChange: (namespace: SettingsNamespace, key: string) => void = () => undefined;

  constructor(androidId: string) {
    this.#tables = {
      global: new Map(
        Object.entries({
          adb_enabled: '1',
          airplane_mode_on: '0',
          animator_duration_scale: '1.0',
          auto_time: '1',
          auto_time_zone: '1',
          boot_count: '1',
          development_settings_enabled: '1',
          device_name: 'DeviceBridge Sim',
          device_provisioned: '1',
          mobile_data: '1',
          package_verifier_user_consent: '-1',
          stay_on_while_plugged_in: '0',
          transition_animation_scale: '1.0',
          verifier_verify_adb_installs: '0',
          wifi_on: '1',
          window_animation_scale: '1.0',
        }),
      ),
      secure: new Map(
        Object.entries({
          accessibility_enabled: '0',
          android_id: androidId,
          default_input_method: 'com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME',
          enabled_input_methods:
            'com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME',
          immersive_mode_confirmations: 'confirmed',
          location_mode: '3',
          show_ime_with_hard_keyboard: '0',
          skip_first_use_hints: '1',
          touch_exploration_enabled: '0',
          user_setup_complete: '1',
        }),
      ),
      system: new Map(
        Object.entries({
          accelerometer_rotation: '1',
          dim_screen: '1',
          font_scale: '1.0',
          haptic_feedback_enabled: '1',
          screen_brightness: '102',
          screen_brightness_mode: '0',
          screen_off_timeout: '60000',
          sound_effects_enabled: '1',
          user_rotation: '0',
        }),
      ),
    };
  }

  get(namespace: SettingsNamespace, key: string): string | undefined {
    return this.#tables[namespace].get(key);
  }

  put(namespace: SettingsNamespace, key: string, value: string): void {
    this.#tables[namespace].set(key, value);
    this.onChange(namespace, key);
  }

  /** Returns whether a row was deleted. */
  delete(namespace: SettingsNamespace, key: string): boolean {
    const deleted = this.#tables[namespace].delete(key);
    if (deleted) this.onChange(namespace, key);
    return deleted;
  }

  list(namespace: SettingsNamespace): Array<[string, string]> {
    return [...this.#tables[namespace].entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}
