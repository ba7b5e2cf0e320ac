/**
 * What opening a lease's adb endpoint answers. Apart from the request (adb-endpoint.ts, which
 * re-exports this) because that one's key limit comes with the key parser's Node imports: the
 * console's browser code takes this type from here and is typechecked without Node's types.
 */
import { z } from '@hono/zod-openapi';

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

export type AdbEndpoint = z.infer<typeof AdbEndpointSchema>;
