/**
 * Fault specs for `devicebridge simulate --fault SPEC` (pure). One spec is one fault:
 *
 *   drop-after-bytes=N        drop the TCP connection after N bytes sent to the host (k/m suffix: KiB/MiB)
 *   latency-ms=N              add N ms before each message the device sends
 *   bandwidth=N               cap the device's sending rate at N bytes/s (k/m suffix: KiB/MiB)
 *   chunk=drop:I | duplicate:I | corrupt:I   snapshot helper output fault on chunk I (0-based)
 *   helper-crash              the helper process crashes
 *   helper-timeout            the helper never answers
 *   install-failure=CODE      every install fails with CODE (INSTALL_FAILED_[A-Z_]+)
 *   offline-after-ms=N        the device goes offline N ms after the host connected
 *   unauthorized              the device answers CNXN with AUTH and never accepts the host
 *   stall                     the link stays up but the device sends nothing until the fault is lifted
 *   glass-agent-death         the glass agent dies on its next request (no reply; one shot)
 *   glass-a11y-unbind         the glass a11y service unbinds until the secure settings change again
 *   glass-malformed           the next glass reply line (agent or a11y) is garbage (one shot)
 *   no-active-window          the screen is off / keyguard up: the a11y service answers ping but
 *                             refuses tree ("no active window")
 *   inject-blocked            the glass agent's input injection fails with INJECT_EVENTS (MIUI, HyperOS,
 *                             ColorOS without "USB debugging (Security settings)")
 *   a11y-policy-blocked       a device policy restricts accessibility services: the glass a11y
 *                             service never binds
 *   survive-hangup            processes started from a shell (the glass agent, an instrumentation)
 *                             outlive their shell, as on a real device: only a kill stops them
 *   screenrecord-limit-s=N    every screenrecord stops after N seconds (1-180), whatever its --time-limit
 *   screen-encoder-fail       the glass agent's screen encoder (ScreenMain) cannot encode: it exits 1
 *   screen-encoder-die-after-s=N   every ScreenMain crashes N seconds (1-3600) after its client connected
 *   fail-command=NAME         every run of command NAME (also `toybox NAME`; `cmd package` and
 *                             abb_exec for pm) prints `NAME: simulated failure` and exits 1
 */
import type { Faults } from './types.ts';

export class FaultSpecError extends Error {
  readonly spec: string;
  constructor(spec: string, reason: string) {
    super(`invalid --fault ${JSON.stringify(spec)}: ${reason}`);
    this.name = 'FaultSpecError';
    this.spec = spec;
  }
}

const CHUNK_ACTIONS = ['drop', 'duplicate', 'corrupt'] as const;
type ChunkAction = (typeof CHUNK_ACTIONS)[number];
const INSTALL_FAILURE = /^INSTALL_FAILED_[A-Z_]+$/;
const COMMAND_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$/;
const FLAGS = [
  'helper-crash',
  'helper-timeout',
  'unauthorized',
  'stall',
  'glass-agent-death',
  'glass-agent-deaf',
  'glass-a11y-unbind',
  'glass-malformed',
  'no-active-window',
  'survive-hangup',
  'inject-blocked',
  'a11y-policy-blocked',
  'screen-encoder-fail',
] as const;
/** Flag spec name → its `Faults` key. */
const FLAG_KEYS = {
  'helper-crash': 'helperCrash',
  'helper-timeout': 'helperTimeout',
  unauthorized: 'unauthorized',
  stall: 'stall',
  'glass-agent-death': 'glassAgentDeath',
  'glass-agent-deaf': 'glassAgentDeaf',
  'glass-a11y-unbind': 'glassA11yUnbind',
  'glass-malformed': 'glassMalformed',
  'no-active-window': 'noActiveWindow',
  'survive-hangup': 'surviveHangup',
  'inject-blocked': 'injectBlocked',
  'a11y-policy-blocked': 'a11yPolicyBlocked',
  'screen-encoder-fail': 'screenEncoderFail',
} as const satisfies Record<(typeof FLAGS)[number], keyof Faults>;
const VALUED = [
  'drop-after-bytes',
  'latency-ms',
  'bandwidth',
  'chunk',
  'install-failure',
  'offline-after-ms',
  'fail-command',
  'screenrecord-limit-s',
  'screen-encoder-die-after-s',
] as const;

/** The fault names `parseFaultSpec` accepts (for help texts). */
export const FAULT_NAMES: readonly string[] = [...VALUED, ...FLAGS];

function parseCount(spec: string, text: string, allowSuffix: boolean, min: number): number {
  const match = allowSuffix ? /^(\d{1,15})([kKmM]?)$/.exec(text) : /^(\d{1,15})$/.exec(text);
  if (match === null) {
    const shape = allowSuffix
      ? 'a non-negative integer, optionally with a k or m suffix'
      : 'a non-negative integer';
    throw new FaultSpecError(spec, `value must be ${shape}`);
  }
  const suffix = (match[2] ?? '').toLowerCase();
  const value = Number(match[1]) * (suffix === 'k' ? 1024 : suffix === 'm' ? 1024 * 1024 : 1);
  if (!Number.isSafeInteger(value)) throw new FaultSpecError(spec, 'value is too large');
  if (value < min) throw new FaultSpecError(spec, `value must be at least ${min}`);
  return value;
}

/** Parse one `--fault` value; throws `FaultSpecError` naming the spec and the rule it broke. */
export function parseFaultSpec(spec: string): Partial<Faults> {
  const trimmed = spec.trim();
  const eq = trimmed.indexOf('=');
  const name = eq < 0 ? trimmed : trimmed.slice(0, eq);
  const value = eq < 0 ? undefined : trimmed.slice(eq + 1);

  if ((FLAGS as readonly string[]).includes(name)) {
    if (value !== undefined) throw new FaultSpecError(spec, `${name} takes no value`);
    return { [FLAG_KEYS[name as (typeof FLAGS)[number]]]: true };
  }
  if (!(VALUED as readonly string[]).includes(name)) {
    throw new FaultSpecError(
      spec,
      `unknown fault ${JSON.stringify(name)} (known: ${FAULT_NAMES.join(', ')})`,
    );
  }
  if (value === undefined || value === '')
    throw new FaultSpecError(spec, `${name} needs a value (${name}=...)`);

  switch (name) {
    case 'drop-after-bytes':
      return { dropAfterBytes: parseCount(spec, value, true, 0) };
    case 'latency-ms':
      return { latencyMs: parseCount(spec, value, false, 0) };
    case 'bandwidth':
      return { bandwidthBytesPerSec: parseCount(spec, value, true, 1) };
    case 'offline-after-ms':
      return { offlineAfterMs: parseCount(spec, value, false, 0) };
    case 'screenrecord-limit-s': {
      const seconds = parseCount(spec, value, false, 1);
      if (seconds > 180) throw new FaultSpecError(spec, 'screenrecord-limit-s must be 1 to 180');
      return { screenrecordLimitS: seconds };
    }
    case 'screen-encoder-die-after-s': {
      const seconds = parseCount(spec, value, false, 1);
      if (seconds > 3600) throw new FaultSpecError(spec, 'screen-encoder-die-after-s must be 1 to 3600');
      return { screenEncoderDieAfterS: seconds };
    }
    case 'install-failure':
      if (!INSTALL_FAILURE.test(value)) {
        throw new FaultSpecError(spec, 'install-failure must match INSTALL_FAILED_[A-Z_]+');
      }
      return { installFailure: value };
    case 'fail-command':
      if (!COMMAND_NAME.test(value)) {
        throw new FaultSpecError(spec, 'fail-command takes a command name (letters, digits, _ . + -)');
      }
      return { failCommand: value };
    default: {
      const colon = value.indexOf(':');
      const action = colon < 0 ? value : value.slice(0, colon);
      if (colon < 0 || !(CHUNK_ACTIONS as readonly string[]).includes(action)) {
        throw new FaultSpecError(spec, 'chunk must be drop:I, duplicate:I or corrupt:I');
      }
      const index = parseCount(spec, value.slice(colon + 1), false, 0);
      return { chunk: { action: action as ChunkAction, index } };
    }
  }
}

/** Parse several specs (each `--fault` occurrence) into one `Faults`; later specs win. */
export function parseFaultSpecs(specs: readonly string[]): Faults {
  return mergeFaults(...specs.map(parseFaultSpec));
}

/** The `Faults` key each spec name sets (for clearing one fault by its spec name). */
export const FAULT_KEYS: Readonly<Record<string, keyof Faults>> = {
  'drop-after-bytes': 'dropAfterBytes',
  'latency-ms': 'latencyMs',
  bandwidth: 'bandwidthBytesPerSec',
  chunk: 'chunk',
  'install-failure': 'installFailure',
  'offline-after-ms': 'offlineAfterMs',
  'fail-command': 'failCommand',
  'screenrecord-limit-s': 'screenrecordLimitS',
  'screen-encoder-die-after-s': 'screenEncoderDieAfterS',
  ...FLAG_KEYS,
};

/** Merge fault sets; later ones override earlier ones key by key. Undefined values are skipped. */
export function mergeFaults(...sets: Array<Partial<Faults> | undefined>): Faults {
  const out: Faults = {};
  for (const set of sets) {
    if (set === undefined) continue;
    for (const [key, value] of Object.entries(set) as Array<[keyof Faults, unknown]>) {
      if (value !== undefined) (out as Record<string, unknown>)[key] = value;
    }
  }
  return out;
}

/** The specs that `parseFaultSpecs` turns back into `faults` (false flags are omitted). */
export function formatFaultSpecs(faults: Faults): string[] {
  const out: string[] = [];
  if (faults.dropAfterBytes !== undefined) out.push(`drop-after-bytes=${faults.dropAfterBytes}`);
  if (faults.latencyMs !== undefined) out.push(`latency-ms=${faults.latencyMs}`);
  if (faults.bandwidthBytesPerSec !== undefined) out.push(`bandwidth=${faults.bandwidthBytesPerSec}`);
  if (faults.chunk !== undefined) out.push(`chunk=${faults.chunk.action}:${faults.chunk.index}`);
  if (faults.helperCrash === true) out.push('helper-crash');
  if (faults.helperTimeout === true) out.push('helper-timeout');
  if (faults.installFailure !== undefined) out.push(`install-failure=${faults.installFailure}`);
  if (faults.offlineAfterMs !== undefined) out.push(`offline-after-ms=${faults.offlineAfterMs}`);
  if (faults.unauthorized === true) out.push('unauthorized');
  if (faults.stall === true) out.push('stall');
  for (const name of [
    'glass-agent-death',
    'glass-a11y-unbind',
    'glass-malformed',
    'no-active-window',
    'survive-hangup',
    'inject-blocked',
    'a11y-policy-blocked',
    'screen-encoder-fail',
  ] as const) {
    if (faults[FLAG_KEYS[name]] === true) out.push(name);
  }
  if (faults.screenrecordLimitS !== undefined) out.push(`screenrecord-limit-s=${faults.screenrecordLimitS}`);
  if (faults.screenEncoderDieAfterS !== undefined)
    out.push(`screen-encoder-die-after-s=${faults.screenEncoderDieAfterS}`);
  if (faults.failCommand !== undefined) out.push(`fail-command=${faults.failCommand}`);
  return out;
}
