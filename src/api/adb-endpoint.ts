/** Contract of the lease's adb endpoint (remote adb through the bridge, issue 14 capability 5). */
import { z } from '@hono/zod-openapi';
import { ADB_PUBLIC_KEY_MAX_CHARS } from '../adb/adb-public-key.ts';

// The answer: its own module, free of the key parser's Node imports (the console's browser code
// takes its type from there).
export * from './adb-endpoint-result.ts';

export const AdbEndpointBodySchema = z
  .object({
    publicKey: z.string().min(1).max(ADB_PUBLIC_KEY_MAX_CHARS).openapi({
      description:
        "the client's adb public key: the text of `~/.android/adbkey.pub` (base64 of Android's RSAPublicKey, then ` user@host`)",
    }),
  })
  .strict()
  .openapi('AdbEndpointRequest');

export type AdbEndpointBody = z.infer<typeof AdbEndpointBodySchema>;
