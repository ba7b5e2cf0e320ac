package dev.devicebridge.glassagent;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.Profile;
import org.junit.Before;
import org.junit.Test;

/** MIUI/HyperOS and ColorOS refuse injection from the shell until a developer-options switch is on. */
public class OemInjectionSecurityTest {
    private AgentOnFakes agent;

    @Before
    public void freshDeviceWithTheSwitchOff() {
        assumeTrue("this build does not block injection", AgentOnFakes.profile().blocksInjection());
        agent = AgentOnFakes.fresh();
        FakeDevice.Input.setSecuritySettingOn(false);
    }

    @Test
    public void theErrorNamesTheSettingToTurnOn() throws Exception {
        String setting = AgentOnFakes.profile().oem == Profile.Oem.MIUI ? "USB debugging (Security settings)" : "Disable permission monitoring";
        for (String[] call : new String[][] {{"pointer", "\"gesture\":[{\"x\":1,\"y\":2,\"t_ms\":0}]"}, {"key", "\"chord\":\"a\""},
            {"text", "\"text\":\"a\""}}) {
            String error = agent.error(call[0], call[1]);
            assertTrue(error, error.contains(setting));
            assertTrue(error, error.contains("INJECT_EVENTS"));
        }
        assertEquals(0, FakeDevice.Input.events().size());
    }

    @Test
    public void onceTheSwitchIsOnInputWorks() throws Exception {
        FakeDevice.Input.setSecuritySettingOn(true);
        agent.ok("key", "\"chord\":\"a\"");
        assertEquals("a", FakeDevice.Input.focusedText());
    }
}
