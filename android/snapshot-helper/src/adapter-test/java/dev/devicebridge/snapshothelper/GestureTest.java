package dev.devicebridge.snapshothelper;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import android.view.InputDevice;
import android.view.MotionEvent;
import dev.devicebridge.fakes.FakeDevice;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.Before;
import org.junit.Test;

/** Gesture mode through UiAutomation.injectInputEvent on the fake input dispatcher. */
public class GestureTest {
    private static final String SWIPE = "{\"kind\":\"swipe\",\"durationMs\":40,\"pointers\":[{\"pointerId\":0,\"samples\":["
            + "{\"offsetMs\":0,\"x\":100,\"y\":500},{\"offsetMs\":20,\"x\":100,\"y\":700},{\"offsetMs\":40,\"x\":100,\"y\":900}]}]}";

    @Before
    public void freshDevice() {
        HelperOnFakes.fresh();
    }

    private static String payload() {
        return Base64.getEncoder().encodeToString(SWIPE.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    public void pointerEventsComeFromAFingerOnTheTouchscreen() throws Exception {
        HelperOnFakes.Run run = HelperOnFakes.oneShot("mode", "gesture", "payloadBase64", payload()).ok();
        List<MotionEvent> events = FakeDevice.Input.motionEvents();
        assertEquals(run.get("injectedEvents"), Integer.parseInt(run.get("injectedEvents")), events.size());
        assertEquals(MotionEvent.ACTION_DOWN, events.get(0).getActionMasked());
        assertEquals(MotionEvent.ACTION_UP, events.get(events.size() - 1).getActionMasked());
        for (MotionEvent e : events) {
            assertEquals(e.toString(), InputDevice.SOURCE_TOUCHSCREEN, e.getSource());
            for (int i = 0; i < e.getPointerCount(); i++) assertEquals(e.toString(), MotionEvent.TOOL_TYPE_FINGER, e.getToolType(i));
        }
    }

    @Test
    public void aRefusedInjectionNamesTheApiAndTheLevel() throws Exception {
        FakeDevice.Input.failWith(new SecurityException("Injecting input events requires the caller to have the INJECT_EVENTS permission."));
        HelperOnFakes.Run run = HelperOnFakes.oneShot("mode", "gesture", "payloadBase64", payload());
        assertEquals("false", run.get("ok"));
        assertEquals("java.lang.SecurityException", run.get("errorType"));
        String message = run.get("message");
        assertTrue(message, message.startsWith("UiAutomation.injectInputEvent failed on API " + HelperOnFakes.profile().sdk + ": "));
        assertTrue(message, message.contains("INJECT_EVENTS"));
    }

    @Test
    public void anOemSecuritySwitchThatIsOffIsAnErrorNamingTheApi() throws Exception {
        if (!HelperOnFakes.profile().blocksInjection()) return;
        FakeDevice.Input.setSecuritySettingOn(false);
        HelperOnFakes.Run run = HelperOnFakes.oneShot("mode", "gesture", "payloadBase64", payload());
        assertEquals("false", run.get("ok"));
        assertTrue(run.get("message"), run.get("message").startsWith("UiAutomation.injectInputEvent failed on API "));
    }
}
