/**
 * What a farm decides about the reset between tenants: where the shell user's files are looked for,
 * which folders, packages, settings and processes are the farm's own (left alone). Read from a JSON
 * file (`DEVICEBRIDGE_RESET_POLICY`); every field is optional and the defaults are the safe ones:
 * everything a tenant can change through adb is scanned and put back.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { BridgeError } from '../errors.ts';
import { isJavaPackageName } from '../protocol/android/java-names.ts';
import { parseStrictJson } from '../strict-json.ts';

export interface ResetPolicy {
  /** Folders scanned for files the tenant left (recursively). */
  roots: string[];
  /** Folders under the roots the reset leaves alone (neither recorded nor removed). */
  leaveAlone: string[];
  /** Settings the farm manages, as `table:key` (`table:prefix*` for a family); never restored. */
  managedSettings: string[];
  /** Packages the farm manages (beyond the baseline): never uninstalled, their updates accepted. */
  keepPackages: string[];
  /** Shell-user processes the farm runs, as regular expressions over their command line. */
  keepProcesses: string[];
}

/**
 * The defaults: the shell user's writable places on every Android version, `/sdcard/Android`
 * left alone (apps' own data, removed with the app; not listable by the shell user on 11+), and the
 * settings Android rewrites by itself while a device sits idle.
 */
export const DEFAULT_RESET_POLICY: ResetPolicy = {
  roots: ['/data/local/tmp', '/sdcard'],
  leaveAlone: ['/sdcard/Android'],
  managedSettings: [
    'global:boot_count',
    'global:wifi_scan_throttle_enabled',
    'secure:bluetooth_address',
    'system:screen_brightness',
  ],
  keepPackages: [],
  keepProcesses: [],
};

const PATH = z
  .string()
  .regex(/^\/[^\0\n\r]*$/, 'must be an absolute path without NUL or line breaks')
  .max(512)
  .refine((p) => !p.split('/').includes('..'), 'must not contain ..')
  .transform((p) => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p));
const SETTING = z
  .string()
  .regex(
    /^(global|secure|system):[A-Za-z0-9_.:-]+\*?$/,
    'must be table:key (table global, secure or system), optionally ending in *',
  );
const PACKAGE = z.string().refine((p) => isJavaPackageName(p), 'must be a Java package name');
const REGEX = z
  .string()
  .min(1)
  .max(256)
  .refine((r) => {
    try {
      new RegExp(r);
      return true;
    } catch {
      return false;
    }
  }, 'must be a regular expression');

const ResetPolicySchema = z
  .object({
    roots: z.array(PATH).min(1).max(32).optional(),
    leaveAlone: z.array(PATH).max(256).optional(),
    managedSettings: z.array(SETTING).max(1024).optional(),
    keepPackages: z.array(PACKAGE).max(1024).optional(),
    keepProcesses: z.array(REGEX).max(64).optional(),
  })
  .strict();

/** A policy from parsed JSON (fields absent take the defaults); INVALID_ARGUMENT naming the field. */
export function parseResetPolicy(value: unknown, source = 'reset policy'): ResetPolicy {
  const parsed = ResetPolicySchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.join('.') || '(root)';
    throw new BridgeError('INVALID_ARGUMENT', `${source}: ${path}: ${issue.message}`, {
      details: { errors: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
    });
  }
  const p = parsed.data;
  return {
    roots: p.roots ?? DEFAULT_RESET_POLICY.roots,
    leaveAlone: p.leaveAlone ?? DEFAULT_RESET_POLICY.leaveAlone,
    managedSettings: p.managedSettings ?? DEFAULT_RESET_POLICY.managedSettings,
    keepPackages: p.keepPackages ?? DEFAULT_RESET_POLICY.keepPackages,
    keepProcesses: p.keepProcesses ?? DEFAULT_RESET_POLICY.keepProcesses,
  };
}

/** Read a policy file (strict JSON); INVALID_ARGUMENT naming the file and the field. */
export function readResetPolicyFile(path: string): ResetPolicy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new BridgeError('INVALID_ARGUMENT', `reset policy ${path}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (err) {
    throw new BridgeError('INVALID_ARGUMENT', `reset policy ${path}: not JSON: ${(err as Error).message}`);
  }
  return parseResetPolicy(value, `reset policy ${path}`);
}
