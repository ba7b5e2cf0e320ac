/** What the glass companion routes share: their tag, body limit and error responses. */
import {
  BODY_ERRORS,
  errorResponses,
  GLASS_ERRORS,
  LEASE_ERRORS,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { GESTURE_BODY_BYTES } from './common.ts';

export const GLASS_TAG = 'glass companions';

/** Glass bodies: up to 64 KiB of text (more in JSON escapes: past this limit, PAYLOAD_TOO_LARGE) or a gesture. */
export const GLASS_BODY_BYTES = GESTURE_BODY_BYTES;

/** A glass route with a JSON body: client access, forwarded to the device's owner node. */
export const glassBodyGuard = () =>
  guard({ access: 'client', body: jsonBody(GLASS_BODY_BYTES), forward: true });
/** A glass route without a body. */
export const glassGuard = () => guard({ access: 'client', forward: true });

export const glassBodyErrors = () => errorResponses(SECURED_ERRORS, BODY_ERRORS, LEASE_ERRORS, GLASS_ERRORS);
export const glassErrors = () => errorResponses(SECURED_ERRORS, LEASE_ERRORS, GLASS_ERRORS);
