package dev.devicebridge.glassagent;

import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.Profile;
import dev.devicebridge.glassagent.core.AgentProtocol;
import org.json.JSONObject;

/** The agent's protocol over a real {@link AndroidAgent}, on the fake device of this JVM's profile. */
final class AgentOnFakes {
    private final AgentProtocol protocol = new AgentProtocol(new AndroidAgent());
    private int id;

    /** A fresh device; on OEM builds that block injection, the security switch is on (tests that need it off say so). */
    static AgentOnFakes fresh() {
        FakeDevice.reset();
        FakeDevice.Input.setSecuritySettingOn(true);
        return new AgentOnFakes();
    }

    static Profile profile() {
        return FakeDevice.profile();
    }

    /** Sends {"id":n,"op":op,...fields} and returns the parsed reply. */
    JSONObject call(String op, String fields) throws Exception {
        int n = ++id;
        String line = "{\"id\":" + n + ",\"op\":\"" + op + "\"" + (fields.isEmpty() ? "" : "," + fields) + "}";
        JSONObject reply = new JSONObject(protocol.handle(line));
        if (reply.getLong("id") != n) throw new AssertionError("reply to another id: " + reply);
        return reply;
    }

    /** The call's reply, which must be ok:true. */
    JSONObject ok(String op, String fields) throws Exception {
        JSONObject reply = call(op, fields);
        if (!reply.optBoolean("ok")) {
            throw new AssertionError(op + " failed on profile " + profile() + ": " + reply.optString("error"));
        }
        return reply;
    }

    /** The call's error, which must be ok:false. */
    String error(String op, String fields) throws Exception {
        JSONObject reply = call(op, fields);
        if (reply.optBoolean("ok")) throw new AssertionError(op + " succeeded on profile " + profile() + ": " + reply);
        return reply.getString("error");
    }

    static String quote(String s) {
        return JSONObject.quote(s);
    }
}
