/* Fake of frameworks/base/core/java/android/os/Bundle.java (and BaseBundle) @ android-14.0.0_r1: a map with the typed accessors the adapters use. */
package android.os;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

public final class Bundle {
    private final Map<String, Object> map = new LinkedHashMap<String, Object>();

    public Bundle() {}

    public Set<String> keySet() {
        return map.keySet();
    }

    public Object get(String key) {
        return map.get(key);
    }

    public boolean containsKey(String key) {
        return map.containsKey(key);
    }

    public void putString(String key, String value) {
        map.put(key, value);
    }

    public String getString(String key) {
        Object v = map.get(key);
        return v instanceof String ? (String) v : null;
    }

    public void putCharSequence(String key, CharSequence value) {
        map.put(key, value);
    }

    public CharSequence getCharSequence(String key) {
        Object v = map.get(key);
        return v instanceof CharSequence ? (CharSequence) v : null;
    }

    public void putAll(Bundle other) {
        map.putAll(other.map);
    }

    public int size() {
        return map.size();
    }

    @Override
    public String toString() {
        return "Bundle" + map;
    }
}
