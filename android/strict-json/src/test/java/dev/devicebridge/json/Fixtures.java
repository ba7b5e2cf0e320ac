package dev.devicebridge.json;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;
import org.json.JSONTokener;

/**
 * The shared fixtures under test/fixtures/ (the TypeScript tests run the same files): the directory
 * comes from the system property {@code fixtures} (release/test-android-jvm.sh sets it).
 */
public final class Fixtures {
    private Fixtures() {}

    public static File file(String relative) {
        String dir = System.getProperty("fixtures");
        if (dir == null) throw new IllegalStateException("-Dfixtures=<repo>/test/fixtures is not set");
        return new File(dir, relative);
    }

    public static String text(String relative) throws IOException {
        InputStream in = new FileInputStream(file(relative));
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            for (int n = in.read(buffer); n != -1; n = in.read(buffer)) out.write(buffer, 0, n);
            return new String(out.toByteArray(), "UTF-8");
        } finally {
            in.close();
        }
    }

    /** A fixture file's JSON object (read with org.json: the fixtures are plain JSON). */
    public static JSONObject json(String relative) throws Exception {
        return (JSONObject) new JSONTokener(text(relative)).nextValue();
    }

    /** The objects of an array field. */
    public static List<JSONObject> objects(JSONObject o, String key) throws Exception {
        JSONArray array = o.getJSONArray(key);
        List<JSONObject> out = new ArrayList<JSONObject>();
        for (int i = 0; i < array.length(); i++) out.add(array.getJSONObject(i));
        return out;
    }

    /**
     * Whether two JSON values are the same: objects with the same keys in the same order, arrays of
     * the same length, numbers of the same double value (1 and 1.0 alike, as in JavaScript).
     */
    public static boolean same(Object a, Object b) {
        if (a instanceof Number && b instanceof Number) {
            return ((Number) a).doubleValue() == ((Number) b).doubleValue();
        }
        if (a instanceof JSONObject && b instanceof JSONObject) {
            JSONObject x = (JSONObject) a;
            JSONObject y = (JSONObject) b;
            if (x.length() != y.length()) return false;
            Iterator<String> kx = x.keys();
            Iterator<String> ky = y.keys();
            while (kx.hasNext()) {
                String k = kx.next();
                if (!k.equals(ky.next()) || !same(x.opt(k), y.opt(k))) return false;
            }
            return true;
        }
        if (a instanceof JSONArray && b instanceof JSONArray) {
            JSONArray x = (JSONArray) a;
            JSONArray y = (JSONArray) b;
            if (x.length() != y.length()) return false;
            for (int i = 0; i < x.length(); i++) if (!same(x.opt(i), y.opt(i))) return false;
            return true;
        }
        return a == null ? b == null : a.equals(b);
    }
}
