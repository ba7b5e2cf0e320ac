/**
 * The screen of the glass a11y APK's self-test activity (the doctor types into it and reads it
 * back): one application window with a title and one empty, focused EditText, as the activity lays
 * itself out on a 1080x2400 phone (in code, no layout resources: no resource ids). Every launch shows
 * it afresh (the activity clears its field).
 */
import { writeUiXml } from './ui-xml-writer.ts';

/** Activity classes the simulator runs as the self-test screen (ours, and the test fixture's). */
export const SELF_TEST_ACTIVITY_CLASSES: ReadonlySet<string> = new Set([
  'dev.devicebridge.glassa11y.SelfTestActivity',
  'dev.glass.a11y.SelfTestActivity',
]);

/** The self-test screen of `packageName` as uiautomator XML. */
export function selfTestScreenXml(packageName: string): string {
  const full = [0, 0, 1080, 2400] as const;
  return writeUiXml([
    {
      className: 'android.widget.FrameLayout',
      packageName,
      bounds: full,
      drawingOrder: 0,
      window: { index: 0, type: 1, layer: 1, active: true, focused: true, bounds: full },
      children: [
        {
          className: 'android.widget.LinearLayout',
          packageName,
          bounds: [0, 0, 1080, 2400],
          drawingOrder: 1,
          children: [
            {
              className: 'android.widget.TextView',
              packageName,
              bounds: [48, 120, 1032, 220],
              text: 'Device Bridge self-test',
              drawingOrder: 1,
            },
            {
              className: 'android.widget.EditText',
              packageName,
              bounds: [48, 260, 1032, 400],
              text: '',
              hint: 'Device Bridge self-test field',
              clickable: true,
              focusable: true,
              focused: true,
              longClickable: true,
              drawingOrder: 2,
            },
          ],
        },
      ],
    },
  ]);
}
