package dev.devicebridge.glassagent;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import android.app.ActivityThread;
import android.os.Looper;
import dev.devicebridge.fakes.FakeDevice;
import java.lang.reflect.Field;
import java.util.List;
import org.junit.Before;
import org.junit.Test;

/** The app_process start-up workarounds (scrcpy's Workarounds), each best-effort. */
public class StartupWorkaroundsTest {
    @Before
    public void freshDevice() {
        FakeDevice.reset();
    }

    /** Workarounds.apply() by reflection, so that this test compiles before the class exists. */
    @SuppressWarnings("unchecked")
    private static List<String> apply() throws Exception {
        Class<?> workarounds = Class.forName("dev.devicebridge.glassagent.Workarounds");
        return (List<String>) workarounds.getDeclaredMethod("apply").invoke(null);
    }

    private static Object field(Object target, String name) throws Exception {
        Field f = target.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.get(target);
    }

    @Test
    public void preparesTheMainLooperAndAnApplicationOfTheShellPackage() throws Exception {
        assertNull(Looper.getMainLooper());
        assertNull(ActivityThread.currentApplication());
        List<String> notes = apply();
        assertNotNull(Looper.getMainLooper());
        ActivityThread thread = ActivityThread.currentActivityThread();
        assertNotNull(thread);
        assertEquals(Boolean.TRUE, field(thread, "mSystemThread"));
        assertEquals("com.android.shell", ActivityThread.currentApplication().getPackageName());
        Object bound = field(thread, "mBoundApplication");
        assertEquals("com.android.shell", ((android.content.pm.ApplicationInfo) field(bound, "appInfo")).packageName);
        if (AgentOnFakes.profile().atLeast(31)) {
            assertNotNull("ConfigurationController filled", field(thread, "mConfigurationController"));
            assertTrue(notes.toString(), notes.isEmpty());
        } else {
            assertNull(field(thread, "mConfigurationController"));
            assertEquals(notes.toString(), 1, notes.size());
            assertTrue(notes.get(0), notes.get(0).startsWith("fillConfigurationController"));
        }
    }

    @Test
    public void aWorkaroundThatFailsIsNotedAndTheOthersStillApply() throws Exception {
        Looper.prepareMainLooper();
        List<String> notes = apply();
        boolean noted = false;
        for (String note : notes) noted |= note.startsWith("prepareMainLooper");
        assertTrue(notes.toString(), noted);
        assertEquals("com.android.shell", ActivityThread.currentApplication().getPackageName());
    }

    @Test
    public void afterTheWorkaroundsInputStillWorks() throws Exception {
        apply();
        AgentOnFakes agent = AgentOnFakes.fresh();
        apply();
        agent.ok("key", "\"chord\":\"a\"");
        agent.ok("clipboard_set", "\"text\":\"b\"");
        assertEquals("b", agent.ok("clipboard_get", "").getString("text"));
    }
}
