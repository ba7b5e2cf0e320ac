/** Contract of the lease's adb endpoint (remote adb through the bridge, issue 14 capability 5). */
import { z } from '@hono/zod-openapi';
import { ADB_PUBLIC_KEY_MAX_CHARS } from '../adb/adb-public-key.ts';

export const AdbEndpointBodySchema = z
  .object({
    publicKey: z.string().min(1).max(ADB_PUBLIC_KEY_MAX_CHARS).openapi({
      description:
        "the client's adb public key: the text of `~/.android/adbkey.pub` (base64 of Android's RSAPublicKey, then ` user@host`)",
    }),
  })
  .strict()
  .openapi('AdbEndpointRequest');

export const AdbEndpointSchema = z
  .object({
    endpoint: z
      .string()
      .openapi({ description: 'what to `adb connect` (`host:port`)', example: '127.0.0.1:7201' }),
    host: z.string(),
    port: z.number().int(),
    serial: z
      .string()
      .openapi({ description: 'the serial the client adb shows for the device (the endpoint)' }),
    keyFingerprint: z
      .string()
      .openapi({ description: '`sha256:` of the registered key; only it is accepted' }),
    leaseId: z.string(),
    deviceId: z.string(),
  })
  .openapi('AdbEndpoint');

export type AdbEndpointBody = z.infer<typeof AdbEndpointBodySchema>;
export type AdbEndpoint = z.infer<typeof AdbEndpointSchema>;
