package dev.devicebridge.snapshothelper.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An ordered set of string key/value pairs: what the helper puts into an instrumentation status or
 * result Bundle, or into a session response's header block. A key put twice keeps its first place
 * and its last value, like a Bundle.
 */
public final class Fields {
    private final LinkedHashMap<String, String> map = new LinkedHashMap<String, String>();

    public Fields put(String key, String value) {
        map.put(key, value);
        return this;
    }

    public Fields put(String key, long value) {
        return put(key, Long.toString(value));
    }

    public Fields put(String key, boolean value) {
        return put(key, value ? "true" : "false");
    }

    public Fields putAll(Fields other) {
        map.putAll(other.map);
        return this;
    }

    public String get(String key) {
        return map.get(key);
    }

    public int size() {
        return map.size();
    }

    /** Keys in insertion order. */
    public List<String> keys() {
        return new ArrayList<String>(map.keySet());
    }

    /** Keys in String order: how `am instrument` prints a Bundle, and how session headers are written. */
    public List<String> sortedKeys() {
        List<String> keys = keys();
        Collections.sort(keys);
        return keys;
    }

    public Map<String, String> asMap() {
        return Collections.unmodifiableMap(map);
    }

    @Override
    public String toString() {
        return map.toString();
    }
}
